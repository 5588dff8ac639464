// Index memory: zeroed DRAM for indexes probed at random, such as the pmem
// blocks' hash indexes, carved out of 2 MiB slabs that the kernel is asked to
// back with transparent huge pages (madvise(MADV_HUGEPAGE)). A probe into an
// index spread over 4 KiB pages costs a TLB miss on top of its cache miss
// (a few thousand pages for a million entries); over 2 MiB pages it costs
// the cache miss alone. Where the kernel gives no huge pages (THP off) the
// memory is plain 4 KiB pages and works the same.
//
// A slab is cut into 64 KiB units; an allocation takes contiguous units of
// one slab (at most 32 KiB wasted on average), or, above one slab, a mapping
// of its own rounded up to 2 MiB. A slab whose units are all free is
// unmapped.
//
// Thread-safety: Allocate and the deleter may be called from any thread
// (one mutex; they run when an index is built or dropped, not per probe).
#ifndef JIGSAW_UTIL_INDEX_MEMORY_H_
#define JIGSAW_UTIL_INDEX_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <memory>

namespace jigsaw {

struct IndexMemoryDeleter {
  size_t bytes = 0;  // as allocated
  void operator()(uint64_t* words) const;
};
using IndexWords = std::unique_ptr<uint64_t[], IndexMemoryDeleter>;

// `count` zeroed 8-byte words, 64-byte aligned; null if the memory cannot be
// mapped.
IndexWords AllocateIndexWords(size_t count);

// Bytes currently mapped for index memory (slabs and large mappings), for
// tests and statistics.
size_t IndexMemoryMappedBytes();

}  // namespace jigsaw

#endif  // JIGSAW_UTIL_INDEX_MEMORY_H_
