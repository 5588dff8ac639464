#include "pmem/pool_sizing.h"

#include <algorithm>
#include <cstdio>

namespace jigsaw {

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kFloor = 16 * kMiB;  // pmem::Pool::kMinPoolSize

// Chunks of the objects the rule counts (docs/sizing.md, "The rule").
uint64_t FlushChunks(const Options& o) { return ObjectChunks(o.memtable_size); }  // an L0 block
uint64_t WalChunks(const Options& o) { return ObjectChunks(WalSegmentCapacity(o.memtable_size)); }

// Chunks the options need outside the standby: every memtable's WAL
// segment; L0 up to its compaction trigger and that compaction's outputs
// beside it (one output block of rounding); the manifest and its successor
// during a commit.
uint64_t WorkingChunks(const Options& o) {
  const uint64_t memtables = 1 + static_cast<uint64_t>(std::max(o.max_immutable_memtables, 1));
  const uint64_t trigger = static_cast<uint64_t>(std::max(o.level0_compaction_trigger, 1));
  return memtables * WalChunks(o) + 2 * trigger * FlushChunks(o) + OutputBlockChunks(o.TableSize()) + 2;
}

bool Fits(const Options& o, uint64_t pool_size) {
  const uint64_t heap = PoolHeapChunks(pool_size);
  const uint64_t standby = StandbyBytes(o, pool_size) / kPoolChunk;
  // The standby holds what CompactRange needs in a full pool, and room for
  // at least one memtable of deletes before it.
  return heap >= standby + WorkingChunks(o) && standby >= CompactRangeReserveChunks(o) + DeleteCycleChunks(o);
}

}  // namespace

uint64_t CompactRangeReserveChunks(const Options& o) {
  return WalChunks(o) + 2 * FlushChunks(o) + OutputBlockChunks(o.TableSize()) + 2;
}

uint64_t DeleteCycleChunks(const Options& o) { return WalChunks(o) + FlushChunks(o); }

uint64_t PoolHeapChunks(uint64_t pool_size) {
  constexpr uint64_t kZone = uint64_t{16} << 30;
  const uint64_t overhead = 4 * kMiB + (pool_size / kZone) * (512 << 10);
  return pool_size > overhead ? (pool_size - overhead) / kPoolChunk : 0;
}

uint64_t WalSegmentCapacity(size_t memtable_size) {
  const uint64_t target = (uint64_t{memtable_size} + memtable_size / 2 + 4095) & ~uint64_t{4095};
  const uint64_t chunks = (target + kPoolChunk - 1) / kPoolChunk;
  return std::min(target, chunks * kPoolChunk - 4096);
}

uint64_t OutputBlockChunks(size_t block_size) {
  return std::max<uint64_t>(1, (uint64_t{block_size} + kPoolChunkHeader) / kPoolChunk);
}

uint64_t StandbyBytes(const Options& o, uint64_t pool_size) {
  uint64_t standby = o.level1_size +
                     static_cast<uint64_t>(std::max(o.level0_stop_trigger, 0)) * (o.TableSize() + kPoolChunk) +
                     3 * uint64_t{o.memtable_size};
  // Never less than CompactRange and one memtable of deletes need (large
  // memtables beside a small L1).
  standby = std::max(standby, (CompactRangeReserveChunks(o) + DeleteCycleChunks(o)) * kPoolChunk);
  return std::clamp<uint64_t>(standby, pool_size / 8, pool_size / 4);
}

uint64_t MinimumPoolSize(const Options& o) {
  if (o.storage_mode == StorageMode::kDisk) return 0;
  if (Fits(o, kFloor)) return kFloor;
  uint64_t low = kFloor / kMiB;  // does not fit
  uint64_t high = 2 * low;
  while (!Fits(o, high * kMiB)) {
    low = high;
    high *= 2;
  }
  while (high - low > 1) {  // fits at `high`, not at `low`
    const uint64_t mid = low + (high - low) / 2;
    (Fits(o, mid * kMiB) ? high : low) = mid;
  }
  return high * kMiB;
}

Status CheckPoolSize(const Options& o) {
  if (o.storage_mode == StorageMode::kDisk || !o.create_if_missing) return Status::OK();
  const uint64_t minimum = MinimumPoolSize(o);
  if (o.pmem_pool_size >= minimum) return Status::OK();
  std::string message = FormatBytes(o.pmem_pool_size) + " is too small for memtable_size " +
                        FormatBytes(o.memtable_size) + " (max_immutable_memtables " +
                        std::to_string(o.max_immutable_memtables) + ", level0_compaction_trigger " +
                        std::to_string(o.level0_compaction_trigger) + ", table_size " + FormatBytes(o.TableSize()) +
                        "): these options need a pool of at least " + std::to_string(minimum / kMiB) + " MiB (" +
                        std::to_string(minimum) + " bytes)";
  // The largest memtable (in 64 KiB steps) this pool holds with the other
  // options unchanged, if any.
  Options smaller = o;
  uint64_t low = 0, high = (uint64_t{1} << 30) / (64 << 10) + 1;  // units of 64 KiB; fits at low (if > 0)
  while (o.pmem_pool_size >= kFloor && high - low > 1) {
    const uint64_t mid = low + (high - low) / 2;
    smaller.memtable_size = static_cast<size_t>(mid * (64 << 10));
    (Fits(smaller, o.pmem_pool_size) ? low : high) = mid;
  }
  if (low > 0) {
    message += "; a " + FormatBytes(o.pmem_pool_size) + " pool fits memtable_size up to " +
               FormatBytes(low * (64 << 10));
  }
  return Status::InvalidArgument("pmem_pool_size", message + " (docs/sizing.md)");
}

std::string FormatBytes(uint64_t bytes) {
  char text[32];
  if (bytes < kMiB) {
    std::snprintf(text, sizeof(text), "%.0f KiB", static_cast<double>(bytes) / 1024);
  } else if (bytes < (uint64_t{1} << 30)) {
    std::snprintf(text, sizeof(text), "%.1f MiB", static_cast<double>(bytes) / kMiB);
  } else {
    std::snprintf(text, sizeof(text), "%.1f GiB", static_cast<double>(bytes) / (uint64_t{1} << 30));
  }
  return text;
}

}  // namespace jigsaw
