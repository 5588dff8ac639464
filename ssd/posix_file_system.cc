// The POSIX FileSystem: write(2)/pread(2), fdatasync, sync_file_range,
// read-only mmap for Mapping(); log files appended through a shared
// mapping; table files written from buffers through io_uring (liburing),
// with bounded waits, or pwrite(2).
#include "ssd/posix_file_system.h"

#include <dirent.h>
#include <liburing.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <vector>

#include "jigsaw/file_system.h"
#include "util/populate.h"

namespace jigsaw {

namespace {

using ssd::kDefaultUringWaitBound;
namespace uring = ssd::uring;

// Whether this kernel's syncfs(2) returns writeback errors (Linux 5.8 on).
bool SyncfsReportsErrors() {
  static const bool reports = [] {
    struct utsname name {};
    int major = 0, minor = 0;
    return ::uname(&name) == 0 && std::sscanf(name.release, "%d.%d", &major, &minor) == 2 &&
           (major > 5 || (major == 5 && minor >= 8));
  }();
  return reports;
}

Status PosixError(const std::string& context, int err) {
  if (err == ENOSPC || err == EDQUOT) return Status::NoSpace(context, std::strerror(err));
  if (err == ENOENT) return Status::NotFound(context, std::strerror(err));
  return Status::IOError(context, std::strerror(err));
}

// An open file written at offsets: what unbuffered and table files share.
class FileDescriptor {
 public:
  FileDescriptor(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }

  Status WriteAt(const char* data, size_t n, uint64_t offset) const {
    while (n > 0) {
      const ssize_t w = ::pwrite(fd_, data, n, static_cast<off_t>(offset));
      if (w < 0) {
        if (errno == EINTR) continue;
        return PosixError(path_, errno);
      }
      if (w == 0) return Status::IOError(path_, "pwrite wrote nothing");
      data += w;
      n -= static_cast<size_t>(w);
      offset += static_cast<uint64_t>(w);
    }
    return Status::OK();
  }
  // Starts writeback of the bytes below `size` not yet started
  // (sync_file_range: a hint, durability still needs Sync).
  void StartWriteback(uint64_t size) {
    if (size > written_back_) {
      ::sync_file_range(fd_, static_cast<off_t>(written_back_), static_cast<off_t>(size - written_back_),
                        SYNC_FILE_RANGE_WRITE);
      written_back_ = size;
    }
  }
  Status Sync() const {
    if (::fdatasync(fd_) != 0) return PosixError(path_, errno);
    return Status::OK();
  }
  Status Close() {
    const int fd = fd_;
    fd_ = -1;
    if (fd >= 0 && ::close(fd) != 0) return PosixError(path_, errno);
    return Status::OK();
  }

 private:
  const std::string path_;
  int fd_;
  uint64_t written_back_ = 0;
};

// Appends reach the kernel before Append returns (the WAL's promise for
// sync=false writes).
class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string path, int fd) : file_(std::move(path), fd) {}
  Status Append(const Slice& data) override {
    Status s = file_.WriteAt(data.data(), data.size(), size_);
    if (s.ok()) size_ += data.size();
    return s;
  }
  Status StartWriteback() override {
    file_.StartWriteback(size_);
    return Status::OK();
  }
  Status Sync() override { return file_.Sync(); }
  Status Close() override { return file_.Close(); }
  uint64_t Size() const override { return size_; }

 private:
  FileDescriptor file_;
  uint64_t size_ = 0;
};

