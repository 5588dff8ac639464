#include "pmem/pool.h"

#include <fcntl.h>
#include <libpmem.h>
#include <libpmemobj.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sys/sysmacros.h>

#include "util/fork_guard.h"
#include "util/populate.h"

namespace jigsaw::pmem {

// The root object (docs/pool_layout.md). 256 bytes.
struct Pool::Root {
  uint64_t magic;
  uint32_t format_version;
  uint32_t flags;
  uint64_t manifest_offset;  // changed only by pmemobj_publish (Commit)
  char database_id[32];      // hex digits; all zero in a version-1 pool
  uint64_t reserved;
  char comparator_name[192];
};

namespace {

int CheckPool(const std::string& path) {
  std::lock_guard<std::mutex> guard(ForkGuard());
  return pmemobj_check(path.c_str(), Pool::kLayout);
}

constexpr uint64_t kRootMagic = 0x4C4F4F505753474AULL;  // bytes "JGSWPOOL"
constexpr uint64_t kTmpfsMagic = 0x01021994;
// The header libpmemobj puts in front of every chunk-granular object.
constexpr uint64_t kObjectHeader = 16;

PMEMobjpool* Handle(void* pop) { return static_cast<PMEMobjpool*>(pop); }

std::string PmemError() {
  const char* msg = pmemobj_errormsg();
  return msg != nullptr ? msg : "unknown libpmemobj error";
}

// The Status for a failed pmemobj_open/pmemobj_create of `path`, by errno:
// a lock held elsewhere, a read-only file system or no permission is an
// IOError (the pool may be healthy); anything else means the file is not a
// usable JigsawDB pool.
Status OpenError(const std::string& path, int err) {
  if (err == EWOULDBLOCK || err == EAGAIN) {
    return Status::IOError(path, "the pool is in use by another process or handle (locked)");
  }
  if (err == EROFS) return Status::IOError(path, "read-only file system: a pool must be writable");
  if (err == EACCES || err == EPERM) return Status::IOError(path, std::strerror(err));
  return Status::Corruption(path + " is not a JigsawDB pool", PmemError());
}

// Refuses, before libpmemobj maps it, a regular file that cannot be a pool:
// libpmemobj dies of SIGBUS on an empty file, and a file without its
// signature is not worth mapping.
Status CheckPoolFileShape(const std::string& path, const struct stat& st) {
  if (!S_ISREG(st.st_mode)) return Status::OK();
  constexpr uint64_t kSmallestPool = uint64_t{2} << 20;  // PMEMOBJ_MIN_POOL
  if (static_cast<uint64_t>(st.st_size) < kSmallestPool) {
    return Status::Corruption(path + " is not a JigsawDB pool",
                              std::to_string(st.st_size) + " bytes, smaller than any pool (2 MiB)");
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError(path, std::strerror(errno));
  char signature[8] = {};
  const ssize_t n = ::pread(fd, signature, sizeof(signature), 0);
  ::close(fd);
  if (n != static_cast<ssize_t>(sizeof(signature)) || std::memcmp(signature, "PMEMOBJ", 8) != 0) {
    return Status::Corruption(path + " is not a JigsawDB pool", "no libpmemobj pool signature");
  }
  return Status::OK();
}

std::string RootDatabaseId(const char (&id)[32]) { return std::string(id, strnlen(id, sizeof(id))); }

// Size of a device-DAX node, from sysfs; 0 if unknown.
uint64_t PoolSizeOfDevice(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  std::ifstream in("/sys/dev/char/" + std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev)) +
                   "/size");
  uint64_t size = 0;
  in >> size;
  return size;
}

// True for a device-DAX character device (/dev/daxX.Y): its sysfs node
// belongs to the "dax" subsystem.
bool IsDeviceDax(const struct stat& st) {
  if (!S_ISCHR(st.st_mode)) return false;
  std::error_code ec;
  const auto subsystem = std::filesystem::read_symlink(
      "/sys/dev/char/" + std::to_string(major(st.st_rdev)) + ":" + std::to_string(minor(st.st_rdev)) + "/subsystem",
      ec);
  return !ec && subsystem.filename() == "dax";
}

bool OnTmpfs(const std::string& path) {
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  struct statfs fs {};
  return statfs(dir.c_str(), &fs) == 0 && static_cast<uint64_t>(fs.f_type) == kTmpfsMagic;
}

// InvalidArgument if `path` (or, when it does not exist yet, a file next to
// it) cannot be mapped shared: a pool must live on a filesystem that supports
// MAP_SHARED file mappings (tmpfs, ext4/xfs with or without DAX).
Status CheckMappable(const std::string& path, bool exists) {
  std::string probe = exists ? path : path + ".mapcheck";
  const int fd = ::open(probe.c_str(), exists ? O_RDWR : (O_RDWR | O_CREAT | O_EXCL), 0600);
  if (fd < 0) return Status::OK();  // pmemobj reports the real error
  if (!exists) {
    ::unlink(probe.c_str());
    if (::ftruncate(fd, 4096) != 0) {
      ::close(fd);
      return Status::OK();
    }
  }
  void* map = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  ::close(fd);
  if (map == MAP_FAILED) {
    return Status::InvalidArgument("pmem_path", path + " is on a filesystem that cannot be memory-mapped (" +
                                                    std::strerror(err) + ")");
  }
  ::munmap(map, 4096);
  return Status::OK();
}

}  // namespace

