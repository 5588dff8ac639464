// The POSIX FileSystem: write(2)/pread(2), fdatasync, sync_file_range,
// read-only mmap for Mapping().
#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "jigsaw/file_system.h"

namespace jigsaw {

namespace {

Status PosixError(const std::string& context, int err) {
  if (err == ENOSPC || err == EDQUOT) return Status::NoSpace(context, std::strerror(err));
  if (err == ENOENT) return Status::NotFound(context, std::strerror(err));
  return Status::IOError(context, std::strerror(err));
}

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  ~PosixWritableFile() override {
    if (fd_ >= 0) ::close(fd_);
  }
  Status Append(const Slice& data) override {
    const char* p = data.data();
    size_t left = data.size();
    while (left > 0) {
      const ssize_t n = ::write(fd_, p, left);
      if (n < 0) {
        if (errno == EINTR) continue;
        return PosixError(path_, errno);
      }
      p += n;
      left -= static_cast<size_t>(n);
      size_ += static_cast<uint64_t>(n);
    }
    return Status::OK();
  }
  Status StartWriteback() override {
    if (size_ > written_back_) {
      ::sync_file_range(fd_, static_cast<off_t>(written_back_), static_cast<off_t>(size_ - written_back_),
                        SYNC_FILE_RANGE_WRITE);
      written_back_ = size_;
    }
    return Status::OK();
  }
  Status Sync() override {
    if (::fdatasync(fd_) != 0) return PosixError(path_, errno);
    return Status::OK();
  }
  Status Close() override {
    const int fd = fd_;
    fd_ = -1;
    if (fd >= 0 && ::close(fd) != 0) return PosixError(path_, errno);
    return Status::OK();
  }
  uint64_t Size() const override { return size_; }

 private:
  const std::string path_;
  int fd_;
  uint64_t size_ = 0;
  uint64_t written_back_ = 0;
};

class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  PosixRandomAccessFile(std::string path, int fd, uint64_t size) : path_(std::move(path)), fd_(fd), size_(size) {}
  ~PosixRandomAccessFile() override {
    if (mapping_ != nullptr) ::munmap(const_cast<char*>(mapping_), size_);
    ::close(fd_);
  }
  Status Read(uint64_t offset, size_t n, char* scratch, Slice* result) const override {
    size_t done = 0;
    while (done < n) {
      const ssize_t r = ::pread(fd_, scratch + done, n - done, static_cast<off_t>(offset + done));
      if (r < 0) {
        if (errno == EINTR) continue;
        return PosixError(path_, errno);
      }
      if (r == 0) break;
      done += static_cast<size_t>(r);
    }
    *result = Slice(scratch, done);
    return Status::OK();
  }
  uint64_t Size() const override { return size_; }
  const char* Mapping() override {
    if (mapping_ == nullptr && size_ > 0) {
      void* map = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd_, 0);
      if (map != MAP_FAILED) mapping_ = static_cast<const char*>(map);
    }
    return mapping_;
  }
  int fd() const override { return fd_; }

 private:
  const std::string path_;
  const int fd_;
  const uint64_t size_;
  const char* mapping_ = nullptr;
};

class PosixFileSystem final : public FileSystem {
 public:
  Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) override {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError(path, errno);
    *file = std::make_unique<PosixWritableFile>(path, fd);
    return Status::OK();
  }
  Status NewRandomAccessFile(const std::string& path, std::unique_ptr<RandomAccessFile>* file) override {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return PosixError(path, errno);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      return PosixError(path, err);
    }
    *file = std::make_unique<PosixRandomAccessFile>(path, fd, static_cast<uint64_t>(st.st_size));
    return Status::OK();
  }
  Status RemoveFile(const std::string& path) override {
    if (::unlink(path.c_str()) != 0) return PosixError(path, errno);
    return Status::OK();
  }
  Status RenameFile(const std::string& from, const std::string& to) override {
    if (::rename(from.c_str(), to.c_str()) != 0) return PosixError(from + " -> " + to, errno);
    return Status::OK();
  }
  Status GetChildren(const std::string& dir, std::vector<std::string>* names) override {
    names->clear();
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return PosixError(dir, errno);
    while (struct dirent* e = ::readdir(d)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names->emplace_back(e->d_name);
    }
    ::closedir(d);
    return Status::OK();
  }
  Status CreateDirIfMissing(const std::string& dir) override {
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return PosixError(dir, errno);
    return Status::OK();
  }
  Status SyncDir(const std::string& dir) override {
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return PosixError(dir, errno);
    const int r = ::fsync(fd);
    const int err = errno;
    ::close(fd);
    if (r != 0) return PosixError(dir, err);
    return Status::OK();
  }
  Status SyncFile(const std::string& path) override {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return PosixError(path, errno);
    const int r = ::fdatasync(fd);
    const int err = errno;
    ::close(fd);
    if (r != 0) return PosixError(path, err);
    return Status::OK();
  }
  Status GetFileSize(const std::string& path, uint64_t* size) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return PosixError(path, errno);
    *size = static_cast<uint64_t>(st.st_size);
    return Status::OK();
  }
  bool FileExists(const std::string& path) override { return ::access(path.c_str(), F_OK) == 0; }
};

}  // namespace

FileSystem* FileSystem::Default() {
  static FileSystem* fs = new PosixFileSystem();
  return fs;
}

}  // namespace jigsaw
