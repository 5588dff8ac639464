// The block interface shared by the KeySet format and the classic
// (LevelDB-style) format, so that the engine and the profiler can run with
// either and measure the difference.
//
// A block is an immutable, self-contained, checksummed run of entries sorted
// in internal-key order (format/dbformat.h). Builders write a block straight
// into caller-provided memory -- a pmem mapping, a buffer for an SSD file or a
// heap buffer. Readers serve lookups and iteration directly on a span of bytes
// without copying them.
#ifndef JIGSAW_FORMAT_BLOCK_H_
#define JIGSAW_FORMAT_BLOCK_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "format/bloom.h"
#include "format/dbformat.h"
#include "format/internal_iterator.h"
#include "jigsaw/comparator.h"
#include "jigsaw/slice.h"
#include "jigsaw/status.h"

namespace jigsaw {

enum class BlockFormat : uint8_t {
  kKeySet = 1,   // docs/format.md
  kClassic = 2,  // docs/classic_format.md
};
const char* BlockFormatName(BlockFormat format);

struct BlockBuilderOptions {
  // Order of user keys. Must outlive the builder. Default: bytewise.
  const Comparator* comparator = BytewiseComparator();
  // KeySet: bits per key of the in-block Bloom filter; 0 = no filter. Default 10.
  int bloom_bits_per_key = 10;
  // Classic: entries between restart points. Default 16.
  int restart_interval = 16;
  // KeySet: the format version to write, 1 or 2 (docs/format.md). Default:
  // 2, the latest; 1 only to make old blocks for tests and comparisons.
  uint32_t keyset_version = 2;
};

// Builds one block into dest[0, capacity).
//
// Contract: entries are added in strictly increasing internal-key order
// (user key ascending, then sequence descending); violating it is a
// programming error (checked by assert in debug builds). dest must be 8-byte
// aligned and must stay valid until Finish returns. The builder only writes
// inside dest[0, capacity). It does not persist anything: after Finish the
// caller makes dest[0, block_size) durable as its medium requires.
//
// Thread-safety: a builder is used by one thread at a time.
class BlockBuilder {
 public:
  virtual ~BlockBuilder() = default;

  // Appends one entry. Returns InvalidArgument if the key or value exceeds
  // kMaxKeySize / kMaxValueSize, and NoSpace if the finished block would no
  // longer fit in `capacity`; in both cases the builder is unchanged and can
  // still be finished.
  virtual Status Add(const Slice& user_key, SequenceNumber sequence, ValueType type,
                     const Slice& value) = 0;
  // Add, given bloom::KeyHash(user_key) -- which a KeySet entry carries, so
  // that flushes and compactions copy it instead of rehashing the key. The
  // KeySet builder stores it (and trusts it); the classic one ignores it.
  virtual Status AddWithHash(const Slice& user_key, SequenceNumber sequence, ValueType type, const Slice& value,
                             uint32_t key_hash) {
    (void)key_hash;
    return Add(user_key, sequence, type, value);
  }

  // Completes the block: afterwards dest[0, *block_size) is a valid block.
  // No further calls are allowed.
  virtual Status Finish(size_t* block_size) = 0;

  // Whether AppendRun can take entries: the builder writes the KeySet entry
  // layout that runs are made of (format/keyset_entry.h). False by default.
  virtual bool TakesRuns() const { return false; }
  // Appends a prefix of `run` (entries of a block of that layout, after the
  // last one added, each a new user key) as bytes: takes as many entries as
  // keep the finished block within min(size_limit, capacity) and returns
  // how many (0: not even the first fits, or !TakesRuns()).
  virtual uint32_t AppendRun(const EntryRun& run, uint64_t size_limit) {
    (void)run, (void)size_limit;
    return 0;
  }

  // Starts the next block in the same destination, keeping the memory the
  // builder grew (finished or not, the block so far is dropped); false if
  // this builder cannot, and the caller makes a new one.
  virtual bool Restart() { return false; }

