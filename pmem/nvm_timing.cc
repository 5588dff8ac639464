#include "pmem/nvm_timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

namespace jigsaw::pmem {

namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void SpinUntil(int64_t deadline_ns) {
  while (NowNs() < deadline_ns) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

void SpinFor(double ns) {
  if (ns >= 1) SpinUntil(NowNs() + static_cast<int64_t>(ns));
}

size_t UnitsSpanned(const void* addr, size_t len, size_t unit) {
  if (len == 0) return 0;
  const auto begin = reinterpret_cast<uintptr_t>(addr);
  return (begin + len - 1) / unit - begin / unit + 1;
}

// Queues `media_ns` of work on a medium whose queue drains at *free_at_ns
// (shared by all threads) and returns when that work will be done.
int64_t Enqueue(std::atomic<int64_t>* free_at_ns, int64_t media_ns) {
  const int64_t now = NowNs();
  int64_t free_at = free_at_ns->load(std::memory_order_relaxed);
  int64_t finish;
  do {
    finish = std::max(free_at, now) + media_ns;
  } while (!free_at_ns->compare_exchange_weak(free_at, finish, std::memory_order_relaxed));
  return finish;
}

// Flushed ranges of this thread not yet drained.
struct PendingFlushes {
  std::vector<std::pair<const void*, size_t>> ranges;
};
thread_local PendingFlushes pending;

}  // namespace

Status ValidateTimingModel(const NvmTimingModel& model) {
  const std::pair<const char*, double> fields[] = {
      {"nvm_timing.persist_line_ns", model.persist_line_ns},
      {"nvm_timing.write_unit_ns", model.write_unit_ns},
      {"nvm_timing.random_read_ns", model.random_read_ns},
      {"nvm_timing.write_bandwidth_bytes_per_sec", model.write_bandwidth_bytes_per_sec},
      {"nvm_timing.read_bandwidth_bytes_per_sec", model.read_bandwidth_bytes_per_sec},
  };
  for (const auto& [name, value] : fields) {
    if (!std::isfinite(value) || value < 0) return Status::InvalidArgument(name, "must be a finite number >= 0");
  }
  return Status::OK();
}

NvmTiming::NvmTiming(const NvmTimingModel& model)
    : model_(model),
      ns_per_unit_(model.write_bandwidth_bytes_per_sec > 0
                       ? 1e9 * static_cast<double>(kMediaWriteUnit) / model.write_bandwidth_bytes_per_sec
                       : 0),
      ns_per_read_byte_(model.read_bandwidth_bytes_per_sec > 0 ? 1e9 / model.read_bandwidth_bytes_per_sec : 0) {}

void NvmTiming::ChargeRandomRead() const {
  random_reads_.fetch_add(1, std::memory_order_relaxed);
  SpinFor(model_.random_read_ns);
}

void NvmTiming::ChargeSequentialRead(uint64_t bytes) const {
  if (ns_per_read_byte_ == 0 || bytes == 0) return;
  read_bytes_.fetch_add(bytes, std::memory_order_relaxed);
  SpinUntil(Enqueue(&read_free_at_ns_, static_cast<int64_t>(static_cast<double>(bytes) * ns_per_read_byte_)));
}

void NvmTiming::ChargePersist(const void* addr, size_t len) {
  const size_t lines = UnitsSpanned(addr, len, kCacheLine);
  const size_t units = UnitsSpanned(addr, len, kMediaWriteUnit);
  const double latency_ns =
      static_cast<double>(lines) * model_.persist_line_ns + static_cast<double>(units) * model_.write_unit_ns;
  int64_t done_ns = NowNs() + static_cast<int64_t>(latency_ns);
  if (ns_per_unit_ > 0) {
    // The medium takes the units one after another: this persist completes
    // when the medium has absorbed everything queued before it and its own.
    done_ns = std::max(done_ns,
                       Enqueue(&medium_free_at_ns_, static_cast<int64_t>(static_cast<double>(units) * ns_per_unit_)));
  }
  SpinUntil(done_ns);
}

TimingRegion::TimingRegion(std::unique_ptr<pmem::Region> base, NvmTiming* timing)
    : base_(std::move(base)), timing_(timing) {}

void TimingRegion::Flush(const void* addr, size_t len) {
  base_->Flush(addr, len);
  if (len != 0) pending.ranges.emplace_back(addr, len);
}

void TimingRegion::Drain() {
  base_->Drain();
  for (const auto& [addr, len] : pending.ranges) timing_->ChargePersist(addr, len);
  pending.ranges.clear();
}

void TimingRegion::MemcpyNoDrain(void* dest, const void* src, size_t len) {
  base_->MemcpyNoDrain(dest, src, len);
  if (len != 0) pending.ranges.emplace_back(dest, len);
}

}  // namespace jigsaw::pmem