// A log file (FileSystem::NewLogFile, ReuseLogFile): appends are copies into
// one shared mapping of the file, grown with mremap, over space allocated
// ahead (posix_fallocate, in whole steps, before any byte of the append is
// copied: a full device is a NoSpace Status from Append, and a failed Append
// copies nothing). An append that returned is in the page cache -- it
// survives a crash of this process -- without a system call per append;
// Sync is fdatasync, which writes back the mapping's dirty pages. Until
// Close, the file is whole steps long (a reused one: at least its old
// length); Close unmaps it and truncates it to what was appended.
//
// A reused file (ReuseLogFile) is cleared of the old log's bytes a chunk at a
// time ahead of the appends, so that at least kZeroTail zero bytes follow the
// last append at every moment (the log's clean end); further on it may still
// hold old bytes. Its pages are in the page cache already: no page of it is
// newly allocated.
//
// Either way each chunk is made writable in the mapping (PopulateForWrite)
// before the appends (or the clearing) reach it: one call for its 16 pages
// instead of a write fault per page (docs/design/010-disk-log-file.md,
// "Each chunk is made writable in one call").
//
// Every kWritebackStep bytes appended, the whole pages behind the appends
// are unmapped and their writeback started (sync_file_range, not waited
// for): a Sync -- a memtable switch syncs its log -- then waits for the last
// stretch only, and no page is written back while mapped, which would
// write-protect it in this process's page tables with a TLB shootdown per
// page (docs/design/010-disk-log-file.md, "Writeback starts behind the appends").
class PosixLogFile final : public WritableFile {
 public:
  static constexpr uint64_t kStep = uint64_t{1} << 20;
  static constexpr uint64_t kChunk = uint64_t{64} << 10;
  static constexpr uint64_t kZeroTail = 8;
  static constexpr uint64_t kWritebackStep = uint64_t{1} << 20;

  // `old_bytes`: the file's length when it was opened for reuse (0: new);
  // those bytes are an earlier log's and are cleared before being appended
  // over.
  PosixLogFile(std::string path, int fd, uint64_t old_bytes)
      : file_(std::move(path), fd), allocated_end_(old_bytes / kStep * kStep), old_end_(old_bytes) {}
  ~PosixLogFile() override { (void)Close(); }

  Status Append(const Slice& data) override {
    if (file_.fd() < 0) return Status::IOError(file_.path(), "append after close");
    const uint64_t need = size_ + data.size() + kZeroTail;
    if (need > allocated_end_) {
      const uint64_t end = (need + kStep - 1) / kStep * kStep;
      const int err = ::posix_fallocate(file_.fd(), static_cast<off_t>(allocated_end_),
                                        static_cast<off_t>(end - allocated_end_));
      if (err != 0) return PosixError(file_.path(), err);
      allocated_end_ = end;
    }
    if (need > mapped_end_) {
      Status s = MapUpTo((need + kStep - 1) / kStep * kStep);
      if (!s.ok()) return s;
    }
    ClearOldBytesUpTo(need);
    std::memcpy(At(size_), data.data(), data.size());
    size_ += data.size();
    if (size_ >= next_release_) ReleaseWrittenPages();
    return Status::OK();
  }
  Status StartWriteback() override {
    file_.StartWriteback(size_);
    return Status::OK();
  }
  Status Sync() override { return file_.Sync(); }
  Status Close() override {
    if (file_.fd() < 0) return Status::OK();
    if (live_ != nullptr) ::munmap(live_, mapped_end_ - unmapped_end_);  // dirty pages stay in the page cache
    live_ = nullptr;
    Status s;
    if (::ftruncate(file_.fd(), static_cast<off_t>(size_)) != 0) s = PosixError(file_.path(), errno);
    Status closed = file_.Close();
    return s.ok() ? closed : s;
  }
  uint64_t Size() const override { return size_; }