Status Pool::CheckRoot(const Root& root, const PoolOptions& options) {
  if (root.magic != kRootMagic) return Status::Corruption(options.path, "bad root magic");
  if (root.format_version > kFormatVersion) {
    return Status::NotSupported(options.path, "pool format version " + std::to_string(root.format_version) +
                                                  " is newer than the supported version " +
                                                  std::to_string(kFormatVersion));
  }
  if (root.format_version == 0) return Status::Corruption(options.path, "pool format version 0");
  const std::string stored(root.comparator_name, strnlen(root.comparator_name, sizeof(root.comparator_name)));
  if (stored != options.comparator_name) {
    return Status::InvalidArgument("comparator mismatch",
                                   "pool uses " + stored + ", options give " + options.comparator_name);
  }
  const std::string id = RootDatabaseId(root.database_id);
  if (!id.empty() && !options.database_id.empty() && id != options.database_id) {
    return Status::InvalidArgument("pmem_path", options.path + " is the pool of database " + id +
                                                    ", not of this database (" + options.database_id + ")");
  }
  return Status::OK();
}

namespace {

// Inspect's result through the pipe: status code, has_manifest, then the
// message and the database id, each a 32-bit length and its bytes.
void AppendField(std::string* out, const std::string& field) {
  const uint32_t size = static_cast<uint32_t>(field.size());
  out->append(reinterpret_cast<const char*>(&size), sizeof(size));
  out->append(field);
}

bool ReadField(const std::string& in, size_t* pos, std::string* field) {
  uint32_t size = 0;
  if (in.size() - *pos < sizeof(size)) return false;
  std::memcpy(&size, in.data() + *pos, sizeof(size));
  *pos += sizeof(size);
  if (in.size() - *pos < size) return false;
  field->assign(in.data() + *pos, size);
  *pos += size;
  return true;
}

Status StatusOf(Status::Code code, const std::string& message) {
  switch (code) {
    case Status::Code::kOk: return Status::OK();
    case Status::Code::kNotFound: return Status::NotFound(message);
    case Status::Code::kCorruption: return Status::Corruption(message);
    case Status::Code::kNotSupported: return Status::NotSupported(message);
    case Status::Code::kInvalidArgument: return Status::InvalidArgument(message);
    case Status::Code::kNoSpace: return Status::NoSpace(message);
    default: return Status::IOError(message);
  }
}

// How long a child inspecting a pool is waited for, and how many children
// are tried. A child normally answers within milliseconds; one can also
// hang for good, on a lock another thread of the parent held at the fork
// (an allocator without fork handlers, such as the sanitizers' allocator
// of clang 14, leaves its locks held in the child). A child not answering
// in time is killed and another forked; the last resort is to look in this
// process.
constexpr std::chrono::seconds kChildAnswerTimeout(10);
constexpr int kChildAttempts = 3;

// Appends what `fd` yields to *in until `limit` bytes have been appended or
// the writer closes its end (true), or until `deadline` or a read error
// (false).
bool ReadUntil(int fd, std::chrono::steady_clock::time_point deadline, size_t limit, std::string* in) {
  char buffer[512];
  for (size_t read = 0; read < limit;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno != EINTR) return false;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fd, buffer, std::min(sizeof(buffer), limit - read));
    if (n == 0) return true;
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    in->append(buffer, static_cast<size_t>(n));
    read += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

// libpmemobj trusts the metadata of the pool it opens: a damaged lane log
// (an entry size, a capacity or a `next` offset out of bounds) makes
// pmemobj_open read outside the mapping and fault, as would other damage it
// checks no bounds for. So Inspect opens the pool in a child process, which
// sends back what it found and exits; a child killed by SIGSEGV or SIGBUS
// means the pool's own metadata is damaged: Corruption. A pool Inspect
// accepted is then opened by this process, with the same checks on the same
// bytes. The child only maps a file and reads it (glibc's malloc is usable
// after a fork in a multithreaded process; libpmemobj's locks are free in
// it, as the fork holds the fork guard), and nothing of the parent's runs
// at its exit.
bool Pool::InspectInChild(const PoolOptions& options, Facts* facts, Status* result) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return false;
  const pid_t parent = ::getpid();
  // The fork guard (util/fork_guard.h) is held until the child has closed
  // the descriptors it inherited: it tells so by its first byte.
  std::unique_lock<std::mutex> guard(ForkGuard());
  const pid_t pid = ::fork();
  if (pid < 0) {
    guard.unlock();
    ::close(fds[0]);
    ::close(fds[1]);
    return false;
  }
  if (pid == 0) {
    // Nothing of the parent's is held past its death: the child dies with
    // it, and keeps none of its descriptors (a flock on the database's LOCK
    // file is shared by a descriptor's copies).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    if (fds[1] > 3) ::close_range(3, static_cast<unsigned>(fds[1]) - 1, 0);
    ::close_range(static_cast<unsigned>(fds[1]) + 1, ~0u, 0);
    const char closed = 'c';
    while (::write(fds[1], &closed, 1) != 1) {
      if (errno != EINTR) ::_exit(1);
    }
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    sigemptyset(&default_action.sa_mask);
    ::sigaction(SIGSEGV, &default_action, nullptr);
    ::sigaction(SIGBUS, &default_action, nullptr);
    Facts found;
    const Status s = InspectHere(options, &found);
    std::string out(1, static_cast<char>(s.code()));
    out.push_back(static_cast<char>((found.has_manifest ? 1 : 0) | (found.locked ? 2 : 0)));
    AppendField(&out, s.message());
    AppendField(&out, found.database_id);
    for (size_t done = 0; done < out.size();) {
      const ssize_t n = ::write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0 && errno != EINTR) ::_exit(1);
      if (n > 0) done += static_cast<size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  const auto deadline = std::chrono::steady_clock::now() + kChildAnswerTimeout;
  std::string in;
  const bool closed = ReadUntil(fds[0], deadline, 1, &in) && in == "c";
  guard.unlock();
  const bool answered = closed && ReadUntil(fds[0], deadline, SIZE_MAX, &in);
  ::close(fds[0]);
  if (!answered) ::kill(pid, SIGKILL);
  int wstatus = 0;
  pid_t waited;
  do {
    waited = ::waitpid(pid, &wstatus, 0);
  } while (waited < 0 && errno == EINTR);
  if (waited != pid || !answered) return false;
  in.erase(0, 1);
  if (WIFSIGNALED(wstatus) && (WTERMSIG(wstatus) == SIGSEGV || WTERMSIG(wstatus) == SIGBUS)) {
    *result = Status::Corruption(options.path + " is a damaged pool",
                                 std::string("libpmemobj faulted reading its metadata (") +
                                     strsignal(WTERMSIG(wstatus)) + ")");
    return true;
  }
  size_t pos = 2;
  std::string message;
  Facts found;
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0 || in.size() < 2 ||
      !ReadField(in, &pos, &message) || !ReadField(in, &pos, &found.database_id)) {
    return false;
  }
  found.has_manifest = (in[1] & 1) != 0;
  found.locked = (in[1] & 2) != 0;
  *facts = std::move(found);
  *result = StatusOf(static_cast<Status::Code>(static_cast<unsigned char>(in[0])), message);
  return true;
}

