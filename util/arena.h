// Arena: bump allocation of 8-byte aligned memory in large chunks, freed all
// at once. Used by the memtable, whose nodes live as long as it does.
//
// Thread-safety: Allocate is called by one thread at a time (the memtable's
// writer); MemoryUsage may be read concurrently.
#ifndef JIGSAW_UTIL_ARENA_H_
#define JIGSAW_UTIL_ARENA_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace jigsaw {

class Arena {
 public:
  explicit Arena(size_t chunk_size = 1 << 20) : chunk_size_(chunk_size) {}
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // Returns `bytes` bytes, 8-byte aligned, valid until the arena is destroyed.
  char* Allocate(size_t bytes) {
    bytes = (bytes + 7) & ~size_t{7};
    if (bytes > remaining_) return AllocateSlow(bytes);
    char* result = next_;
    next_ += bytes;
    remaining_ -= bytes;
    return result;
  }

  size_t MemoryUsage() const { return usage_.load(std::memory_order_relaxed); }

 private:
  char* AllocateSlow(size_t bytes) {
    if (bytes > chunk_size_ / 4) {  // large: its own chunk, keep the current one
      chunks_.emplace_back(new uint64_t[bytes / 8]);
      usage_.fetch_add(bytes, std::memory_order_relaxed);
      return reinterpret_cast<char*>(chunks_.back().get());
    }
    chunks_.emplace_back(new uint64_t[chunk_size_ / 8]);
    usage_.fetch_add(chunk_size_, std::memory_order_relaxed);
    next_ = reinterpret_cast<char*>(chunks_.back().get()) + bytes;
    remaining_ = chunk_size_ - bytes;
    return next_ - bytes;
  }

  const size_t chunk_size_;
  char* next_ = nullptr;
  size_t remaining_ = 0;
  std::vector<std::unique_ptr<uint64_t[]>> chunks_;
  std::atomic<size_t> usage_{0};
};

}  // namespace jigsaw

#endif  // JIGSAW_UTIL_ARENA_H_
