// How much pmem pool a database needs (docs/sizing.md is the rule written
// out). Everything the engine keeps in the pool is a libpmemobj object of
// whole 256 KiB chunks (docs/pool_layout.md); these functions count in those
// chunks, so that the rule, the engine's standby space and its NoSpace
// messages agree.
//
// Thread-safety: pure functions of their arguments.
#ifndef JIGSAW_PMEM_POOL_SIZING_H_
#define JIGSAW_PMEM_POOL_SIZING_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "jigsaw/options.h"
#include "jigsaw/status.h"

namespace jigsaw {

// A pool object's unit: a libpmemobj heap chunk, less the 16-byte header
// every object carries.
inline constexpr uint64_t kPoolChunk = 256 << 10;
inline constexpr uint64_t kPoolChunkHeader = 16;

// Chunks an object with `usable` bytes occupies.
inline uint64_t ObjectChunks(uint64_t usable) {
  return (usable + kPoolChunkHeader + kPoolChunk - 1) / kPoolChunk;
}

// Chunks of the pool's heap that objects can use: the pool less
// libpmemobj's own metadata (lanes, headers: 4 MiB, and 512 KiB per further
// 16 GiB zone; measured with libpmemobj 1.12).
uint64_t PoolHeapChunks(uint64_t pool_size);

// Bytes of a WAL segment for memtables of `memtable_size` (before a larger
// first record is accounted for): 1.5 x memtable_size, 4 KiB-aligned, and
// trimmed so that its header does not spill into one more chunk.
uint64_t WalSegmentCapacity(size_t memtable_size);

// Chunks at most one compaction output block in pmem occupies: the whole
// chunks block_size fills (at least one).
uint64_t OutputBlockChunks(size_t block_size);

// Bytes the DB holds back as standby space in a pool of `pool_size`: room
// for the largest compaction (L1 plus a stopped L0) and a memtable switch,
// at least what CompactRange and one memtable of deletes need, clamped to
// 1/8 .. 1/4 of the pool.
uint64_t StandbyBytes(const Options& options, uint64_t pool_size);

// Standby chunks CompactRange needs in a full pool: a memtable switch and
// flush (a WAL segment and an L0 block), then its smallest step -- one L0
// block and one L1 block rewritten beside themselves, and a manifest.
uint64_t CompactRangeReserveChunks(const Options& options);
// Standby chunks one memtable of deletes takes while it is switched out and
// flushed (a WAL segment and an L0 block). Deletes in a full pool may use
// the standby down to CompactRangeReserveChunks + this.
uint64_t DeleteCycleChunks(const Options& options);

// The smallest pool (a whole number of MiB, at least 16 MiB) in which a
// database with `options` works: see docs/sizing.md. 0 in disk-only mode.
uint64_t MinimumPoolSize(const Options& options);

// OK, or InvalidArgument naming pmem_pool_size, memtable_size and the sizes
// that would fit, when options.pmem_pool_size is below
// MinimumPoolSize(options). Only options that may create a pool
// (create_if_missing, not kDisk) are checked.
Status CheckPoolSize(const Options& options);

// "12.5 MiB", "640 KiB", "3.0 GiB": sizes in messages.
std::string FormatBytes(uint64_t bytes);

}  // namespace jigsaw

#endif  // JIGSAW_PMEM_POOL_SIZING_H_
