#include "ssd/io_engine.h"

#include <liburing.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

namespace jigsaw::ssd {

namespace {

constexpr uint64_t kTmpfsMagic = 0x01021994;

// Reads what is left of `r` with pread (also finishes short io_uring reads).
void PreadRest(ReadRequest* r) {
  while (r->done < r->size) {
    const ssize_t n = ::pread(r->fd, r->dest + r->done, r->size - r->done, static_cast<off_t>(r->offset + r->done));
    if (n < 0) {
      if (errno == EINTR) continue;
      r->status = Status::IOError("pread", std::strerror(errno));
      return;
    }
    if (n == 0) break;  // end of file
    r->done += static_cast<size_t>(n);
  }
}

class PreadEngine final : public IoEngine {
 public:
  const char* name() const override { return "pread"; }
  void ReadBatch(std::vector<ReadRequest>* requests) override {
    for (ReadRequest& r : *requests) PreadRest(&r);
  }
};

class UringEngine final : public IoEngine {
 public:
  explicit UringEngine(unsigned depth) : depth_(depth) {}
  ~UringEngine() override {
    if (ready_) io_uring_queue_exit(&ring_);
  }
  int Init() {
    const int err = io_uring_queue_init(depth_, &ring_, 0);
    ready_ = err == 0;
    return err;
  }
  const char* name() const override { return "io_uring"; }
  bool is_uring() const override { return true; }

  void ReadBatch(std::vector<ReadRequest>* requests) override {
    std::lock_guard<std::mutex> lock(mu_);  // one ring, shared
    size_t next = 0;
    while (!broken_ && next < requests->size()) {
      const size_t first = next;
      unsigned queued = 0;
      for (; next < requests->size() && queued < depth_; ++next) {
        ReadRequest& r = (*requests)[next];
        io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
        if (sqe == nullptr) break;
        io_uring_prep_read(sqe, r.fd, r.dest, static_cast<unsigned>(r.size), r.offset);
        io_uring_sqe_set_data64(sqe, next);
        ++queued;
      }
      int submitted;
      do {
        submitted = io_uring_submit(&ring_);
      } while (submitted == -EINTR);
      if (submitted < 0 || static_cast<unsigned>(submitted) != queued) {
        // Prepared entries may linger in the ring with our buffers: never
        // touch the ring again (pread from here on).
        broken_ = true;
        if (submitted <= 0) break;
        queued = static_cast<unsigned>(submitted);
      }
      // Reap every submitted read before returning: the kernel writes into
      // the callers' buffers until it completes.
      std::vector<bool> reaped(queued, false);
      for (unsigned count = 0; count < queued;) {
        io_uring_cqe* cqe = nullptr;
        const int err = io_uring_wait_cqe(&ring_, &cqe);
        if (err == -EINTR) continue;
        if (err != 0) {
          // Cannot reap: the reads not reaped may still write their buffers.
          broken_ = true;
          for (unsigned k = 0; k < queued; ++k) {
            if (reaped[k]) continue;
            ReadRequest& r = (*requests)[first + k];
            r.abandoned = true;
            r.status = Status::IOError("io_uring wait", std::strerror(-err));
          }
          break;
        }
        const uint64_t index = io_uring_cqe_get_data64(cqe);
        ReadRequest& r = (*requests)[index];
        if (cqe->res >= 0) r.done = static_cast<size_t>(cqe->res);
        io_uring_cqe_seen(&ring_, cqe);
        reaped[index - first] = true;
        ++count;
      }
    }
    // Short reads (and anything the ring did not complete) finish by pread,
    // which also reports errors.
    for (ReadRequest& r : *requests) {
      if (r.done < r.size && !r.abandoned) PreadRest(&r);
    }
  }

 private:
  const unsigned depth_;
  io_uring ring_{};
  bool ready_ = false;
  bool broken_ = false;  // after a ring error: pread only
  std::mutex mu_;
};

}  // namespace

std::unique_ptr<IoEngine> NewPreadEngine() { return std::make_unique<PreadEngine>(); }

std::unique_ptr<IoEngine> NewUringEngine(unsigned queue_depth, std::string* why) {
  auto engine = std::make_unique<UringEngine>(queue_depth);
  const int err = engine->Init();
  if (err != 0) {
    *why = std::strerror(-err);
    return nullptr;
  }
  return engine;
}

std::unique_ptr<IoEngine> ChooseIoEngine(SsdIo mode, const std::string& dir, std::string* description) {
  if (mode == SsdIo::kPread) {
    *description = "pread (Options::ssd_io)";
    return NewPreadEngine();
  }
  struct statfs fs {};
  if (mode == SsdIo::kAuto && statfs(dir.c_str(), &fs) == 0 && static_cast<uint64_t>(fs.f_type) == kTmpfsMagic) {
    *description = "pread (tmpfs: io_uring would only add overhead to memory copies)";
    return NewPreadEngine();
  }
  std::string why;
  auto uring = NewUringEngine(64, &why);
  if (uring != nullptr) {
    *description = "io_uring (queue depth 64)";
    return uring;
  }
  *description = "pread (io_uring unavailable: " + why + ")";
  return NewPreadEngine();
}

}  // namespace jigsaw::ssd
