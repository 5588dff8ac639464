// BlockCache: a sharded CLOCK cache of raw KeySet blocks read from SSD tables.
//
// An entry is the block's bytes exactly as stored on the SSD (and as they
// would be in pmem) plus a BlockReader over them: filling the cache is one
// read and a checksum check, never a decode. Entries are shared_ptr: a
// reader holding one keeps the bytes alive after eviction.
//
// Thread-safety: all methods may be called concurrently.
#ifndef JIGSAW_SSD_BLOCK_CACHE_H_
#define JIGSAW_SSD_BLOCK_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "format/block.h"
#include "format/keyset_pieces.h"
#include "ssd/block_compression.h"

namespace jigsaw::ssd {

// A cached block, or a split-compressed block's key part (its bytes without
// its value region, docs/ssd_format.md): then `reader` is a key part's
// (keyset::OpenKeyPartReader), and split_head, parsed from the head copied
// into `buffer` after the key part, locates the value groups' frames.
struct CachedBlock {
  std::unique_ptr<uint64_t[]> buffer;  // 8-byte aligned block bytes
  size_t size = 0;
  std::unique_ptr<BlockReader> reader;
  SplitHead split_head;
  // The block's checksum has been verified (set once, by any reader).
  mutable std::atomic<bool> checksum_verified{false};
  const char* data() const { return reinterpret_cast<const char*>(buffer.get()); }
};
using CachedBlockRef = std::shared_ptr<const CachedBlock>;

class BlockCache {
 public:
  // capacity: bytes of block data kept (0: nothing is kept).
  explicit BlockCache(size_t capacity);

  // A block's key part is cached as block `block | kKeyPartBit` of its
  // table (tables have fewer blocks); EraseTable drops both.
  static constexpr uint32_t kKeyPartBit = 1u << 23;

  // The block `block` of table `table`, or nullptr.
  CachedBlockRef Lookup(uint64_t table, uint32_t block);
  // Whether the block is cached, without counting a hit or miss or touching
  // its recency (for planning batched reads).
  bool Contains(uint64_t table, uint32_t block);
  // Inserts (replacing an entry of the same key) and evicts entries in CLOCK
  // order beyond the capacity. Returns `value`.
  CachedBlockRef Insert(uint64_t table, uint32_t block, CachedBlockRef value);
  // Drops blocks [0, blocks) of a table (a deleted file), key parts too.
  void EraseTable(uint64_t table, uint32_t blocks);

  size_t capacity() const { return capacity_; }
  size_t usage() const;
  uint64_t hits() const { return hits_.load(std::memory_order_relaxed); }
  uint64_t misses() const { return misses_.load(std::memory_order_relaxed); }

 private:
  static constexpr int kShards = 16;
  // A shard keeps its entries in an array (a removed entry leaves a hole for
  // the next insert), found through an open-addressing index of (key, entry)
  // slots -- linear probing, at most half full -- and evicts in CLOCK order:
  // a hit sets the entry's reference bit; the hand clears set bits as it
  // passes and evicts the first entry without one. A hit reads one index
  // line and its entry, and writes nothing else.
  struct Entry {
    uint64_t key = 0;
    CachedBlockRef value;  // nullptr: a hole
    bool referenced = false;
  };
  struct Slot {
    uint64_t key = 0;
    uint32_t entry = 0;  // index into entries + 1; 0: empty
  };
  struct Shard {
    std::mutex mu;
    std::vector<Slot> slots;  // a power of two in size, or empty
    std::vector<Entry> entries;
    std::vector<uint32_t> holes;  // indices of entries without a value
    size_t hand = 0;
    size_t usage = 0;
    // All require mu.
    Slot* Find(uint64_t key);
    void Add(uint64_t key, CachedBlockRef value);
    void Remove(Slot* slot);
    void EvictBeyond(size_t capacity);

   private:
    size_t Home(uint64_t key) const;
    // Puts a slot into the first empty place of its probe run.
    void Place(const Slot& slot);
    void Grow();
  };
  static uint64_t Key(uint64_t table, uint32_t block) { return (table << 24) | block; }
  Shard& ShardFor(uint64_t key) { return shards_[(key * 0x9E3779B97F4A7C15ULL) >> 60]; }

  const size_t capacity_;
  Shard shards_[kShards];
  std::atomic<uint64_t> hits_{0};
  std::atomic<uint64_t> misses_{0};
};

}  // namespace jigsaw::ssd

#endif  // JIGSAW_SSD_BLOCK_CACHE_H_
