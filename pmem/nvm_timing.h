// NvmTiming: the NVM timing model (docs/emulation.md). Adds busy-waited
// latency to persists and random block reads, and caps the write and read
// bandwidths, so that DRAM-emulated pmem behaves like a slower medium in
// benchmarks.
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
  // Charges streaming `bytes` out of the medium: returns once the read
  // bandwidth has delivered them after every read charged before (by any
  // thread). Free when the model has no read cap.
  void ChargeSequentialRead(uint64_t bytes) const;
  // Bytes charged by ChargeSequentialRead so far, by all threads.
  uint64_t sequential_read_bytes_charged() const { return read_bytes_.load(std::memory_order_relaxed); }

  const NvmTimingModel& model() const { return model_; }

 private:
  const NvmTimingModel model_;
  const double ns_per_unit_;       // media time of one write unit at the cap
  const double ns_per_read_byte_;  // media time of one byte read at the cap
  mutable std::atomic<uint64_t> random_reads_{0};
  mutable std::atomic<uint64_t> read_bytes_{0};
  // Steady-clock nanosecond at which the medium has absorbed every write
  // charged so far.
  std::atomic<int64_t> medium_free_at_ns_{0};
  // The same for reads (reads and writes are queued separately: Optane's
  // read and write bandwidths are measured and capped apart).
  mutable std::atomic<int64_t> read_free_at_ns_{0};
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