 private:
  // Where byte `offset` (unmapped_end_ <= offset < mapped_end_) is mapped.
  char* At(uint64_t offset) const { return live_ + (offset - unmapped_end_); }
  // Maps [unmapped_end_, end) (end a multiple of kStep, within the
  // allocated space), keeping the pages already mapped.
  Status MapUpTo(uint64_t end) {
    void* map = live_ == nullptr
                    ? ::mmap(nullptr, end, PROT_READ | PROT_WRITE, MAP_SHARED, file_.fd(), 0)
                    : ::mremap(live_, mapped_end_ - unmapped_end_, end - unmapped_end_, MREMAP_MAYMOVE);
    if (map == MAP_FAILED) return PosixError(file_.path(), errno);
    live_ = static_cast<char*>(map);
    mapped_end_ = end;
    return Status::OK();
  }
  // Unmaps the whole pages the appends are done with (none is written
  // again) and starts their writeback. Their dirty data stays in the page
  // cache. If the unmapping fails (the process is out of mappings) the
  // pages stay mapped; the writeback is started either way.
  void ReleaseWrittenPages() {
    static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t end = size_ / page * page;
    if (::munmap(live_, end - unmapped_end_) == 0) {
      live_ += end - unmapped_end_;
      unmapped_end_ = end;
    }
    file_.StartWriteback(end);
    next_release_ = size_ + kWritebackStep;
  }
  // Clears the old bytes of the chunks up to the one holding byte end - 1
  // (end <= mapped_end_).
  void ClearOldBytesUpTo(uint64_t end) {
    while (cleared_end_ < end) {
      const uint64_t chunk_end = std::min(cleared_end_ + kChunk, mapped_end_);
      PopulateForWrite(At(cleared_end_), chunk_end - cleared_end_);
      if (cleared_end_ < old_end_) std::memset(At(cleared_end_), 0, std::min(chunk_end, old_end_) - cleared_end_);
      cleared_end_ = chunk_end;
    }
  }

  FileDescriptor file_;
  char* live_ = nullptr;         // maps [unmapped_end_, mapped_end_)
  uint64_t mapped_end_ = 0;      // a multiple of kStep, <= allocated_end_
  uint64_t allocated_end_;       // a multiple of kStep, <= the file's length
  const uint64_t old_end_;       // a reused file: bytes of the old log, before they are cleared
  uint64_t cleared_end_ = 0;    // the old log's bytes below it are cleared
  uint64_t size_ = 0;            // bytes appended
  uint64_t unmapped_end_ = 0;    // pages below it are unmapped (appended, their writeback started)
  uint64_t next_release_ = kWritebackStep;  // ReleaseWrittenPages when size_ reaches it
};

// What a POSIX file system shares with its table files.
struct TableWriteSettings {
  std::chrono::nanoseconds wait_bound{kDefaultUringWaitBound};
  std::function<int(const std::string& path)> ring_target;  // PosixFileSystemOptions::ring_target_for_test
  std::atomic<bool> uring_off{false};                      // set when a file gives its ring up
};

// A table file: appends gather in one of two 256 KiB buffers; a full buffer
// is written at its offset while the other fills -- through io_uring, so the
// kernel's copy into the page cache overlaps the caller's work, or by
// pwrite(2). Errors of a write in flight are returned by the next call. Once
// StartWriteback or Sync has written everything, the buffers and the ring
// are released (a finished table waits open for the tracker's sync); a
// later Append gets new buffers and pwrite.
//
// No wait for the ring lasts longer than the bound (twice it when the
// kernel also ignores the cancel): a write not completed by then is written
// again with pwrite, at its offset, from the same buffer (the kernel only
// reads it), and the ring is given up (GiveUpRing). A buffer is never
// written, reused or freed while the kernel may still read it.
class PosixTableFile final : public WritableFile {
 public:
  static constexpr size_t kBufferSize = 256 << 10;
  static constexpr unsigned kBuffers = 2;

  PosixTableFile(std::string path, int fd, bool async_io, std::shared_ptr<TableWriteSettings> settings)
      : file_(std::move(path), fd), settings_(std::move(settings)) {
    if (!async_io || settings_->uring_off.load(std::memory_order_relaxed)) return;
    if (io_uring_queue_init(kBuffers, &ring_, 0) != 0) return;
    ring_initialised_ = true;
    if (!uring::HasBoundedWaits(ring_)) return;  // pwrite; Release() tears the ring down
    ring_ok_ = true;
    ring_fd_ = settings_->ring_target ? settings_->ring_target(file_.path()) : -1;
    if (ring_fd_ < 0) ring_fd_ = fd;
  }
  ~PosixTableFile() override {
    (void)Drain();
    Release();
  }

