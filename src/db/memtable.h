// MemTable: the DRAM write buffer, a concurrent skiplist whose nodes are
// KeySet entries with DRAM meanings (format/keyset_node.h): the index field
// points to the value bytes and the links are node pointers. Values are packed back
// to back in a value log, in the order they were added, and each node knows
// its value's offset in that log: a flush copies the log as the block's
// value buffer in bulk and writes each entry with that offset as its index
// (docs/design/002-flush-by-copy.md), never an encoding.
//
// Thread-safety: any number of concurrent readers (Get, iterators), without
// locks: links are published with release stores and read with acquire
// loads; nodes are never removed while the memtable lives. Writers either
// one at a time (Add) or several at once (AddConcurrently); the two kinds
// never overlap -- the caller orders every Add after the AddConcurrently
// calls before it (the DB's writer queue does, under its mutex) and the
// other way round.
#ifndef JIGSAW_DB_MEMTABLE_H_
#define JIGSAW_DB_MEMTABLE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "format/block.h"
#include "format/dbformat.h"
#include "format/keyset_block.h"
#include "table/range_tombstones.h"
#include "util/arena.h"
#include "util/key_prefix.h"
#include "util/mutex.h"

namespace jigsaw {

class MemTable {
 public:
  // arena_chunk: bytes the arena allocates at a time (the memory-usage
  // granularity); callers pass a fraction of the memtable size.
  // filter_bytes: size of the whole-key Bloom filter (rounded up to 64-byte
  // lines; 0 = none) that lets Get skip the skiplist for keys never added.
  explicit MemTable(const Comparator* comparator, size_t arena_chunk = 1 << 20, size_t filter_bytes = 0);
  MemTable(const MemTable&) = delete;
  MemTable& operator=(const MemTable&) = delete;

  // Adds an entry. Requires (key, sequence) to be new, and no other Add or
  // AddConcurrently running.
  void Add(SequenceNumber sequence, ValueType type, const Slice& key, const Slice& value);
  // The same, safe to call from several threads at once (not alongside
  // Add): space is taken under a short lock, the node is linked level by
  // level with compare-and-swap. A little slower than Add when alone.
  void AddConcurrently(SequenceNumber sequence, ValueType type, const Slice& key, const Slice& value);

  // The newest entry of `key` with sequence <= snapshot: true with *type,
  // *sequence and (for values) *value set, or false if the memtable has
  // none. Range tombstones are not consulted (range_tombstones()).
  bool Get(const Slice& key, SequenceNumber snapshot, ValueType* type, std::string* value,
           SequenceNumber* sequence) const;

  // Records the range tombstone [begin, end) of `sequence` (begin < end in
  // the comparator's order). Safe alongside Add, AddConcurrently, readers
  // and other calls of itself.
  void AddRangeTombstone(SequenceNumber sequence, const Slice& begin, const Slice& end);
  // Every range tombstone recorded so far (null if none); a reader filters
  // them by the sequence it reads at. Built once per change, on first ask.
  std::shared_ptr<const RangeTombstoneSet> range_tombstones() const;
  bool has_range_tombstones() const { return has_range_tombstones_.load(std::memory_order_acquire); }
  // Neither an entry nor a range tombstone: nothing to flush.
  bool empty() const { return num_entries() == 0 && !has_range_tombstones(); }
  const Comparator* comparator() const { return comparator_; }

  // Iterates in internal-key order over the entries with sequence <=
  // `visible`. A reader passes the sequence it reads at: entries that
  // writers add while it iterates are newer, so what it iterates over
  // never changes -- each step, back or forth, and each seek agrees with the
  // others. The memtable must outlive the iterator.
  std::unique_ptr<InternalIterator> NewIterator(SequenceNumber visible = kMaxSequenceNumber) const;

  // Bytes allocated for nodes and values.
  size_t ApproximateMemoryUsage() const { return arena_.MemoryUsage() + values_.MemoryUsage(); }

  // What a flush needs of one entry, in internal-key order: a KeySet
  // entry whose value lies at value_offset of the value log (see
  // CopyValuesTo), and where its bytes are now.
  using FlushEntry = keyset::PlacedEntry;
  // Calls f(const FlushEntry&) for every entry in internal-key order, and
  // copies the value log -- every value, in the order added, value_bytes()
  // in all -- to `dest`. Both require that no Add runs concurrently (the
  // memtable is immutable when it is flushed). With `reads_values` the
  // values are fetched ahead too, for a caller that reads each one (a
  // flush that copies the log whole does not).
  template <typename F>
  void ForEachEntry(F&& f, bool reads_values = false) const {
    ForEachEntryBatch(
        [&](const FlushEntry* entries, size_t n) {
          for (size_t i = 0; i < n; ++i) f(entries[i]);
        },
        reads_values);
  }
  // The same, a batch of consecutive entries at a time. The walk follows
  // several stretches of the skiplist at once (each bounded by nodes of a
  // level above, found the same way), so the cache misses of following
  // links overlap instead of queueing behind one another.
  void ForEachEntryBatch(const std::function<void(const FlushEntry*, size_t)>& visit, bool reads_values) const;
  void CopyValuesTo(char* dest) const { values_.CopyTo(dest); }
  uint64_t num_entries() const { return num_entries_.load(std::memory_order_acquire); }
  // For sizing a flush without walking the entries (keyset::BlockSizeBound):
  // the bytes of all values, and the sizing bytes of all keys
  // (keyset::SizingEntryBytes).
  uint64_t value_bytes() const { return value_bytes_.load(std::memory_order_relaxed); }
  uint64_t sizing_entry_bytes() const { return sizing_entry_bytes_.load(std::memory_order_relaxed); }

