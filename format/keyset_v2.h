// The KeySet block, version 2 (docs/format.md): the version builders write.
//
//   +--------------------------------------------+ 0
//   | header (128 bytes, 2 cache lines)          |
//   +--------------------------------------------+ 128
//   | value buffer: values back to back          |
//   +--------------------------------------------+ keyset_offset (8-aligned)
//   | key set: head node, then one entry per key |
//   |   in order, skiplist-linked                |
//   +--------------------------------------------+ samples_offset
//   | samples: u32[ceil(n/16)], the key-set      |
//   |   offset of every 16th entry               |
//   +--------------------------------------------+ sample_heads_offset (optional)
//   | sample heads: u64[ceil(n/16)]              |
//   +--------------------------------------------+ bloom_offset (64-aligned, optional)
//   | Bloom filter: 64-byte lines                |
//   +--------------------------------------------+ block_size
//
// Entry (8-byte aligned, offsets relative to keyset_offset):
//   +0  u64 tag        sequence << 8 | type
//   +8  u64 index      the index field: value offset in the value buffer
//                      (low 32 bits) | value size (high 32 bits)
//   +16 u32 shape      key size (bits 0-16) | height - 1 (bits 17-20)
//   +20 u32 next[height]  distance in bytes to the next entry of each level
//                      (self-relative, always forward), 0 = end
//   ... key bytes, the entry zero-padded to 8
//
// Compared with version 1 an entry drops its key hash, its separate value
// size and half of each link, and the block keeps one sampled offset and
// head per 16 entries instead of one per entry: about 142 instead of 172
// bytes per entry for 16-byte keys and 100-byte values. Self-relative links
// keep a run of entries valid wherever it is copied.
#ifndef JIGSAW_FORMAT_KEYSET_V2_H_
#define JIGSAW_FORMAT_KEYSET_V2_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format/block.h"
#include "format/bloom.h"
#include "format/keyset_block.h"
#include "util/coding.h"

namespace jigsaw::keyset::v2 {

inline constexpr uint32_t kFormatVersion = 2;
inline constexpr size_t kEntryHeaderSize = 20;  // tag, index, shape
inline constexpr size_t kMinEntrySize = 24;     // height 1, empty key
inline constexpr uint32_t kSampleStride = 16;   // one sample per 16 entries

// Entry field offsets.
namespace ent {
inline constexpr size_t kTag = 0;
inline constexpr size_t kIndex = 8;
inline constexpr size_t kShape = 16;
inline constexpr size_t kNext = 20;
}  // namespace ent

// The shape word: key size and height.
inline constexpr uint32_t kShapeKeySizeBits = 17;
inline constexpr uint32_t kShapeKeySizeMask = (1u << kShapeKeySizeBits) - 1;
inline constexpr uint32_t kShapeHeightShift = kShapeKeySizeBits;
inline constexpr uint32_t kShapeKnownBits = (1u << (kShapeHeightShift + 4)) - 1;
inline constexpr uint32_t PackShape(uint32_t key_size, uint32_t height) {
  return key_size | ((height - 1) << kShapeHeightShift);
}
inline constexpr uint32_t ShapeKeySize(uint32_t shape) { return shape & kShapeKeySizeMask; }
inline constexpr uint32_t ShapeHeight(uint32_t shape) { return ((shape >> kShapeHeightShift) & 0xf) + 1; }

// The index field of a block entry.
inline constexpr uint64_t PackIndex(uint32_t value_offset, uint32_t value_size) {
  return uint64_t{value_offset} | (uint64_t{value_size} << 32);
}

inline constexpr size_t EntrySize(uint32_t height, size_t key_size) {
  return (kEntryHeaderSize + 4 * size_t{height} + key_size + 7) & ~size_t{7};
}
inline constexpr size_t kHeadNodeSize = EntrySize(kMaxHeight, 0);

inline constexpr uint64_t SampleCount(uint64_t entries) { return (entries + kSampleStride - 1) / kSampleStride; }

// Height of the i-th entry (0-based) of a bulk-built block: a perfectly
// balanced skiplist with fan-out 8 (1 + number of trailing base-8 zeros of
// i+1). Lookups start from the samples, so the upper levels are kept thin.
uint32_t BulkHeight(uint64_t index);

// An upper bound of the key set (head node included) of a bulk-built block
// of `entries` entries whose entries at height 1 would total
// `height_one_bytes`: each extra level of an entry adds at most 8 bytes,
// and how many extra levels bulk heights give depends on `entries` alone.
// Lets a flush size its block without walking the entries.
uint64_t KeySetBytesBound(uint64_t entries, uint64_t height_one_bytes);

// Size of a block holding `entries` entries whose values total `value_bytes`
// and whose key set (head node included) is `keyset_bytes` -- the sum of
// EntrySize(BulkHeight(i), key size) plus kHeadNodeSize -- built with
// `options`.
uint64_t BlockSizeFor(uint64_t entries, uint64_t value_bytes, uint64_t keyset_bytes,
                      const BlockBuilderOptions& options);

// An entry for Builder::AddPlacedRun (format/keyset_block.h).
using keyset::PlacedEntry;

// Builds a version 2 block; see BlockBuilder. Entries get BulkHeight
// heights and are laid out contiguously in order. The PlacedBuilder
// methods serve only a builder made by WithPlacedValues (InvalidArgument
// otherwise).
class Builder final : public PlacedBuilder {
 public:
  Builder(const BlockBuilderOptions& options, char* dest, size_t capacity);