Status Pool::Inspect(const PoolOptions& options, Facts* facts) {
  *facts = Facts();
  struct stat st {};
  if (::stat(options.path.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::NotFound(options.path);
    return Status::IOError(options.path, std::strerror(errno));
  }
  Status s = CheckPoolFileShape(options.path, st);
  if (!s.ok()) return s;
  // A pool found locked is looked at again for a while: the child of an
  // Inspect in a process that was just killed holds the pool's lock until
  // it has died too (an instant later: it is killed with its parent).
  // A child that could not tell is tried again before this process looks
  // itself.
  int children_failed = 0;
  for (int attempt = 0;; ++attempt) {
    if (!InspectInChild(options, facts, &s)) {
      if (++children_failed < kChildAttempts) continue;
      std::lock_guard<std::mutex> guard(ForkGuard());
      return InspectHere(options, facts);
    }
    if (!facts->locked || attempt == kLockedRetries) return s;
    ::usleep(kLockedRetryMicros);
  }
}

Status Pool::InspectHere(const PoolOptions& options, Facts* facts) {
  *facts = Facts();
  int enabled = 1;
  pmemobj_ctl_set(nullptr, "copy_on_write.at_open", &enabled);
  PMEMobjpool* pop = pmemobj_open(options.path.c_str(), kLayout);
  const int open_errno = errno;
  enabled = 0;
  pmemobj_ctl_set(nullptr, "copy_on_write.at_open", &enabled);
  if (pop == nullptr) {
    facts->locked = open_errno == EWOULDBLOCK || open_errno == EAGAIN;
    return OpenError(options.path, open_errno);
  }
  Status s;
  const size_t root_size = pmemobj_root_size(pop);
  if (root_size >= sizeof(Root)) {
    const Root* root = static_cast<const Root*>(pmemobj_direct(pmemobj_root(pop, sizeof(Root))));
    if (root->magic != 0 || root->manifest_offset != 0) {
      s = CheckRoot(*root, options);
      facts->database_id = RootDatabaseId(root->database_id);
      facts->has_manifest = root->manifest_offset != 0;
    }
  } else if (root_size != 0) {
    s = Status::Corruption(options.path, "root object too small for a JigsawDB pool");
  }
  pmemobj_close(pop);
  return s;
}

Status Pool::InitialiseRoot(void* pop_handle, Root* root, const PoolOptions& options) {
  PMEMobjpool* pop = Handle(pop_handle);
  PMEMoid root_oid = pmemobj_root(pop, sizeof(Root));
  if (pmemobj_tx_begin(pop, nullptr, TX_PARAM_NONE) != 0) {
    return Status::IOError("cannot start a pool transaction", PmemError());
  }
  pmemobj_tx_set_failure_behavior(POBJ_TX_FAILURE_RETURN);
  if (pmemobj_tx_add_range(root_oid, 0, sizeof(Root)) == 0) {
    std::memset(root, 0, sizeof(Root));
    root->magic = kRootMagic;
    root->format_version = kFormatVersion;
    std::memcpy(root->database_id, options.database_id.data(),
                std::min(options.database_id.size(), sizeof(root->database_id)));
    std::memcpy(root->comparator_name, options.comparator_name.data(), options.comparator_name.size());
    pmemobj_tx_commit();
  } else {
    pmemobj_tx_abort(errno);
  }
  if (pmemobj_tx_end() != 0) return Status::IOError("cannot initialise the pool root", PmemError());
  return Status::OK();
}

Status Pool::CreatePoolFile(const PoolOptions& options) {
  const std::string tmp = options.path + ".creating";
  ::unlink(tmp.c_str());  // a leftover of a creation a crash interrupted: ours by its name
  PMEMobjpool* pop;
  int err;
  std::string message;
  {
    std::lock_guard<std::mutex> guard(ForkGuard());
    // DRAM-emulated pmem has no unsafe-shutdown counter to record: the
    // setting is off for this creation only.
    int sds = 1;
    pmemobj_ctl_get(nullptr, "sds.at_create", &sds);
    const int previous = sds;
    if (OnTmpfs(options.path)) {
      sds = 0;
      pmemobj_ctl_set(nullptr, "sds.at_create", &sds);
    }
    pop = pmemobj_create(tmp.c_str(), kLayout, options.size, 0600);
    err = errno;
    if (pop == nullptr) message = PmemError();
    sds = previous;
    pmemobj_ctl_set(nullptr, "sds.at_create", &sds);
  }
  if (pop == nullptr) {
    ::unlink(tmp.c_str());
    if (err == ENOSPC) {
      return Status::NoSpace(options.path, "no room for a pool of " + std::to_string(options.size >> 20) +
                                               " MiB: " + message);
    }
    if (err == EROFS) return Status::IOError(options.path, "read-only file system: cannot create the pool");
    return Status::IOError("cannot create pool " + options.path, message);
  }
  Root* root = static_cast<Root*>(pmemobj_direct(pmemobj_root(pop, sizeof(Root))));
  Status s = root != nullptr ? InitialiseRoot(pop, root, options)
                             : Status::IOError("cannot allocate the pool root", PmemError());
  {
    std::lock_guard<std::mutex> guard(ForkGuard());
    pmemobj_close(pop);
  }
  if (s.ok() && ::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, options.path.c_str(), RENAME_NOREPLACE) != 0) {
    s = errno == EEXIST ? Status::InvalidArgument(options.path, "appeared while the pool was being created")
                        : Status::IOError("cannot rename " + tmp, std::strerror(errno));
  }
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  std::filesystem::path dir = std::filesystem::path(options.path).parent_path();
  if (dir.empty()) dir = ".";
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    (void)::fsync(dir_fd);  // the rename is durable before the database names the pool
    ::close(dir_fd);
  }
  return Status::OK();
}