 private:
  friend class MemTableIterator;
  static constexpr int kMaxHeight = 12;

  // Values back to back in chunks, in the order their space was reserved;
  // a value that does not fit in the current chunk closes it and starts the
  // next (its own, exactly sized, if larger than a quarter chunk), so the
  // chunks' used bytes in order are the values in order. Reserve: one
  // caller at a time (alloc_mutex_ serialises concurrent writers); CopyTo
  // once every reserved value is copied in; MemoryUsage from any thread.
  class ValueLog {
   public:
    explicit ValueLog(size_t chunk_size) : chunk_size_(chunk_size) {}
    // Makes room for `size` (> 0) bytes after the last value and returns
    // where they go; the caller copies them there before CopyTo.
    char* Reserve(size_t size);
    void CopyTo(char* dest) const;
    size_t MemoryUsage() const { return usage_.load(std::memory_order_relaxed); }

   private:
    struct Chunk {
      std::unique_ptr<char[]> data;
      size_t used;
    };
    const size_t chunk_size_;
    size_t capacity_ = 0;  // of the last chunk
    std::vector<Chunk> chunks_;
    std::atomic<size_t> usage_{0};
  };

  // Node accessors over the KeySet entry layout. Each node is preceded by
  // one word the memtable keeps for itself: its value's offset in the log.
  static constexpr size_t kNodePrefix = 8;
  static Slice NodeKey(const char* node);
  static uint64_t NodeTag(const char* node);
  static Slice NodeValue(const char* node);
  static uint32_t NodeValueSize(const char* node);
  static uint32_t NodeKeyHash(const char* node);
  static uint64_t NodeValueOffset(const char* node);
  static char* Next(const char* node, int level);
  static void SetNext(char* node, int level, char* next);

  // A search target: (key, tag), with the key's prefix when bytewise.
  struct Target {
    Slice key;
    uint64_t tag;
    KeyPrefix prefix;
  };
  Target MakeTarget(const Slice& key, uint64_t tag) const {
    return Target{key, tag, bytewise_ ? LoadKeyPrefix(key) : KeyPrefix{}};
  }
  // Internal-key comparison of a node with the target.
  int CompareNode(const char* node, const Target& target) const;
  // First node >= (key, tag); fills prev[] when not null.
  char* FindGreaterOrEqual(const Slice& key, uint64_t tag, char** prev) const;
  // Last node < (key, tag), or nullptr.
  char* FindLessThan(const Slice& key, uint64_t tag) const;
  char* FindLast() const;
  static int RandomHeight(std::minstd_rand* rng);
  // The node of a new entry, its fields, key and value filled in and its
  // bits in the filter; not linked. Takes space under alloc_mutex_ when
  // `concurrently`.
  char* NewNode(int height, uint64_t tag, const Slice& key, const Slice& value, bool concurrently);
  // Makes tail_ the last node of each level again (after AddConcurrently).
  void RebuildTails();

  const Comparator* const comparator_;
  const bool bytewise_;  // comparator_ is BytewiseComparator(): compare inline
  Arena arena_;
  ValueLog values_;
  char* head_;
  std::atomic<int> max_height_{1};
  std::minstd_rand rng_;  // Add's
  // Serialises the space taking of concurrent writers: the arena, the value
  // log and value_bytes_ (a value's offset in the log is value_bytes_ when
  // its space is taken). Add, alone, does not take it.
  std::mutex alloc_mutex_;
  std::atomic<uint64_t> num_entries_{0};
  std::atomic<uint64_t> value_bytes_{0};
  std::atomic<uint64_t> sizing_entry_bytes_{0};
  // Add's own: the last node of each level (head_ while a level is empty).
  // An entry larger than tail_[0] is appended after them without a search,
  // which makes sequential inserts O(1). AddConcurrently does not keep them
  // and marks them stale; the next Add rebuilds them.
  char* tail_[kMaxHeight];
  std::atomic<bool> tails_stale_{false};
  // Whole-key filter (RocksDB's memtable_whole_key_filtering), in the
  // KeySet format's split-block layout over the keys' stored hashes. Add
  // sets bits with a relaxed load and store per word, AddConcurrently with
  // fetch_or; a key's bits are set before its node is linked and so before
  // its sequence number is published, hence before any read that may see
  // it.
  bloom::Geometry filter_geometry_;
  std::unique_ptr<std::atomic<uint64_t>[]> filter_;

  mutable Mutex range_mutex_;
  std::vector<RangeTombstone> range_list_ GUARDED_BY(range_mutex_);
  // range_list_ as a set; null when a tombstone was added since it was built.
  mutable std::shared_ptr<const RangeTombstoneSet> range_set_ GUARDED_BY(range_mutex_);
  // Set (release) after the first tombstone is in range_list_.
  std::atomic<bool> has_range_tombstones_{false};
};

}  // namespace jigsaw

#endif  // JIGSAW_DB_MEMTABLE_H_
