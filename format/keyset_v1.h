// The KeySet block, version 1 (docs/format.md, "Version 1"): still read,
// written only when BlockBuilderOptions::keyset_version asks for it (tests,
// and format_bench's comparison). Its entry layout is also the DRAM
// memtable's node layout (db/memtable.h).
//
//   +--------------------------------------------+ 0
//   | header (128 bytes, 2 cache lines)          |
//   +--------------------------------------------+ 128
//   | value buffer: values back to back          |
//   +--------------------------------------------+ keyset_offset (8-aligned)
//   | key set: head node, then one entry per key |
//   |   in order, skiplist-linked                |
//   +--------------------------------------------+ entry_offsets_offset
//   | entry offsets: u32[n]                      |
//   +--------------------------------------------+ key_heads_offset (optional)
//   | key heads: u64[n], head fences u64[n/32]   |
//   +--------------------------------------------+ bloom_offset (64-aligned, optional)
//   | Bloom filter: 64-byte lines                |
//   +--------------------------------------------+ block_size
//
// Entry (8-byte aligned, offsets relative to keyset_offset):
//   +0  u64 tag        sequence << 8 | type
//   +8  u64 index      value offset inside the value buffer (on media);
//                      a value pointer in the DRAM memtable
//   +16 u32 key_size
//   +20 u32 value_size
//   +24 u32 height     1..kMaxHeight
//   +28 u32 key_hash   bloom::KeyHash(key), computed once and copied along
//   +32 u64 next[height]  offsets of the next entry at each level, 0 = end
//   ... key bytes, zero-padded to 8
#ifndef JIGSAW_FORMAT_KEYSET_V1_H_
#define JIGSAW_FORMAT_KEYSET_V1_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format/block.h"
#include "format/bloom.h"
#include "format/keyset_block.h"

namespace jigsaw::keyset::v1 {

inline constexpr uint32_t kFormatVersion = 1;
inline constexpr size_t kEntryHeaderSize = 32;
inline constexpr size_t kMinEntrySize = kEntryHeaderSize + 8;  // height 1, empty key
inline constexpr size_t kHeadNodeSize = kEntryHeaderSize + 8 * kMaxHeight;

// Every kHeadFenceStride-th key head is repeated in the head fences, a small
// array a lookup searches first (it stays in cache), then 32 heads.
inline constexpr uint32_t kHeadFenceStride = 32;
inline constexpr uint64_t HeadFenceCount(uint64_t entries) {
  return (entries + kHeadFenceStride - 1) / kHeadFenceStride;
}
// Bytes of the key heads and their fences for `entries` entries.
inline constexpr uint64_t KeyHeadsSectionSize(uint64_t entries) { return 8 * (entries + HeadFenceCount(entries)); }

// Entry field offsets.
namespace ent {
inline constexpr size_t kTag = 0;
inline constexpr size_t kIndex = 8;
inline constexpr size_t kKeySize = 16;
inline constexpr size_t kValueSize = 20;
inline constexpr size_t kHeight = 24;
inline constexpr size_t kKeyHash = 28;
inline constexpr size_t kNext = 32;
}  // namespace ent

inline constexpr size_t EntrySize(uint32_t height, size_t key_size) {
  return kEntryHeaderSize + 8 * size_t{height} + ((key_size + 7) & ~size_t{7});
}

// Height of the i-th entry (0-based) of a bulk-built block: a perfectly
// balanced skiplist with fan-out 4 (1 + number of trailing base-4 zeros of i+1).
uint32_t BulkHeight(uint64_t index);

// Size of a block holding `entries` entries whose values total `value_bytes`
// and whose key set (head node included) is `keyset_bytes` -- the sum of
// EntrySize(BulkHeight(i), key size) plus kHeadNodeSize -- built with
// `options`. Lets a caller size the destination exactly before building.
uint64_t BlockSizeFor(uint64_t entries, uint64_t value_bytes, uint64_t keyset_bytes,
                      const BlockBuilderOptions& options);

class Builder final : public BlockBuilder {
 public:
  Builder(const BlockBuilderOptions& options, char* dest, size_t capacity);

  Status Add(const Slice& user_key, SequenceNumber sequence, ValueType type, const Slice& value) override {
    return AddWithHash(user_key, sequence, type, value, bloom::KeyHash(user_key));
  }
  Status AddWithHash(const Slice& user_key, SequenceNumber sequence, ValueType type, const Slice& value,
                     uint32_t key_hash) override;
  Status Finish(size_t* block_size) override;
  uint64_t num_entries() const override { return entry_offsets_.size(); }
  Slice LastUserKey() const override;
  size_t CurrentSize() const override;

 private:
  struct Layout {
    uint64_t keyset_offset, entry_offsets_offset, key_heads_offset, bloom_offset, block_size;
    bloom::Geometry bloom;
  };
  static Layout ComputeLayout(uint64_t entries, uint64_t value_bytes, uint64_t keyset_bytes, bool key_heads,
                              int bloom_bits_per_key);
  friend uint64_t BlockSizeFor(uint64_t, uint64_t, uint64_t, const BlockBuilderOptions&);
  void ReserveStaging(uint64_t bytes);
  char* StagingAt(uint64_t offset) { return reinterpret_cast<char*>(staging_.get()) + offset; }
  const char* StagingAt(uint64_t offset) const { return reinterpret_cast<const char*>(staging_.get()) + offset; }

  const BlockBuilderOptions options_;
  const bool key_heads_;
  char* const dest_;
  const size_t capacity_;
  uint64_t value_bytes_ = 0;
  // The key set is staged in DRAM (8-byte aligned words) and copied behind the
  // value buffer by Finish, because its final position depends on the total
  // size of the values.
  std::unique_ptr<uint64_t[]> staging_;
  uint64_t staging_capacity_ = 0;
  uint64_t keyset_bytes_ = 0;
  std::vector<uint32_t> entry_offsets_;
  uint64_t per_entry_bound_ = 0;      // index bytes per entry, rounded up
  // Value padding (7), offsets padding (4), Bloom alignment (63) and last
  // partial line (64), rounded up.
  static constexpr uint64_t kSizeBoundSlack = 192;
  uint64_t last_at_level_[kMaxHeight] = {};  // 0 = head node
  uint32_t max_height_ = 1;
  bool finished_ = false;
};

// Opens a version 1 reader; see BlockReader::Open.
Status OpenReader(const Slice& contents, const BlockReadOptions& options,
                  std::unique_ptr<BlockReader>* reader);

}  // namespace jigsaw::keyset::v1

#endif  // JIGSAW_FORMAT_KEYSET_V1_H_