  // A builder whose caller places the values (see PlacedBuilder).
  static std::unique_ptr<Builder> WithPlacedValues(const BlockBuilderOptions& options, char* dest, size_t capacity,
                                                   uint64_t placed_value_bytes);
  char* value_buffer() const override { return dest_ + kHeaderSize; }
  Status AddPlaced(const Slice& user_key, SequenceNumber sequence, ValueType type, uint64_t value_offset,
                   uint64_t value_size, uint32_t key_hash) override;
  Status AddPlacedRun(const PlacedEntry* entries, size_t n) override;

  Status Add(const Slice& user_key, SequenceNumber sequence, ValueType type, const Slice& value) override {
    // The hash feeds the filter alone: none, no hash.
    return AddWithHash(user_key, sequence, type, value,
                       options_.bloom_bits_per_key > 0 ? bloom::KeyHash(user_key) : 0);
  }
  // The hash feeds the Bloom filter only; version 2 entries do not store it.
  Status AddWithHash(const Slice& user_key, SequenceNumber sequence, ValueType type, const Slice& value,
                     uint32_t key_hash) override;
  // Every builder but one whose caller places the values.
  bool TakesRuns() const override { return !placed_values_; }
  // Appends a prefix of `run` (entries of another version 2 block, after
  // the last one added) as bytes: the entries and their values are copied
  // whole, then each entry's value offset is rebased, the links that enter
  // and leave the run are set, and samples and filter hashes recorded --
  // no key is compared and no field re-encoded. Takes as many entries as
  // keep the finished block within min(size_limit, capacity) and returns
  // how many (0: not even the first fits). Heights stay the source's.
  uint32_t AppendRun(const EntryRun& run, uint64_t size_limit) override;
  Status Finish(size_t* block_size) override;
  // Every builder but one whose caller places the values.
  bool Restart() override;
  uint64_t num_entries() const override { return entries_; }
  Slice LastUserKey() const override;
  size_t CurrentSize() const override;

