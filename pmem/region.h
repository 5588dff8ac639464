// Region: the one path by which JigsawDB makes bytes persistent.
//
// Every store the engine wants durable -- block bytes, WAL records, manifest
// records, root fields -- is followed by Flush/Drain or Persist on the region
// that maps it. Implementations: PmemRegion (libpmem on a real or emulated
// pmem mapping, or msync where the mapping is not pmem). Crash tests do not
// substitute a Region: the power-failure simulator sits one layer lower, at
// libpmem's API (emulation/power_failure.h), so it also sees libpmemobj's
// own persists.
//
// Thread-safety: all methods may be called concurrently.
#ifndef JIGSAW_PMEM_REGION_H_
#define JIGSAW_PMEM_REGION_H_

#include <cstddef>

namespace jigsaw::pmem {

class Region {
 public:
  virtual ~Region() = default;

  // True when CPU cache flushes make stores durable (DAX pmem, or emulated).
  virtual bool is_pmem() const = 0;

  // Starts writing [addr, addr + len) back to the persistence domain. Not
  // ordered or complete until Drain.
  virtual void Flush(const void* addr, size_t len) = 0;
  // Waits until every earlier Flush (and MemcpyNoDrain) of this thread is
  // durable.
  virtual void Drain() = 0;
  // Flush + Drain: [addr, addr + len) is durable on return.
  void Persist(const void* addr, size_t len) {
    Flush(addr, len);
    Drain();
  }
  // Copies and flushes (non-temporal stores for large copies on pmem); durable
  // after the next Drain.
  virtual void MemcpyNoDrain(void* dest, const void* src, size_t len) = 0;
};

// A region over a mapping that libpmem can flush. With `cpu_flush` (real or
// emulated pmem) it uses pmem_flush/pmem_drain/pmem_memcpy_nodrain: cache-line
// flushes and a fence; otherwise pmem_msync.
class PmemRegion final : public Region {
 public:
  explicit PmemRegion(bool cpu_flush) : is_pmem_(cpu_flush) {}
  bool is_pmem() const override { return is_pmem_; }
  void Flush(const void* addr, size_t len) override;
  void Drain() override;
  void MemcpyNoDrain(void* dest, const void* src, size_t len) override;

 private:
  const bool is_pmem_;
};

}  // namespace jigsaw::pmem

#endif  // JIGSAW_PMEM_REGION_H_
