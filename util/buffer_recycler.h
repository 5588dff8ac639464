// BufferRecycler: keeps a few large equal-sized buffers alive between uses,
// so that a path that needs a fresh buffer per use (a scan's read window,
// per table it reads) reuses memory whose pages are already mapped. A
// freshly allocated buffer of this size comes from mmap (or a trimmed heap)
// and faults in every page on first touch -- 64 faults for 256 KiB, each
// costing microseconds on a virtual machine -- and malloc gives that memory
// back to the kernel when it is freed, so every use pays again.
//
// Thread-safety: Take and the return of a buffer may run on any threads at
// once. A buffer's contents are undefined when taken (never zeroed).
#ifndef JIGSAW_UTIL_BUFFER_RECYCLER_H_
#define JIGSAW_UTIL_BUFFER_RECYCLER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "util/mutex.h"

namespace jigsaw {

class BufferRecycler {
 public:
  // Buffers of `buffer_bytes` (a multiple of 8); at most `max_kept` idle
  // ones are kept, the rest are freed when returned.
  BufferRecycler(size_t buffer_bytes, size_t max_kept) : buffer_bytes_(buffer_bytes), max_kept_(max_kept) {}
  BufferRecycler(const BufferRecycler&) = delete;
  BufferRecycler& operator=(const BufferRecycler&) = delete;
  ~BufferRecycler() {
    for (uint64_t* b : idle_) delete[] b;
  }

  // Returns a buffer to the recycler that gave it out (which must outlive
  // it), or frees a buffer no recycler keeps (owner null).
  class Returner {
   public:
    explicit Returner(BufferRecycler* owner = nullptr) : owner_(owner) {}
    void operator()(uint64_t* buffer) const {
      if (owner_ != nullptr) {
        owner_->Return(buffer);
      } else {
        delete[] buffer;
      }
    }

   private:
    BufferRecycler* owner_;
  };
  using Buffer = std::unique_ptr<uint64_t[], Returner>;

  size_t buffer_bytes() const { return buffer_bytes_; }
  // Idle buffers kept now.
  size_t idle() const EXCLUDES(mu_) {
    MutexLock lock(&mu_);
    return idle_.size();
  }

  // A buffer of at least `bytes`, 8-byte aligned: one of buffer_bytes(),
  // idle if there is one, or, for more than that, one freed when returned.
  Buffer Take(size_t bytes) {
    if (bytes > buffer_bytes_) return Buffer(new uint64_t[(bytes + 7) / 8], Returner(nullptr));
    return Take();
  }
  // A buffer of buffer_bytes(), 8-byte aligned: an idle one if there is one.
  Buffer Take() EXCLUDES(mu_) {
    uint64_t* buffer = nullptr;
    {
      MutexLock lock(&mu_);
      if (!idle_.empty()) {
        buffer = idle_.back();
        idle_.pop_back();
      }
    }
    if (buffer == nullptr) buffer = new uint64_t[buffer_bytes_ / 8];
    return Buffer(buffer, Returner(this));
  }

 private:
  void Return(uint64_t* buffer) EXCLUDES(mu_) {
    {
      MutexLock lock(&mu_);
      if (idle_.size() < max_kept_) {
        idle_.push_back(buffer);
        return;
      }
    }
    delete[] buffer;
  }

  const size_t buffer_bytes_;
  const size_t max_kept_;
  mutable Mutex mu_;
  std::vector<uint64_t*> idle_ GUARDED_BY(mu_);
};

}  // namespace jigsaw

#endif  // JIGSAW_UTIL_BUFFER_RECYCLER_H_