 private:
  struct Layout {
    uint64_t keyset_offset, samples_offset, sample_heads_offset, bloom_offset, block_size;
    bloom::Geometry bloom;
  };
  static Layout ComputeLayout(uint64_t entries, uint64_t value_bytes, uint64_t keyset_bytes, bool key_heads,
                              int bloom_bits_per_key);
  friend uint64_t BlockSizeFor(uint64_t, uint64_t, uint64_t, const BlockBuilderOptions&);
  Builder(const BlockBuilderOptions& options, char* dest, size_t capacity, uint64_t placed_value_bytes);
  // Checks an entry and writes it into the key set; its value is already
  // at value_offset of the value buffer.
  Status AddEntry(const Slice& user_key, SequenceNumber sequence, ValueType type, uint64_t value_offset,
                  uint64_t value_size, uint64_t value_bytes_after, uint32_t key_hash);
  // Writes entry number `ordinal` (of BulkHeight(ordinal)) at key-set
  // `offset`, room reserved, links from the entries before it set, its
  // sample recorded; returns its size. Not the counters or the hash.
  uint64_t WriteEntry(uint64_t ordinal, uint64_t offset, const Slice& key, uint64_t tag, uint64_t index);
  // Makes entry number `ordinal` (at key-set `offset`, of `height` levels)
  // the last one: the previous entry of each of its levels links to it,
  // its own links are 0 until the next entry of their level arrives, its
  // sample and the block's height are recorded.
  void LinkAsLast(uint64_t ordinal, uint64_t offset, uint32_t height);
  // AppendRun for a run of one entry; false if it does not fit in `limit`.
  bool AppendOne(const EntryRun& run, uint64_t limit);
  // AppendRun for a longer run, apart so that a run of one does not pay
  // for its frame.
  [[gnu::noinline]] uint32_t AppendMany(const EntryRun& run, uint64_t limit);
  // Room for `bytes` of key set in the staging buffer (nothing to do in
  // place: the layout check before every entry keeps the key set within
  // the destination).
  void ReserveStaging(uint64_t bytes) {
    if (!placed_values_ && bytes > staging_capacity_) GrowStaging(bytes);
  }
  void GrowStaging(uint64_t bytes);
  char* StagingAt(uint64_t offset) { return keyset_ + offset; }
  const char* StagingAt(uint64_t offset) const { return keyset_ + offset; }

  const BlockBuilderOptions options_;
  const bool key_heads_;
  char* const dest_;
  const size_t capacity_;
  uint64_t entries_ = 0;
  uint64_t value_bytes_ = 0;
  // The key set is staged in DRAM and copied behind the value buffer by
  // Finish, because its position depends on the total size of the values
  // -- unless the values are placed by the caller: then their size is known
  // and the key set is built in place (keyset_ points into dest_).
  const bool placed_values_ = false;
  std::unique_ptr<uint64_t[]> staging_;
  uint64_t staging_capacity_ = 0;
  char* keyset_ = nullptr;
  uint64_t keyset_bytes_ = 0;
  uint64_t last_offset_ = 0;             // of the last entry added
  std::vector<uint32_t> samples_;        // key-set offsets of entries 0, 16, 32, ...
  std::vector<uint32_t> key_hashes_;     // for the Bloom filter (not stored in entries)
  uint64_t last_at_level_[kMaxHeight] = {};  // 0 = head node
  uint32_t max_height_ = 1;
  bool finished_ = false;
};

// The key and tag of entry `index` (< run.count) of a run.
void RunEntry(const EntryRun& run, uint32_t index, Slice* key, uint64_t* tag);

// Drops the first n (<= run->count) entries of a run: the rest, still a run.
void DropFront(EntryRun* run, uint32_t n);

// Calls f(user key) for the first n entries of a run, in order.
template <typename F>
void ForEachRunKey(const EntryRun& run, uint32_t n, F&& f) {
  const char* e = run.entries;
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t shape = DecodeFixed32(e + ent::kShape);
    const size_t height = ShapeHeight(shape);
    f(Slice(e + kEntryHeaderSize + 4 * height, ShapeKeySize(shape)));
    e += EntrySize(static_cast<uint32_t>(height), ShapeKeySize(shape));
  }
}

// Entries in place: what readers, iterators and EntryCursor load.