  Status Append(const Slice& data) override {
    if (!error_.ok()) return error_;
    const char* p = data.data();
    size_t left = data.size();
    while (left > 0) {
      Buffer& b = buffers_[current_];
      if (b.data == nullptr) b.data.reset(new char[kBufferSize]);
      const size_t n = std::min(left, kBufferSize - b.used);
      std::memcpy(b.data.get() + b.used, p, n);
      b.used += n;
      p += n;
      left -= n;
      size_ += n;
      if (b.used == kBufferSize) {
        Status s = SubmitCurrent();
        if (!s.ok()) return s;
      }
    }
    return Status::OK();
  }
  Status StartWriteback() override {
    Status s = Drain();
    if (!s.ok()) return s;
    Release();
    file_.StartWriteback(size_);
    return Status::OK();
  }
  Status Sync() override {
    Status s = Drain();
    if (!s.ok()) return s;
    Release();
    return file_.Sync();
  }
  Status Close() override {
    Status s = Drain();
    Status closed = file_.Close();
    return s.ok() ? closed : s;
  }
  uint64_t Size() const override { return size_; }

 private:
  struct Buffer {
    std::unique_ptr<char[]> data;
    size_t used = 0;
    uint64_t offset = 0;
    bool in_flight = false;  // the kernel may still read data
  };

  // Writes the current buffer (asynchronously if the ring works) and makes
  // the other one current, waiting for its earlier write if need be.
  Status SubmitCurrent() {
    Buffer& b = buffers_[current_];
    if (b.used == 0) return error_;
    b.offset = submitted_;
    submitted_ += b.used;
    io_uring_sqe* sqe = ring_ok_ ? io_uring_get_sqe(&ring_) : nullptr;
    if (sqe != nullptr) {
      io_uring_prep_write(sqe, ring_fd_, b.data.get(), static_cast<unsigned>(b.used), b.offset);
      io_uring_sqe_set_data64(sqe, current_);
      int submitted;
      do {
        submitted = io_uring_submit(&ring_);
      } while (submitted == -EINTR);
      if (submitted == 1) {
        b.in_flight = true;
      } else {
        // The entry may linger in the ring: never submit again; pwrite it.
        ring_ok_ = false;
        entry_may_linger_ = true;
      }
    }
    if (!b.in_flight) {
      Status s = file_.WriteAt(b.data.get(), b.used, b.offset);
      if (!s.ok() && error_.ok()) error_ = s;
      b.used = 0;
    }
    current_ = (current_ + 1) % kBuffers;
    Status s = WaitFor(&buffers_[current_]);
    buffers_[current_].used = 0;
    return s.ok() ? error_ : s;
  }

  // Reaps completions until `b` has none in flight, or gives the ring up
  // when none comes within the bound. A short write is finished by pwrite;
  // a failed one becomes error_.
  Status WaitFor(Buffer* b) {
    const auto deadline = std::chrono::steady_clock::now() + settings_->wait_bound;
    while (b->in_flight) {
      io_uring_cqe* cqe = nullptr;
      const int err = uring::WaitUntil(&ring_, &cqe, deadline);
      if (err != 0) {
        GiveUpRing(err);
        break;
      }
      Buffer& done = buffers_[io_uring_cqe_get_data64(cqe)];
      const int res = cqe->res;
      io_uring_cqe_seen(&ring_, cqe);
      done.in_flight = false;
      Status s;
      if (res < 0) {
        s = PosixError(file_.path(), -res);
      } else if (static_cast<size_t>(res) < done.used) {
        s = file_.WriteAt(done.data.get() + res, done.used - static_cast<size_t>(res),
                          done.offset + static_cast<uint64_t>(res));
      }
      if (!s.ok() && error_.ok()) error_ = s;
    }
    return error_;
  }