Status Pool::Open(const PoolOptions& options, std::unique_ptr<Pool>* result) {
  static_assert(sizeof(Root) == 256, "the root object is part of the pool layout");
  if (options.path.empty()) return Status::InvalidArgument("pmem_path is empty");
  if (options.comparator_name.size() >= sizeof(Root::comparator_name)) {
    return Status::InvalidArgument("comparator name longer than 191 bytes");
  }
  if (options.database_id.size() > sizeof(Root::database_id)) {
    return Status::InvalidArgument("database id longer than 32 bytes");
  }
  std::unique_ptr<Pool> pool(new Pool());
  PoolFile file;
  Status s = PreparePoolFile(options, &file);
  if (!s.ok()) return s;
  pool->created_ = file.created;
  s = pool->Map(options, file);
  if (s.ok()) s = pool->LoadRoot(options);
  if (!s.ok()) return s;
  for (auto type : {ObjectType::kBlock, ObjectType::kWalSegment, ObjectType::kManifest}) {
    for (uint64_t offset : pool->Objects(type)) pool->used_bytes_ += pool->ObjectSize(offset) + kObjectHeader;
  }
  *result = std::move(pool);
  return Status::OK();
}

Status Pool::PreparePoolFile(const PoolOptions& options, PoolFile* file) {
  struct stat st {};
  bool exists = ::stat(options.path.c_str(), &st) == 0;
  file->device_dax = exists && IsDeviceDax(st);
  if (file->device_dax && options.create_if_missing && CheckPool(options.path) == -1) {
    // A device-DAX node always exists; it holds a pool only once created.
    exists = false;
  }
  if (exists && !S_ISREG(st.st_mode) && !file->device_dax) {
    return Status::InvalidArgument("pmem_path", options.path + " is neither a regular file nor a device-DAX node");
  }
  if (!file->device_dax) {
    Status s = CheckMappable(options.path, exists);
    if (!s.ok()) return s;
  }
  if (exists) {
    if (options.error_if_exists) return Status::InvalidArgument(options.path, "exists (error_if_exists is true)");
    // Inspect the pool first through a copy-on-write mapping, so that a pool
    // we refuse (newer version, other comparator or database) is left
    // byte-for-byte as it was: a normal open already updates libpmemobj's
    // own header.
    Facts facts;
    Status s = Inspect(options, &facts);
    if (!s.ok()) return s;
  } else {
    if (!options.create_if_missing) {
      return Status::InvalidArgument(options.path, "does not exist (create_if_missing is false)");
    }
    if (!file->device_dax && options.size < kMinPoolSize) {
      return Status::InvalidArgument("pmem_pool_size", "must be at least " + std::to_string(kMinPoolSize >> 20) +
                                                           " MiB");
    }
    if (!file->device_dax) {
      Status s = CreatePoolFile(options);
      if (!s.ok()) return s;
      if (::stat(options.path.c_str(), &st) != 0) return Status::IOError(options.path, std::strerror(errno));
    }
    file->created = true;
  }
  file->size = file->device_dax ? PoolSizeOfDevice(options.path) : static_cast<uint64_t>(st.st_size);
  return Status::OK();
}