// The level-`level` link of the entry at `entry`.
inline uint32_t LinkOf(const char* entry, uint32_t level) {
  return DecodeFixed32(entry + ent::kNext + 4 * size_t{level});
}

// One entry, loaded (and bounds-checked) from a block.
struct EntryView {
  Slice key;
  Slice value;
  uint64_t tag = 0;
  uint64_t offset = 0;  // in the key set
  uint32_t height = 0;
  uint32_t next = 0;  // level-0 link: distance to the next entry, 0 = end
};

// The sections every lookup and iteration reads. Iterators keep a copy, so a
// step reads no reader state through a pointer.
struct Sections {
  const char* values = nullptr;
  uint64_t value_buffer_size = 0;
  const char* keyset = nullptr;
  uint64_t keyset_size = 0;
  const char* samples = nullptr;
  uint32_t count = 0;

  // Loads the entry at key-set `offset`. False if it does not lie inside
  // the block or its shape or type is not one the format defines. These
  // are the only checks memory safety needs; the finer structure
  // (alignment, order, upper links) is Validate()'s job.
  bool LoadAt(uint64_t offset, EntryView* entry) const {
    if (offset < kHeadNodeSize || offset > keyset_size - kMinEntrySize) return false;
    const char* p = keyset + offset;
    const uint32_t shape = DecodeFixed32(p + ent::kShape);
    const uint32_t height = ShapeHeight(shape);
    const uint64_t key_offset = offset + kEntryHeaderSize + 4 * uint64_t{height};
    const uint32_t key_size = ShapeKeySize(shape);
    const uint64_t index = DecodeFixed64(p + ent::kIndex);
    const uint64_t value_offset = index & 0xffffffff;
    const uint64_t value_size = index >> 32;
    const uint64_t tag = DecodeFixed64(p + ent::kTag);
    if ((shape & ~kShapeKnownBits) != 0 || height > kMaxHeight || key_offset + key_size > keyset_size ||
        value_offset + value_size > value_buffer_size || (tag & 0xff) > kMaxValueTypeByte) {
      return false;
    }
    entry->key = Slice(keyset + key_offset, key_size);
    entry->value = Slice(values + value_offset, value_size);
    entry->tag = tag;
    entry->offset = offset;
    entry->height = height;
    entry->next = LinkOf(p, 0);
    return true;
  }

  // The entry after `entry` (which is not the last): false if the link is
  // missing or leads outside the key set.
  bool LoadNext(const EntryView& entry, EntryView* next) const {
    return entry.next != 0 && LoadAt(entry.offset + entry.next, next);
  }

  uint64_t SampleOffset(uint32_t sample) const { return DecodeFixed32(samples + 4 * size_t{sample}); }
};

// A forward pass over the entries of one version 2 block, in place: for a
// merge that copies entries as bytes (compaction/keyset_merge.h) instead of
// iterating. Each step is bounds-checked as the reader's are; a malformed
// entry ends the pass with Corruption. No checksum is checked (the caller
// did, or the block was verified when its pool was opened).
//
// Thread-safety: one thread at a time.
class EntryCursor {
 public:
  // Positions at the first entry of `block` (8-byte aligned bytes of a
  // version 2 block, which must stay valid and unchanged while the cursor
  // is on it). NotSupported for a block of another version (the caller
  // merges through iterators instead), InvalidArgument for a misaligned
  // buffer or another comparator, Corruption for a malformed block.
  Status Reset(const Slice& block, const Comparator* comparator);

