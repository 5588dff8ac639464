#include "util/index_memory.h"

#include <sys/mman.h>

#include <bit>
#include <cstring>
#include <map>
#include <mutex>

namespace jigsaw {

namespace {

constexpr size_t kSlabBytes = size_t{2} << 20;
constexpr size_t kUnitBytes = size_t{64} << 10;
constexpr uint32_t kUnitsPerSlab = kSlabBytes / kUnitBytes;  // 32: one bit each in a uint32_t
static_assert(kUnitsPerSlab == 32);

// A mapping of `bytes` (a multiple of 2 MiB) at a 2 MiB boundary, so that
// the kernel can back it with huge pages; null if none.
char* MapAligned(size_t bytes) {
  void* raw = ::mmap(nullptr, bytes + kSlabBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t aligned = (start + kSlabBytes - 1) & ~(kSlabBytes - 1);
  if (aligned > start) ::munmap(raw, aligned - start);
  const uintptr_t end = start + bytes + kSlabBytes;
  if (end > aligned + bytes) ::munmap(reinterpret_cast<void*>(aligned + bytes), end - (aligned + bytes));
  char* memory = reinterpret_cast<char*>(aligned);
#ifdef MADV_HUGEPAGE
  (void)::madvise(memory, bytes, MADV_HUGEPAGE);  // a hint: without THP, 4 KiB pages
#endif
  return memory;
}

// An allocation above one slab: its own mapping of whole slabs.
size_t LargeMappingBytes(size_t bytes) { return (bytes + kSlabBytes - 1) & ~(kSlabBytes - 1); }
// An allocation within a slab: its units, as a bitmap run from bit 0.
uint32_t UnitRun(size_t bytes) {
  const auto units = static_cast<uint32_t>((bytes + kUnitBytes - 1) / kUnitBytes);
  return units == kUnitsPerSlab ? ~uint32_t{0} : (uint32_t{1} << units) - 1;
}

class IndexMemory {
 public:
  char* Allocate(size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (bytes > kSlabBytes) {
      const size_t mapped = LargeMappingBytes(bytes);
      char* memory = MapAligned(mapped);
      if (memory != nullptr) mapped_bytes_ += mapped;
      return memory;  // fresh anonymous memory is zero
    }
    const uint32_t run = UnitRun(bytes);
    const auto units = static_cast<uint32_t>(std::popcount(run));
    for (auto& [base, used] : slabs_) {
      for (uint32_t first = 0; first + units <= kUnitsPerSlab; ++first) {
        if ((used & (run << first)) == 0) {
          used |= run << first;
          char* memory = reinterpret_cast<char*>(base) + size_t{first} * kUnitBytes;
          std::memset(memory, 0, size_t{units} * kUnitBytes);  // units freed before hold old words
          return memory;
        }
      }
    }
    char* slab = MapAligned(kSlabBytes);
    if (slab == nullptr) return nullptr;
    mapped_bytes_ += kSlabBytes;
    slabs_[reinterpret_cast<uintptr_t>(slab)] = run;
    return slab;
  }

  void Free(char* memory, size_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (bytes > kSlabBytes) {
      ::munmap(memory, LargeMappingBytes(bytes));
      mapped_bytes_ -= LargeMappingBytes(bytes);
      return;
    }
    const auto address = reinterpret_cast<uintptr_t>(memory);
    auto slab = slabs_.find(address & ~(kSlabBytes - 1));
    if (slab == slabs_.end()) return;  // not ours: cannot happen
    const uint32_t run = UnitRun(bytes);
    const auto first = static_cast<uint32_t>((address - slab->first) / kUnitBytes);
    slab->second &= ~(run << first);
    if (slab->second == 0) {
      ::munmap(reinterpret_cast<void*>(slab->first), kSlabBytes);
      mapped_bytes_ -= kSlabBytes;
      slabs_.erase(slab);
    }
  }

  size_t mapped_bytes() {
    std::lock_guard<std::mutex> lock(mu_);
    return mapped_bytes_;
  }

 private:
  std::mutex mu_;
  std::map<uintptr_t, uint32_t> slabs_;  // slab address -> its used units, bit i = unit i
  size_t mapped_bytes_ = 0;
};

// Never destroyed: indexes may be freed during static destruction.
IndexMemory& Memory() {
  static IndexMemory* const memory = new IndexMemory();
  return *memory;
}

}  // namespace

void IndexMemoryDeleter::operator()(uint64_t* words) const {
  if (words != nullptr) Memory().Free(reinterpret_cast<char*>(words), bytes);
}

IndexWords AllocateIndexWords(size_t count) {
  const size_t bytes = count * sizeof(uint64_t);
  if (count == 0 || bytes / sizeof(uint64_t) != count) return IndexWords(nullptr, IndexMemoryDeleter{0});
  return IndexWords(reinterpret_cast<uint64_t*>(Memory().Allocate(bytes)), IndexMemoryDeleter{bytes});
}

size_t IndexMemoryMappedBytes() { return Memory().mapped_bytes(); }

}  // namespace jigsaw