Status Pool::Map(const PoolOptions& options, const PoolFile& file) {
  PMEMobjpool* pop = nullptr;
  std::unique_lock<std::mutex> guard(ForkGuard());
  if (file.device_dax && file.created) {
    // On device DAX the pool is the whole device (size 0), formatted in place.
    pop = pmemobj_create(options.path.c_str(), kLayout, 0, 0600);
    if (pop == nullptr) {
      if (errno == ENOSPC) return Status::NoSpace(options.path, PmemError());
      return Status::IOError("cannot create pool " + options.path, PmemError());
    }
  } else {
    // A forked child has copies of this process's mappings, and a pool's
    // mapping holds its flock: a pool this process created or closed an
    // instant ago may be held by the child of another thread's Inspect
    // until that child exits. So a pool found locked is tried again for a
    // while, as Inspect does.
    for (int attempt = 0;; ++attempt) {
      pop = pmemobj_open(options.path.c_str(), kLayout);
      const int err = errno;
      if (pop != nullptr) break;
      if ((err != EWOULDBLOCK && err != EAGAIN) || attempt == kLockedRetries) return OpenError(options.path, err);
      guard.unlock();
      ::usleep(kLockedRetryMicros);
      guard.lock();
    }
  }
  guard.unlock();
  pop_ = pop;
  pool_size_ = file.size;
  populated_bits_ = (pool_size_ + (256 << 10) - 1) / (256 << 10);
  populated_.reset(new std::atomic<uint64_t>[(populated_bits_ + 63) / 64]());
  pool_uuid_lo_ = pmemobj_oid(pop).pool_uuid_lo;
  // How stores are made durable: CPU cache flushes on pmem (real, or
  // emulated where asked or on tmpfs), msync otherwise.
  const bool real_pmem = pmem_is_pmem(pop, pool_size_) != 0;
  real_pmem_ = real_pmem;
  const bool tmpfs = !file.device_dax && OnTmpfs(options.path);
  bool cpu_flush = real_pmem;
  if (real_pmem) {
    persistence_ = "pmem";
  } else if (options.emulation == PmemEmulation::kForce) {
    persistence_ = "emulated pmem (forced)";
    cpu_flush = true;
  } else if (options.emulation == PmemEmulation::kAuto && tmpfs) {
    persistence_ = "emulated pmem (tmpfs)";
    cpu_flush = true;
  } else {
    persistence_ = "msync";
  }
  region_ = std::make_unique<PmemRegion>(cpu_flush);
  if (options.timing.enabled()) {
    timing_ = std::make_unique<pmem::NvmTiming>(options.timing);
    region_ = std::make_unique<pmem::TimingRegion>(std::move(region_), timing_.get());
  }
  return Status::OK();
}

