// Table: one unit of an LSM level -- a KeySet block in pmem
// (pmem/pmem_table.h) or a table file of KeySet blocks on SSD (ssd/table.h).
// The engine reads both through this interface.
//
// Thread-safety: const methods may be called concurrently.
#ifndef JIGSAW_TABLE_TABLE_H_
#define JIGSAW_TABLE_TABLE_H_

#include <cstdint>
#include <memory>
#include <string>

#include "format/block.h"
#include "jigsaw/file_system.h"
#include "jigsaw/options.h"
#include "util/profile_clock.h"

namespace jigsaw {

// The blocks of a table (or of a level's tables) as bytes, in key order,
// for a merge that copies entries instead of iterating them
// (compaction/merge.h, MergeBlockScans). Thread-safety: one thread at a time.
class BlockScan {
 public:
  virtual ~BlockScan() = default;
  // Sets *block to the next block's bytes, which stay valid until the next
  // call or the scan's destruction. False at the end or on an error
  // (status() tells which).
  virtual bool NextBlock(Slice* block) = 0;
  virtual Status status() const = 0;
};

// A scan of the one block at `block` (which must outlive it).
std::unique_ptr<BlockScan> NewSingleBlockScan(const Slice& block);

class Table {
 public:
  virtual ~Table() = default;
  // The newest entry of user_key with sequence <= snapshot: OK with *type
  // and *sequence set (and *value when it is a value), NotFound if the table
  // has none, Corruption or IOError if it cannot be read. `options`: of the
  // read (only verify_checksums matters here; the snapshot is `snapshot`).
  virtual Status Get(const ReadOptions& options, const Slice& user_key, SequenceNumber snapshot, ValueType* type,
                     std::string* value, SequenceNumber* sequence) const = 0;
  // A hint before Get of the key whose XXH3_64bits hash is `key_hash`
  // (BlockReader::PrefetchForGet): a Get that will probe several tables
  // hints them all first, so their first cache misses overlap. No effect by
  // default.
  virtual void PrefetchForGet(uint64_t key_hash) const { (void)key_hash; }
  // Iterates all entries. The iterator keeps what it reads alive.
  virtual std::unique_ptr<InternalIterator> NewIterator(const ReadOptions& options) const = 0;
  // The open file the table is read from -- for a table file, readable
  // while the table lives, even after its name is removed; null (the
  // default) where there is none.
  virtual const RandomAccessFile* file() const { return nullptr; }
  // The same, for a reader that is scanning forward through a level -- it
  // read the whole table before this one -- and will SeekToFirst: it may
  // read ahead in large runs from the first block on, as NewIterator's
  // iterator does once it has stepped through a few blocks. Default:
  // NewIterator.
  virtual std::unique_ptr<InternalIterator> NewSequentialIterator(const ReadOptions& options) const {
    return NewIterator(options);
  }
  // The same, for one forward pass over the whole table (compaction inputs):
  // it may read ahead in large runs, leaves caches alone and verifies the
  // checksum of every block it reads from a file (Corruption stops the pass;
  // pmem blocks were verified when the pool was opened). Seek and Prev
  // work but may be slow. With `decode` (may be null; must outlive the
  // iterator), the time of the block format's own work -- opening blocks,
  // stepping their iterators -- is charged to it: the compaction profile's
  // decode phase.
  virtual std::unique_ptr<InternalIterator> NewScanIterator(SampledPhase* decode) const = 0;
  // The same pass over the table's KeySet blocks as bytes, under
  // NewScanIterator's rules (read-ahead, checksums of file blocks verified,
  // opening blocks charged to `decode`). Null for a table whose blocks are
  // not KeySet blocks (the default): the caller iterates it instead.
  virtual std::unique_ptr<BlockScan> NewBlockScan(SampledPhase* decode) const {
    (void)decode;
    return nullptr;
  }
  virtual uint64_t num_entries() const = 0;
  // Bytes of DRAM the table holds for lookups beyond its data (a pmem
  // block's hash index); 0 by default.
  virtual size_t MemoryUsage() const { return 0; }
  // Where user_key would sit in the table, as a fraction of its bytes
  // (0: before everything, 1: after), for DB::GetApproximateSizes. An
  // estimate; the default, 0.5, knows nothing.
  virtual double ApproximatePosition(const Slice& user_key) const {
    (void)user_key;
    return 0.5;
  }
  // Deep O(n) check of every block.
  virtual Status Validate() const = 0;
};

}  // namespace jigsaw

#endif  // JIGSAW_TABLE_TABLE_H_
