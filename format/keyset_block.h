// The KeySet block: JigsawDB's one block format for DRAM, pmem and SSD.
// docs/format.md is the normative spec; the constants below mirror it.
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
#ifndef JIGSAW_FORMAT_KEYSET_BLOCK_H_
#define JIGSAW_FORMAT_KEYSET_BLOCK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format/block.h"
#include "format/bloom.h"

namespace jigsaw::keyset {

inline constexpr uint64_t kMagic = 0x534B57415347494AULL;  // bytes "JIGSAWKS"
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr size_t kHeaderSize = 128;
inline constexpr uint32_t kMaxHeight = 12;
inline constexpr size_t kEntryHeaderSize = 32;
inline constexpr size_t kMinEntrySize = kEntryHeaderSize + 8;  // height 1, empty key
inline constexpr size_t kHeadNodeSize = kEntryHeaderSize + 8 * kMaxHeight;
// Offsets are u32, so a key set and a value buffer stay below 4 GiB.
inline constexpr uint64_t kMaxSectionSize = uint64_t{0xffffffff};

// Every kHeadFenceStride-th key head is repeated in the head fences, a small
// array a lookup searches first (it stays in cache), then 32 heads.
inline constexpr uint32_t kHeadFenceStride = 32;
inline constexpr uint64_t HeadFenceCount(uint64_t entries) {
  return (entries + kHeadFenceStride - 1) / kHeadFenceStride;
}
// Bytes of the key heads and their fences for `entries` entries.
inline constexpr uint64_t KeyHeadsSectionSize(uint64_t entries) { return 8 * (entries + HeadFenceCount(entries)); }

// Header flag bits.
inline constexpr uint32_t kFlagKeyHeads = 1u << 0;  // key heads and head fences present
inline constexpr uint32_t kKnownFlags = kFlagKeyHeads;

// Header field offsets.
namespace hdr {
inline constexpr size_t kMagic = 0;
inline constexpr size_t kVersion = 8;
inline constexpr size_t kHeaderSize = 12;
inline constexpr size_t kBlockSize = 16;
inline constexpr size_t kFlags = 24;
inline constexpr size_t kEntryCount = 28;
inline constexpr size_t kValueBufferSize = 32;
inline constexpr size_t kKeySetOffset = 40;
inline constexpr size_t kKeySetSize = 48;
inline constexpr size_t kEntryOffsetsOffset = 56;
inline constexpr size_t kKeyHeadsOffset = 64;
inline constexpr size_t kBloomOffset = 72;
inline constexpr size_t kBloomLines = 80;
inline constexpr size_t kBloomProbes = 84;
inline constexpr size_t kKeyHeadSkip = 88;
inline constexpr size_t kMaxHeightUsed = 92;
inline constexpr size_t kComparatorId = 96;
inline constexpr size_t kReserved = 100;  // zero up to kChecksum
inline constexpr size_t kChecksum = 124;
}  // namespace hdr

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

// CRC32C of the comparator name, stored in the header.
uint32_t ComparatorId(const Comparator* comparator);

// The u64 "key head" of a user key: bytes [skip, skip+8) read big-endian and
// zero-padded, so that for keys sharing their first `skip` bytes, bytewise
// order of keys implies order of heads.
uint64_t KeyHead(const Slice& user_key, size_t skip);

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

// Opens a KeySet reader; see BlockReader::Open.
Status OpenReader(const Slice& contents, const BlockReadOptions& options,
                  std::unique_ptr<BlockReader>* reader);

}  // namespace jigsaw::keyset

#endif  // JIGSAW_FORMAT_KEYSET_BLOCK_H_