Status Pool::LoadRoot(const PoolOptions& options) {
  auto* pop = Handle(pop_);
  const size_t root_size = pmemobj_root_size(pop);
  if (root_size != 0 && root_size < sizeof(Root)) {
    return Status::Corruption(options.path, "root object too small for a JigsawDB pool");
  }
  PMEMoid root_oid = pmemobj_root(pop, sizeof(Root));
  if (OID_IS_NULL(root_oid)) return Status::IOError("cannot allocate the pool root", PmemError());
  root_ = static_cast<Root*>(pmemobj_direct(root_oid));
  Root* root = root_;
  if (root->magic == 0 && root->manifest_offset == 0) {
    // A device-DAX pool just formatted, or one whose creation an older
    // version left unfinished: initialise the root in one transaction.
    Status s = InitialiseRoot(pop, root, options);
    if (!s.ok()) return s;
    created_ = true;
    return Status::OK();
  }
  Status s = CheckRoot(*root, options);
  if (!s.ok()) return s;
  if (!RootDatabaseId(root->database_id).empty() || options.database_id.empty()) return Status::OK();
  // A version-1 pool: record the id, which makes it version 2.
  if (pmemobj_tx_begin(pop, nullptr, TX_PARAM_NONE) != 0) {
    return Status::IOError("cannot start a pool transaction", PmemError());
  }
  pmemobj_tx_set_failure_behavior(POBJ_TX_FAILURE_RETURN);
  if (pmemobj_tx_add_range(root_oid, 0, 64) == 0) {
    std::memcpy(root->database_id, options.database_id.data(), options.database_id.size());
    root->format_version = kFormatVersion;
    pmemobj_tx_commit();
  } else {
    pmemobj_tx_abort(errno);
  }
  if (pmemobj_tx_end() != 0) return Status::IOError("cannot record the database id", PmemError());
  return Status::OK();
}

