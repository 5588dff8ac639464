#include "ssd/io_engine.h"

#include <liburing.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>

namespace jigsaw::ssd {

namespace {

std::atomic<uint64_t> table_write_stalls{0};
std::atomic<uint64_t> read_stalls{0};

// The user data of a cancel request (never a request's own).
constexpr uint64_t kCancelTag = ~uint64_t{0};

int64_t Millis(std::chrono::nanoseconds d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); }

}  // namespace

UringStallCounts UringStalls() {
  UringStallCounts counts;
  counts.table_writes = table_write_stalls.load(std::memory_order_relaxed);
  counts.reads = read_stalls.load(std::memory_order_relaxed);
  return counts;
}

namespace uring {

void NoteStall(StallKind kind, const std::string& message) {
  (kind == StallKind::kTableWrite ? table_write_stalls : read_stalls).fetch_add(1, std::memory_order_relaxed);
  std::fprintf(stderr, "jigsaw: io_uring stall: %s\n", message.c_str());
}

int WaitUntil(io_uring* ring, io_uring_cqe** cqe, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    const int64_t left = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return io_uring_peek_cqe(ring, cqe) == 0 ? 0 : -ETIME;
    __kernel_timespec ts{};
    ts.tv_sec = left / 1000000000;
    ts.tv_nsec = left % 1000000000;
    // Rings are only used where the kernel takes the timeout as an argument
    // (IORING_FEAT_EXT_ARG): liburing then never submits from here.
    const int err = io_uring_wait_cqe_timeout(ring, cqe, &ts);
    if (err != -EINTR) return err;
  }
}

void CancelAndReap(io_uring* ring, bool may_submit, std::vector<uint64_t>* pending,
                   std::chrono::steady_clock::time_point deadline,
                   const std::function<void(uint64_t user_data, int result)>& reaped) {
  if (may_submit) {
    unsigned prepared = 0;
    for (const uint64_t data : *pending) {
      io_uring_sqe* sqe = io_uring_get_sqe(ring);
      if (sqe == nullptr) break;
      io_uring_prep_cancel64(sqe, data, 0);
      io_uring_sqe_set_data64(sqe, kCancelTag);
      ++prepared;
    }
    if (prepared > 0) {
      int submitted;
      do {
        submitted = io_uring_submit(ring);
      } while (submitted == -EINTR);
    }
  }
  while (!pending->empty()) {
    io_uring_cqe* cqe = nullptr;
    if (WaitUntil(ring, &cqe, deadline) != 0) break;
    const uint64_t data = io_uring_cqe_get_data64(cqe);
    const int result = cqe->res;
    io_uring_cqe_seen(ring, cqe);
    const auto it = std::find(pending->begin(), pending->end(), data);
    if (it == pending->end()) continue;  // a cancel's own completion
    pending->erase(it);
    reaped(data, result);
  }
}

// Whether waits on `ring` can be bounded without submitting (see WaitUntil).
bool HasBoundedWaits(const io_uring& ring) { return (ring.features & IORING_FEAT_EXT_ARG) != 0; }

}  // namespace uring

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
  UringEngine(unsigned depth, std::chrono::nanoseconds wait_bound) : depth_(depth), wait_bound_(wait_bound) {}
  ~UringEngine() override {
    if (ready_) io_uring_queue_exit(&ring_);
  }
  // 0, or -errno (-ENOTSUP: the kernel cannot bound a wait).
  int Init() {
    int err = io_uring_queue_init(depth_, &ring_, 0);
    if (err == 0 && !uring::HasBoundedWaits(ring_)) {
      io_uring_queue_exit(&ring_);
      err = -ENOTSUP;
    }
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
      const auto deadline = std::chrono::steady_clock::now() + wait_bound_;
      for (unsigned count = 0; count < queued;) {
        io_uring_cqe* cqe = nullptr;
        const int err = uring::WaitUntil(&ring_, &cqe, deadline);
        if (err != 0) {
          GiveUp(requests, first, reaped, /*may_submit=*/!broken_, err);
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
  // The reads of requests[first, first + reaped.size()) not reaped did not
  // complete within the bound (or the wait failed with `err`): cancels them,
  // marks those the kernel does not give back within another bound as
  // abandoned, and tears the ring down for good.
  void GiveUp(std::vector<ReadRequest>* requests, size_t first, const std::vector<bool>& reaped, bool may_submit,
              int err) {
    std::vector<uint64_t> pending;
    for (size_t k = 0; k < reaped.size(); ++k) {
      if (!reaped[k]) pending.push_back(first + k);
    }
    const size_t stalled = pending.size();
    uring::CancelAndReap(&ring_, may_submit, &pending, std::chrono::steady_clock::now() + wait_bound_,
                         [requests](uint64_t index, int result) {
                           if (result > 0) (*requests)[index].done = static_cast<size_t>(result);
                         });
    const std::string why = err == -ETIME ? "not completed within " + std::to_string(Millis(wait_bound_)) + " ms"
                                          : std::string("wait failed: ") + std::strerror(-err);
    for (const uint64_t index : pending) {
      ReadRequest& r = (*requests)[index];
      r.abandoned = true;
      r.status = Status::IOError("io_uring read " + why, "its buffer is left to the kernel");
    }
    broken_ = true;
    io_uring_queue_exit(&ring_);
    ready_ = false;
    uring::NoteStall(uring::StallKind::kRead,
                     std::to_string(stalled) + " io_uring reads " + why + ": " + std::to_string(pending.size()) +
                         " abandoned with their buffers, the rest read with pread; this engine reads with pread "
                         "from now on");
  }

  const unsigned depth_;
  const std::chrono::nanoseconds wait_bound_;
  io_uring ring_{};
  bool ready_ = false;
  bool broken_ = false;  // after a ring error or stall: pread only
  std::mutex mu_;
};

}  // namespace

std::unique_ptr<IoEngine> NewPreadEngine() { return std::make_unique<PreadEngine>(); }

std::unique_ptr<IoEngine> NewUringEngine(unsigned queue_depth, std::string* why,
                                         std::chrono::nanoseconds wait_bound) {
  auto engine = std::make_unique<UringEngine>(queue_depth, wait_bound);
  const int err = engine->Init();
  if (err != 0) {
    *why = err == -ENOTSUP ? "the kernel cannot bound io_uring waits (no IORING_FEAT_EXT_ARG)" : std::strerror(-err);
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
