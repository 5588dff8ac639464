#include "pmem/region.h"

#include <libpmem.h>

#include <cstring>

namespace jigsaw::pmem {

void PmemRegion::Flush(const void* addr, size_t len) {
  if (len == 0) return;
  if (is_pmem_) {
    pmem_flush(addr, len);
  } else {
    // A page-cache mapping: msync writes the pages back (and is already
    // ordered, so Drain has nothing left to do).
    pmem_msync(addr, len);
  }
}

void PmemRegion::Drain() {
  if (is_pmem_) pmem_drain();
}

void PmemRegion::MemcpyNoDrain(void* dest, const void* src, size_t len) {
  if (len == 0) return;
  if (is_pmem_) {
    pmem_memcpy_nodrain(dest, src, len);
  } else {
    std::memcpy(dest, src, len);
    pmem_msync(dest, len);
  }
}

}  // namespace jigsaw::pmem