std::string Pool::database_id() const { return RootDatabaseId(root_->database_id); }

Pool::~Pool() {
  if (pop_ == nullptr) return;
  std::lock_guard<std::mutex> guard(ForkGuard());
  pmemobj_close(Handle(pop_));
}

Status Pool::Reserve(ObjectType type, uint64_t size, bool zero, Reservation* reservation) {
  if (size == 0 || size > PMEMOBJ_MAX_ALLOC_SIZE) {
    return Status::InvalidArgument("pmem object size out of range", std::to_string(size));
  }
  // Every object is sized to whole 256 KiB heap chunks (less the 16-byte
  // chunk header) so that libpmemobj serves it as a chunk-granular "huge"
  // allocation. Requests of many different sizes otherwise land in many
  // allocation classes whose runs are reserved whole, and a mostly empty pool
  // reports itself full (docs/pool_layout.md).
  constexpr uint64_t kChunk = 256 << 10;
  constexpr uint64_t kChunkHeader = 16;
  const uint64_t requested = size;
  size = (size + kChunkHeader + kChunk - 1) / kChunk * kChunk - kChunkHeader;
  auto action = std::make_shared<pobj_action>();
  PMEMoid oid = pmemobj_xreserve(Handle(pop_), action.get(), size, static_cast<uint64_t>(type),
                                 zero ? POBJ_XALLOC_ZERO : 0);
  if (OID_IS_NULL(oid)) {
    // ENOMEM: no free run of chunks that long (libpmemobj's own text then
    // speaks of extending pool sets, which a single-file pool never does).
    std::string detail = "no free run of " + std::to_string((size + kChunkHeader) / kChunk) +
                         " chunks of 256 KiB for an object of " + std::to_string(size) + " bytes";
    if (errno != ENOMEM) detail += " (" + PmemError() + ")";
    return Status::NoSpace("pmem pool full", detail);
  }
  reservation->data = static_cast<char*>(pmemobj_direct(oid));
  reservation->size = size;
  reservation->offset = oid.off;
  reservation->action = std::move(action);
  // A zeroed object was written by libpmemobj already; of another, the
  // bytes asked for are about to be written.
  if (!zero) PopulateOnce(oid.off, reservation->data, requested);
  return Status::OK();
}

uint64_t Pool::populated_chunks() const {
  uint64_t n = 0;
  for (uint64_t w = 0; w < (populated_bits_ + 63) / 64; ++w) {
    n += static_cast<uint64_t>(__builtin_popcountll(populated_[w].load(std::memory_order_relaxed)));
  }
  return n;
}

void Pool::PopulateOnce(uint64_t offset, char* data, uint64_t size) {
  constexpr uint64_t kSpan = 256 << 10;
  for (uint64_t span = offset / kSpan; span * kSpan < offset + size && span < populated_bits_; ++span) {
    const uint64_t bit = uint64_t{1} << (span % 64);
    if (populated_[span / 64].fetch_or(bit, std::memory_order_relaxed) & bit) continue;
    // The span's part of the object.
    const uint64_t from = std::max(span * kSpan, offset);
    const uint64_t to = std::min((span + 1) * kSpan, offset + size);
    PopulateForWrite(data + (from - offset), to - from);
  }
}

void Pool::Cancel(Reservation* reservation) {
  if (reservation->action != nullptr) {
    pmemobj_cancel(Handle(pop_), static_cast<pobj_action*>(reservation->action.get()), 1);
  }
  *reservation = Reservation();
}