  // A wait found no completion within the bound (or failed with `err`):
  // cancels the writes in flight, waits up to another bound for the kernel
  // to give them back, and writes every one of them again with pwrite at its
  // offset (a write that did complete is rewritten with the same bytes). A
  // buffer not given back is leaked: the kernel may still read it, and its
  // write, if it ever happens, writes the same bytes. Then tears the ring
  // down (its requests stay the kernel's), and counts and logs the event.
  // The rest of the file, and later table files of the file system, use
  // pwrite.
  void GiveUpRing(int err) {
    std::vector<uint64_t> pending;
    for (unsigned i = 0; i < kBuffers; ++i) {
      if (buffers_[i].in_flight) pending.push_back(i);
    }
    const std::vector<uint64_t> stalled = pending;
    uring::CancelAndReap(&ring_, /*may_submit=*/!entry_may_linger_, &pending,
                         std::chrono::steady_clock::now() + settings_->wait_bound,
                         [this](uint64_t index, int) { buffers_[index].in_flight = false; });
    size_t leaked = 0;
    uint64_t stalled_bytes = 0;
    for (const uint64_t index : stalled) {
      Buffer& b = buffers_[index];
      stalled_bytes += b.used;
      Status s = file_.WriteAt(b.data.get(), b.used, b.offset);
      if (!s.ok() && error_.ok()) error_ = s;
      b.used = 0;
      if (b.in_flight) {
        (void)b.data.release();  // deliberately leaked: the kernel may still read it
        b.in_flight = false;
        ++leaked;
      }
    }
    io_uring_queue_exit(&ring_);
    ring_initialised_ = false;
    ring_ok_ = false;
    settings_->uring_off.store(true, std::memory_order_relaxed);
    const std::string why =
        err == -ETIME
            ? "not completed within " +
                  std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(settings_->wait_bound).count()) +
                  " ms"
            : std::string("wait failed: ") + std::strerror(-err);
    uring::NoteStall(uring::StallKind::kTableWrite,
                     std::to_string(stalled.size()) + " io_uring writes (" + std::to_string(stalled_bytes) +
                         " bytes) to " + file_.path() + " " + why + "; written again with pwrite" +
                         (error_.ok() ? "" : " (" + error_.ToString() + ")") + ", " + std::to_string(leaked) +
                         " buffers of " + std::to_string(kBufferSize) +
                         " bytes left to the kernel; this file system's table writes use pwrite from now on");
  }

  // After a successful Drain nothing is in flight: frees the buffers and
  // the ring.
  void Release() {
    for (Buffer& b : buffers_) {
      if (b.in_flight) return;
    }
    if (ring_initialised_) io_uring_queue_exit(&ring_);
    ring_initialised_ = false;
    ring_ok_ = false;
    for (Buffer& b : buffers_) {
      b.data.reset();
      b.used = 0;
    }
  }

  // Everything appended is written to the file (not synced).
  Status Drain() {
    if (file_.fd() < 0) return error_;
    Status s = SubmitCurrent();
    for (Buffer& b : buffers_) {
      Status w = WaitFor(&b);
      if (s.ok()) s = w;
    }
    return s;
  }

  FileDescriptor file_;  // declared first: closed after the ring and buffers are gone
  const std::shared_ptr<TableWriteSettings> settings_;
  io_uring ring_{};
  int ring_fd_ = -1;  // where the ring writes: the file's descriptor but for tests
  bool ring_initialised_ = false;
  bool ring_ok_ = false;
  bool entry_may_linger_ = false;  // a failed submit may have left an entry in the ring
  Buffer buffers_[kBuffers];
  unsigned current_ = 0;
  uint64_t size_ = 0;       // bytes appended
  uint64_t submitted_ = 0;  // bytes handed to write
  Status error_;            // first failed write
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
  bool PopulateMapping() override {
    return mapping_ != nullptr && PopulateForRead(mapping_, size_);
  }
  int fd() const override { return fd_; }

 private:
  const std::string path_;
  const int fd_;
  const uint64_t size_;
  const char* mapping_ = nullptr;
};

