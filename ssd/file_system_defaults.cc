// FileSystem's default methods: LockFile (flock(2) on the POSIX file) and
// RemoveDir (rmdir(2)).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cerrno>
#include <cstring>
#include <string>

#include "jigsaw/file_system.h"
#include "util/fork_guard.h"

namespace jigsaw {

namespace {

class PosixFileLock final : public FileLock {
 public:
  explicit PosixFileLock(int fd) : fd_(fd) {}
  ~PosixFileLock() override { ::close(fd_); }  // closing the descriptor releases the flock

 private:
  const int fd_;
};

// The process id the holder wrote into the lock file, or "" if unknown.
std::string HolderOf(int fd) {
  char buffer[32] = {};
  const ssize_t n = ::pread(fd, buffer, sizeof(buffer) - 1, 0);
  if (n <= 0) return "";
  std::string pid(buffer, static_cast<size_t>(n));
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.find_first_not_of("0123456789") == std::string::npos ? pid : "";
}

// True if the lock file names a holder process that no longer exists.
bool HolderIsGone(int fd) {
  const std::string holder = HolderOf(fd);
  if (holder.empty() || holder.size() > 9) return false;
  return ::kill(static_cast<pid_t>(std::stol(holder)), 0) != 0 && errno == ESRCH;
}

}  // namespace

Status FileSystem::LockFile(const std::string& path, std::unique_ptr<FileLock>* lock) {
  lock->reset();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IOError("cannot open lock file " + path, std::strerror(errno));
  int err = LockExclusiveGuarded(fd);
  // A holder that has died may still hold the lock for an instant through
  // a child it forked (a pool inspection's, killed with it: pmem/pool.cc):
  // tried again for a while, as a pool found locked is.
  for (int attempt = 0; err == EWOULDBLOCK && attempt < kLockedRetries && HolderIsGone(fd); attempt++) {
    ::usleep(kLockedRetryMicros);
    err = LockExclusiveGuarded(fd);
  }
  if (err != 0) {
    const std::string holder = HolderOf(fd);
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return Status::IOError(path, holder.empty() ? "in use by another process or handle"
                                                  : "in use by process " + holder +
                                                        (holder == std::to_string(::getpid()) ? " (this process)" : ""));
    }
    return Status::IOError("cannot lock " + path, std::strerror(err));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    // The lock holds; only the holder's name is missing for a later conflict.
  }
  *lock = std::make_unique<PosixFileLock>(fd);
  return Status::OK();
}

Status FileSystem::RemoveDir(const std::string& dir) {
  if (::rmdir(dir.c_str()) != 0) return Status::IOError("cannot remove directory " + dir, std::strerror(errno));
  return Status::OK();
}

Status FileSystem::GetFileModificationTime(const std::string& path, uint64_t* unix_seconds) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    return err == ENOENT ? Status::NotFound(path, std::strerror(err)) : Status::IOError(path, std::strerror(err));
  }
  *unix_seconds = static_cast<uint64_t>(st.st_mtime);
  return Status::OK();
}

}  // namespace jigsaw
