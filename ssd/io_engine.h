// IoEngine: batched positional reads for the SSD tier -- io_uring (liburing)
// where it is available and pays off, pread(2) otherwise. Chosen once per DB
// at open (Options::ssd_io) and reported by GetProperty("jigsaw.io").
//
// Used for read-ahead: a table iterator (and so every compaction reading its
// inputs) fetches the next blocks of a table in one batch, which io_uring
// serves in parallel.
//
// Thread-safety: ReadBatch may be called concurrently.
#ifndef JIGSAW_SSD_IO_ENGINE_H_
#define JIGSAW_SSD_IO_ENGINE_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "jigsaw/options.h"
#include "jigsaw/status.h"

struct io_uring;
struct io_uring_cqe;

namespace jigsaw::ssd {

// No wait of the SSD tier on io_uring is unbounded. A wait for a completion
// that lasts longer than the bound gives the ring up: its requests are
// cancelled where the kernel can, the work is redone synchronously (pread,
// pwrite), the ring is never used again, and the event is counted and
// logged (one line on stderr). Default bound for the engine's rings.
constexpr std::chrono::milliseconds kDefaultUringWaitBound{5000};

// Rings given up since the process started, over every DB and file system.
struct UringStallCounts {
  uint64_t table_writes = 0;  // by the POSIX file system's table files
  uint64_t reads = 0;         // by io_uring read engines
};
UringStallCounts UringStalls();

namespace uring {

enum class StallKind { kTableWrite, kRead };
// Counts a ring given up and logs `message` as one line on stderr.
void NoteStall(StallKind kind, const std::string& message);

// Whether the kernel takes a wait's timeout as an argument
// (IORING_FEAT_EXT_ARG, Linux 5.11): only then does WaitUntil never submit
// what the submission queue holds. Rings without it are not used.
bool HasBoundedWaits(const io_uring& ring);

// Waits for a completion on `ring` until `deadline` (interrupted waits
// resume). 0 with *cqe set, -ETIME at the deadline, or another -errno.
int WaitUntil(io_uring* ring, io_uring_cqe** cqe, std::chrono::steady_clock::time_point deadline);

// After a failed or timed-out wait: asks the kernel to cancel the requests
// whose user data are in *pending (never ~0, the cancels' own) -- unless
// `may_submit` is false, when the submission queue may hold entries that
// must never be submitted -- and reaps completions until all of them are
// back or `deadline`. For each one back it calls reaped(user_data, result)
// and removes it from *pending; the kernel may still work on the buffers of
// those left, which must never be freed or reused. Completions of other
// requests are dropped. The caller then tears the ring down:
// io_uring_queue_exit does not wait for requests in flight.
void CancelAndReap(io_uring* ring, bool may_submit, std::vector<uint64_t>* pending,
                   std::chrono::steady_clock::time_point deadline,
                   const std::function<void(uint64_t user_data, int result)>& reaped);

}  // namespace uring

struct ReadRequest {
  int fd = -1;
  uint64_t offset = 0;
  size_t size = 0;
  char* dest = nullptr;
  size_t done = 0;  // bytes read (less than size only at end of file)
  Status status;
  // Set (with an error status) if the read could not be reaped from the
  // ring: the kernel may still write into dest, which the caller must then
  // never free or reuse.
  bool abandoned = false;
};

class IoEngine {
 public:
  virtual ~IoEngine() = default;
  virtual const char* name() const = 0;
  virtual bool is_uring() const { return false; }
  // Fills every request (each sets done and status).
  virtual void ReadBatch(std::vector<ReadRequest>* requests) = 0;
};

std::unique_ptr<IoEngine> NewPreadEngine();
// nullptr, with *why, if io_uring cannot be set up here. A batch whose
// reads do not complete within `wait_bound` gives the ring up (see above):
// the reads the kernel gave back are finished by pread, the others are
// `abandoned`, and later batches use pread.
std::unique_ptr<IoEngine> NewUringEngine(unsigned queue_depth, std::string* why,
                                         std::chrono::nanoseconds wait_bound = kDefaultUringWaitBound);
// kAuto: pread when `dir` is on tmpfs (io_uring only adds overhead to
// memory copies there), io_uring otherwise if it can be set up, else pread.
// *description says which and why.
std::unique_ptr<IoEngine> ChooseIoEngine(SsdIo mode, const std::string& dir, std::string* description);

}  // namespace jigsaw::ssd

#endif  // JIGSAW_SSD_IO_ENGINE_H_
