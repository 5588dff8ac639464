// NvmTiming: the NVM timing model (docs/emulation.md). Adds busy-waited
// latency to persists and random block reads, and caps the write bandwidth,
// so that DRAM-emulated pmem behaves like a slower medium in benchmarks.
//
// The engine holds an NvmTiming only when Options::nvm_timing is enabled;
// with the model off nothing in this file runs.
//
// Thread-safety: all methods may be called concurrently. The bandwidth cap
// is shared by all threads (one medium); latencies are per calling thread.
#ifndef JIGSAW_PMEM_NVM_TIMING_H_
#define JIGSAW_PMEM_NVM_TIMING_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "jigsaw/options.h"
#include "jigsaw/status.h"
#include "pmem/region.h"

namespace jigsaw::pmem {

inline constexpr size_t kCacheLine = 64;
inline constexpr size_t kMediaWriteUnit = 256;

// InvalidArgument naming the field if a value is negative or not finite.
Status ValidateTimingModel(const NvmTimingModel& model);

class NvmTiming {
 public:
  // Requires ValidateTimingModel(model).ok().
  explicit NvmTiming(const NvmTimingModel& model);

  // Charges one random read of a block region (returns after the latency).
  void ChargeRandomRead() const;
  // Random reads charged so far, by all threads.
  uint64_t random_reads_charged() const { return random_reads_.load(std::memory_order_relaxed); }
  // Charges making [addr, addr + len) durable: returns after the per-line and
  // per-unit latency and once the medium's bandwidth has absorbed the units.
  void ChargePersist(const void* addr, size_t len);

  const NvmTimingModel& model() const { return model_; }

 private:
  const NvmTimingModel model_;
  const double ns_per_unit_;  // media time of one write unit at the cap
  mutable std::atomic<uint64_t> random_reads_{0};
  // Steady-clock nanosecond at which the medium has absorbed every write
  // charged so far.
  std::atomic<int64_t> medium_free_at_ns_{0};
};

// A Region that charges the timing model for every persist of `base`.
// Flushes are charged when drained (the fence is where a writer waits).
class TimingRegion final : public pmem::Region {
 public:
  // `timing` must outlive the region.
  TimingRegion(std::unique_ptr<pmem::Region> base, NvmTiming* timing);
  bool is_pmem() const override { return base_->is_pmem(); }
  void Flush(const void* addr, size_t len) override;
  void Drain() override;
  void MemcpyNoDrain(void* dest, const void* src, size_t len) override;

 private:
  std::unique_ptr<pmem::Region> base_;
  NvmTiming* const timing_;
};

}  // namespace jigsaw::pmem

#endif  // JIGSAW_PMEM_NVM_TIMING_H_