// Opens an existing file (`flags`: O_RDONLY or O_RDWR) and reads its size.
Status OpenExisting(const std::string& path, int flags, int* fd, uint64_t* size) {
  *fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (*fd < 0) return PosixError(path, errno);
  struct stat st {};
  if (::fstat(*fd, &st) != 0) {
    const int err = errno;
    ::close(*fd);
    *fd = -1;
    return PosixError(path, err);
  }
  *size = static_cast<uint64_t>(st.st_size);
  return Status::OK();
}

class PosixFileSystem final : public FileSystem {
 public:
  explicit PosixFileSystem(ssd::PosixFileSystemOptions options) : table_writes_(std::make_shared<TableWriteSettings>()) {
    table_writes_->wait_bound = options.uring_wait_bound;
    table_writes_->ring_target = std::move(options.ring_target_for_test);
  }

  Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) override {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError(path, errno);
    *file = std::make_unique<PosixWritableFile>(path, fd);
    return Status::OK();
  }
  Status NewLogFile(const std::string& path, std::unique_ptr<WritableFile>* file) override {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError(path, errno);
    *file = std::make_unique<PosixLogFile>(path, fd, /*old_bytes=*/0);
    return Status::OK();
  }
  Status ReuseLogFile(const std::string& old_path, const std::string& path,
                      std::unique_ptr<WritableFile>* file) override {
    if (::rename(old_path.c_str(), path.c_str()) != 0) return PosixError(old_path + " -> " + path, errno);
    int fd = -1;
    uint64_t size = 0;
    Status s = OpenExisting(path, O_RDWR, &fd, &size);
    if (!s.ok()) return s;
    *file = std::make_unique<PosixLogFile>(path, fd, size);
    // The new name is durable before anything names it.
    const std::string dir = std::filesystem::path(path).parent_path().string();
    return SyncDir(dir.empty() ? "." : dir);
  }
  Status NewTableFile(const std::string& path, bool async_io, std::unique_ptr<WritableFile>* file) override {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError(path, errno);
    *file = std::make_unique<PosixTableFile>(path, fd, async_io, table_writes_);
    return Status::OK();
  }
  Status NewRandomAccessFile(const std::string& path, std::unique_ptr<RandomAccessFile>* file) override {
    int fd = -1;
    uint64_t size = 0;
    Status s = OpenExisting(path, O_RDONLY, &fd, &size);
    if (!s.ok()) return s;
    *file = std::make_unique<PosixRandomAccessFile>(path, fd, size);
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
  Status SyncFileSystem(const std::string& dir) override {
    // syncfs reports writeback errors of any file of the file system since
    // Linux 5.8; older kernels returned 0 regardless, so they sync file by
    // file.
    if (!SyncfsReportsErrors()) return Status::NotSupported(dir, "syncfs does not report errors on this kernel");
    const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return PosixError(dir, errno);
    const int r = ::syncfs(fd);
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
  Status LinkFile(const std::string& from, const std::string& to) override {
    if (::link(from.c_str(), to.c_str()) != 0) return PosixError(from + " -> " + to, errno);
    return Status::OK();
  }
  Status GetFileSize(const std::string& path, uint64_t* size) override {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return PosixError(path, errno);
    *size = static_cast<uint64_t>(st.st_size);
    return Status::OK();
  }
  bool FileExists(const std::string& path) override { return ::access(path.c_str(), F_OK) == 0; }

 private:
  const std::shared_ptr<TableWriteSettings> table_writes_;
};

}  // namespace

FileSystem* FileSystem::Default() {
  static FileSystem* fs = new PosixFileSystem(ssd::PosixFileSystemOptions());
  return fs;
}

namespace ssd {

std::unique_ptr<FileSystem> NewPosixFileSystem(PosixFileSystemOptions options) {
  return std::make_unique<PosixFileSystem>(std::move(options));
}

}  // namespace ssd

}  // namespace jigsaw