  bool Valid() const { return ordinal_ < s_.count; }
  // The current entry; requires Valid().
  const EntryView& entry() const { return entry_; }
  const char* entry_bytes() const { return s_.keyset + entry_.offset; }
  uint64_t entry_size() const { return EntrySize(entry_.height, entry_.key.size()); }
  uint32_t value_offset() const { return static_cast<uint32_t>(entry_.value.data() - s_.values); }
  // Moves to the next entry (past the last: !Valid()).
  void Next() {
    if (++ordinal_ >= s_.count) return;
    // Entries lie in order: fetching a few lines ahead hides the chain of
    // loads each step's address depends on.
    __builtin_prefetch(s_.keyset + entry_.offset + kCursorPrefetchBytes);
    if (values_scattered_) PrefetchValueAhead();
    if (!s_.LoadNext(entry_, &entry_)) {
      ordinal_ = s_.count;
      status_ = Status::Corruption("KeySet block has a malformed entry");
    }
  }
  // OK, or what ended the pass early.
  const Status& status() const { return status_; }

 private:
  static constexpr uint64_t kCursorPrefetchBytes = 512;
  // How many entries ahead of the current one values are fetched when they
  // do not follow one another (a flushed block keeps them in insertion
  // order): a merge copies each surviving value, which would otherwise
  // miss. Values in key order (a merge's output) are a stream the hardware
  // fetches ahead by itself, and fetching them costs in-cache merges ~10%.
  static constexpr int kValueAhead = 3;
  // Entries at the start of a block whose values Reset checks for order.
  static constexpr int kOrderProbe = 4;

  // Moves ahead_ one entry on and fetches that entry's value. Reads only
  // inside the key set (the link and index of an entry the key-set
  // prefetch brought in); a malformed link just ends the look-ahead.
  void PrefetchValueAhead() {
    if (ahead_ == 0) return;
    const uint32_t link = LinkOf(s_.keyset + ahead_, 0);
    ahead_ = link == 0 || ahead_ + link > s_.keyset_size - kMinEntrySize ? 0 : ahead_ + link;
    if (ahead_ == 0) return;
    const uint64_t index = DecodeFixed64(s_.keyset + ahead_ + ent::kIndex);
    const char* value = s_.values + (index & 0xffffffff);  // a prefetch never faults
    __builtin_prefetch(value);
    __builtin_prefetch(value + (index >> 32));
  }

  Sections s_;
  EntryView entry_;
  uint64_t ahead_ = 0;  // key-set offset of the entry whose value was fetched last; 0: none
  bool values_scattered_ = false;  // the first entries' values do not follow one another
  uint32_t ordinal_ = 0;
  Status status_;
};

// Where a version 2 block's sections lie, from its header.
struct HeaderLayout {
  uint32_t count = 0;
  uint64_t value_buffer_size = 0;
  uint64_t keyset_offset = 0, keyset_size = 0;
  uint64_t samples_offset = 0;
  uint64_t sample_heads_offset = 0;  // 0 without key heads
  uint64_t bloom_offset = 0;         // 0 without a filter
  bloom::Geometry bloom;             // lines 0: no filter
  uint32_t key_head_skip = 0;
  uint32_t max_height = 1;
  bool key_heads = false;
};

// Checks the header `header` (a block's first 128 bytes, or fewer if
// `block_size` is smaller) of a block of `block_size` bytes as the reader
// does -- magic, version, comparator, that the sections add up -- except
// its checksum, which needs the whole block.
Status ParseHeader(const char* header, uint64_t block_size, const Comparator* comparator, HeaderLayout* layout);

// Bytes of one block wherever they are (a file): PieceReader reads through
// it. Thread-safety: Read may be called concurrently.
class BlockBytes {
 public:
  virtual ~BlockBytes() = default;
  // Reads [offset, offset + size) of the block into dest: all of it or an
  // error (Corruption if the block ends early).
  virtual Status Read(uint64_t offset, uint64_t size, char* dest) const = 0;
};

