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

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jigsaw/options.h"
#include "jigsaw/status.h"

namespace jigsaw::ssd {

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
// nullptr, with *why, if io_uring cannot be set up here.
std::unique_ptr<IoEngine> NewUringEngine(unsigned queue_depth, std::string* why);
// kAuto: pread when `dir` is on tmpfs (io_uring only adds overhead to
// memory copies there), io_uring otherwise if it can be set up, else pread.
// *description says which and why.
std::unique_ptr<IoEngine> ChooseIoEngine(SsdIo mode, const std::string& dir, std::string* description);

}  // namespace jigsaw::ssd

#endif  // JIGSAW_SSD_IO_ENGINE_H_