  virtual uint64_t num_entries() const = 0;
  // User key of the last entry added; requires num_entries() > 0. Valid
  // until the next Add or Finish.
  virtual Slice LastUserKey() const = 0;
  // Size of the block if it were finished now.
  virtual size_t CurrentSize() const = 0;
};

// dest: 8-byte aligned memory of `capacity` bytes that the caller owns.
std::unique_ptr<BlockBuilder> NewBlockBuilder(BlockFormat format,
                                              const BlockBuilderOptions& options, char* dest,
                                              size_t capacity);

// Whether builders of `format` made with `options` take runs
// (BlockBuilder::TakesRuns), for a caller that asks before it has one.
bool BuilderTakesRuns(BlockFormat format, const BlockBuilderOptions& options);

// Upper bound of CurrentSize() growth when adding one entry; lets callers
// size destinations.
size_t MaxEntryFootprint(BlockFormat format, size_t key_size, size_t value_size);

struct BlockReadOptions {
  // Must be the comparator the block was built with (the KeySet format checks
  // it). Must outlive the reader. Default: bytewise.
  const Comparator* comparator = BytewiseComparator();
  // Verify the block checksum when opening. Default true. With false, a
  // damaged block still never causes an out-of-bounds read: structural damage
  // is reported as Corruption; damage inside keys or values may go unnoticed.
  bool verify_checksum = true;
  // Give the reader a hash index in DRAM over the block's distinct keys
  // (KeySet v2 blocks; other formats ignore it), built by its first Get: a
  // Get then probes one slot and reads one entry instead of searching the
  // block. Costs one pass over the block and ~11 bytes of DRAM per entry,
  // freed with the reader. Default false.
  bool hash_index = false;
};

// Result of a point lookup.
struct BlockLookup {
  ValueType type = ValueType::kValue;
  SequenceNumber sequence = 0;
  Slice value;  // points into the block; empty for deletions
  // KeySet blocks: where the value lies in the block's value buffer (its
  // index field's offset; 0 for deletions). Other formats leave it 0.
  uint32_t value_offset = 0;
};

// A read-only view of one block. Does not own the bytes: `contents` must stay
// valid and unchanged while the reader or any of its iterators is alive.
// Thread-safety: const methods may be called concurrently.
class BlockReader {
 public:
  virtual ~BlockReader() = default;

  // Checks the header (and the checksum if requested) in O(1) + checksum
  // time. Returns Corruption for malformed or truncated blocks, NotSupported
  // for a newer format version, InvalidArgument for a comparator mismatch or
  // a misaligned buffer.
  static Status Open(BlockFormat format, const Slice& contents, const BlockReadOptions& options,
                     std::unique_ptr<BlockReader>* reader);

  virtual BlockFormat format() const = 0;
  virtual uint64_t num_entries() const = 0;

  // Finds the newest entry of user_key with sequence <= snapshot. OK with
  // *result filled (a deletion is reported as type kDeletion), NotFound if the
  // block has no such entry, Corruption if a damaged entry was met.
  virtual Status Get(const Slice& user_key, SequenceNumber snapshot, BlockLookup* result) const = 0;
  // A hint before Get of the key whose XXH3_64bits hash is `key_hash`:
  // starts loading the first line that Get reads (a KeySet block's hash
  // index slot, or its Bloom filter line), so that lookups in several blocks
  // overlap their cache misses. Reads nothing itself. No effect by default.
  virtual void PrefetchForGet(uint64_t key_hash) const { (void)key_hash; }
  // The fraction of the block's entries that sort before user_key (an
  // estimate; the default, 0.5, knows nothing).
  virtual double ApproximatePosition(const Slice& user_key) const {
    (void)user_key;
    return 0.5;
  }

  // Bytes of DRAM the reader holds beyond the block (its hash index).
  virtual size_t MemoryUsage() const { return 0; }
  virtual std::unique_ptr<InternalIterator> NewIterator() const = 0;

  // Deep O(n) check of every entry, of the order and of the format's index
  // structures. Used by consistency checks and tests; readers do not need it
  // to be memory-safe.
  virtual Status Validate() const = 0;
};

}  // namespace jigsaw

#endif  // JIGSAW_FORMAT_BLOCK_H_