Status Pool::Commit(std::vector<Reservation*> reservations, uint64_t manifest_offset,
                    const std::vector<uint64_t>& frees) {
  // Two steps, so that no publish needs more redo log than a lane has built
  // in (a bigger one would allocate log space, which fails in a full pool):
  // 1. publish the data objects in small groups -- unreferenced until step 2,
  //    and freed by recovery if a crash comes first;
  // 2. publish the manifest with the root pointer swing and the frees.
  constexpr size_t kActionsPerPublish = 8;
  PMEMobjpool* pop = Handle(pop_);
  Reservation* manifest = nullptr;
  std::vector<Reservation*> data;
  for (Reservation* r : reservations) {
    if (r->offset == manifest_offset) {
      manifest = r;
    } else {
      data.push_back(r);
    }
  }
  std::vector<uint64_t> published;
  auto fail = [&](const char* what) {
    const bool full = errno == ENOMEM;
    for (uint64_t offset : published) Free(offset);
    return full ? Status::NoSpace("pmem pool full", std::string(what) + ": no room for the commit's redo log")
                : Status::IOError(what, PmemError());
  };
  for (size_t i = 0; i < data.size(); i += kActionsPerPublish) {
    std::vector<pobj_action> actions;
    for (size_t j = i; j < std::min(data.size(), i + kActionsPerPublish); ++j) {
      actions.push_back(*static_cast<pobj_action*>(data[j]->action.get()));
    }
    if (pmemobj_publish(pop, actions.data(), actions.size()) != 0) return fail("publishing new objects");
    for (size_t j = i; j < std::min(data.size(), i + kActionsPerPublish); ++j) {
      data[j]->action.reset();
      published.push_back(data[j]->offset);
      used_bytes_ += data[j]->size + kObjectHeader;
    }
  }
  std::vector<pobj_action> actions;
  if (manifest != nullptr) actions.push_back(*static_cast<pobj_action*>(manifest->action.get()));
  actions.emplace_back();
  pmemobj_set_value(pop, &actions.back(), &root_->manifest_offset, manifest_offset);
  const size_t inline_frees = std::min(frees.size(), kActionsPerPublish - actions.size());
  uint64_t freed_bytes = 0;
  for (size_t i = 0; i < inline_frees; ++i) freed_bytes += ObjectSize(frees[i]) + kObjectHeader;
  for (size_t i = 0; i < inline_frees; ++i) {
    actions.emplace_back();
    pmemobj_defer_free(pop, PMEMoid{pool_uuid_lo_, frees[i]}, &actions.back());
  }
  if (pmemobj_publish(pop, actions.data(), actions.size()) != 0) return fail("publishing the manifest");
  if (manifest != nullptr) {
    manifest->action.reset();
    used_bytes_ += manifest->size + kObjectHeader;
  }
  used_bytes_ -= freed_bytes;
  // Further frees after the swing; a crash in between leaves objects no
  // manifest references, which recovery frees.
  for (size_t i = inline_frees; i < frees.size(); ++i) Free(frees[i]);
  return Status::OK();
}

void Pool::Free(uint64_t offset) {
  PMEMoid oid{pool_uuid_lo_, offset};
  used_bytes_ -= ObjectSize(offset) + kObjectHeader;
  pmemobj_free(&oid);
}

char* Pool::Direct(uint64_t offset) const {
  return offset == 0 ? nullptr : static_cast<char*>(pop_) + offset;
}

uint64_t Pool::ObjectSize(uint64_t offset) const {
  return pmemobj_alloc_usable_size(PMEMoid{pool_uuid_lo_, offset});
}

uint64_t Pool::manifest_offset() const {
  return __atomic_load_n(&root_->manifest_offset, __ATOMIC_ACQUIRE);
}

std::vector<uint64_t> Pool::Objects(ObjectType type) const {
  std::vector<uint64_t> result;
  for (PMEMoid oid = pmemobj_first(Handle(pop_)); !OID_IS_NULL(oid); oid = pmemobj_next(oid)) {
    if (pmemobj_type_num(oid) == static_cast<uint64_t>(type)) result.push_back(oid.off);
  }
  return result;
}

Status DestroyPool(const std::string& path) {
  ::unlink((path + ".creating").c_str());  // a creation a crash interrupted
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Status::OK();
  if (!S_ISREG(st.st_mode)) return Status::OK();  // device DAX: nothing to delete
  // libpmemobj holds an exclusive flock on an open pool; taking it here
  // tells an open pool from a closed one, and keeps it closed until unlinked.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError("cannot open " + path, std::strerror(errno));
  if (const int err = LockExclusiveGuarded(fd); err != 0) {
    ::close(fd);
    if (err == EWOULDBLOCK) return Status::IOError(path, "the pool is in use by another process or handle (locked)");
    return Status::IOError("cannot lock " + path, std::strerror(err));
  }
  Status s;
  if (::unlink(path.c_str()) != 0) s = Status::IOError("cannot delete " + path, std::strerror(errno));
  ::close(fd);
  return s;
}

std::string NewDatabaseId() {
  std::random_device random;  // getrandom(2)
  char id[33];
  std::snprintf(id, sizeof(id), "%08x%08x%08x%08x", random(), random(), random(), random());
  return id;
}

}  // namespace jigsaw::pmem