// Point lookups in a version 2 block that is not in memory, read in pieces
// (docs/ssd_format.md, "Large blocks"): Open reads the block's outline --
// header, samples, sample heads, the common key prefix -- once and keeps it
// (0.75 bytes per entry); a Get then reads the one group of entries its key
// can be in (about 16 entries) and, if the key is there with a value, the
// value: two small reads instead of the whole block. No checksum is checked
// (it covers the whole block); what is read is bounds-checked, so damage
// gives Corruption or a wrong answer, never an access outside the pieces.
// Needs key heads (blocks built with the bytewise comparator).
//
// Thread-safety: const methods may be called concurrently.
class PieceReader {
 public:
  // NotSupported for a block without key heads; Corruption (or what
  // `bytes` returns) if the outline cannot be read.
  static Status Open(const BlockBytes& bytes, uint64_t block_size, const Comparator* comparator,
                     std::unique_ptr<PieceReader>* reader);

  // The newest version of user_key at or below `snapshot`: OK with *type and
  // *sequence (and *value for kValue), NotFound, or Corruption. Sets *whole_block
  // (and returns NotFound) when so many samples share the key's head that
  // a read of the whole block is cheaper: the caller reads it whole.
  Status Get(const BlockBytes& bytes, const Slice& user_key, SequenceNumber snapshot, ValueType* type,
             std::string* value, SequenceNumber* sequence, bool* whole_block) const;

  // Where user_key falls in the block, 0 to 1: the share of the key set
  // before the first sample whose key head is not below the key's (to the
  // nearest 16 entries; for GetApproximateSizes). Reads nothing.
  double ApproximatePosition(const Slice& user_key) const;

  const HeaderLayout& layout() const { return layout_; }
  // DRAM the outline takes.
  uint64_t memory_usage() const;

 private:
  PieceReader() = default;

  HeaderLayout layout_;
  const Comparator* comparator_ = nullptr;
  std::vector<uint32_t> samples_;  // key-set offsets of entries 0, 16, 32, ...
  std::vector<uint64_t> heads_;    // their key heads
  std::string common_prefix_;      // the first key_head_skip bytes of every key
};

// A version 2 block's value region, [kHeaderSize, keyset_offset): its
// value buffer and the buffer's padding, the bytes a split-compressed SSD
// block stores apart from the rest (docs/ssd_format.md, "Compressed
// blocks"). `header` may be the header alone (block_size: the block's
// size). Corruption for a malformed or truncated header, NotSupported for
// another version.
Status ValueRegion(const Slice& header, uint64_t block_size, const Comparator* comparator, uint64_t* begin,
                   uint64_t* end);

// The largest value region a key part may leave out (a block's value
// bytes and their padding).
inline constexpr uint64_t kMaxKeyPartValueRegion = uint64_t{1} << 16;

// A reader for point lookups over a block's key part: its bytes without
// its value region -- the header, then everything from keyset_offset on --
// which is what a split-compressed SSD block keeps in the block cache.
// `key_part` (8-byte aligned, kept alive and unchanged by the caller) is
// that of a block of `block_size` bytes. Get finds the entry as over the
// whole block and tells where its value lies (BlockLookup::value_offset,
// value.size()); lookup.value's bytes are not the value's (zeros). Its
// iterators step through the block's entries likewise: keys, tags and value
// sizes are the block's, the value bytes zeros (KeyPartValueOffset says
// where each lies), and they hand out no runs or windows. Validate reports
// NotSupported: a key part holds no values. No checksum is checked (it covers the whole block); structural damage is
// Corruption, as over the whole block. NotSupported for a value region
// larger than kMaxKeyPartValueRegion.
Status OpenKeyPartReader(const Slice& key_part, uint64_t block_size, const Comparator* comparator,
                         std::unique_ptr<BlockReader>* reader);

// Where the current entry's value lies in its block's value buffer, for a
// valid iterator of a key part's reader (OpenKeyPartReader).
uint64_t KeyPartValueOffset(const InternalIterator& it);

// Opens a version 2 reader; see BlockReader::Open. Also gives the messages
// for blocks of no known version.
Status OpenReader(const Slice& contents, const BlockReadOptions& options, std::unique_ptr<BlockReader>* reader);

}  // namespace jigsaw::keyset::v2

#endif  // JIGSAW_FORMAT_KEYSET_V2_H_
