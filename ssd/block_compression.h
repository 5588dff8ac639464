// The one codec of compressed SSD table blocks (docs/ssd_format.md,
// "Compressed blocks"): LZ4 or Zstandard over a block's bytes, whole.
#ifndef JIGSAW_SSD_BLOCK_COMPRESSION_H_
#define JIGSAW_SSD_BLOCK_COMPRESSION_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "jigsaw/options.h"
#include "jigsaw/slice.h"
#include "jigsaw/status.h"

namespace jigsaw::ssd {

// The compression field of a table index entry (docs/ssd_format.md): a
// block stored as its bytes, compressed whole, or split with LZ4 -- its
// value region compressed in groups, the rest (its key part) as one frame.
enum class StoredCodec : uint32_t { kRaw = 0, kLZ4 = 1, kZstd = 2, kLZ4Split = 3 };

// Whether `code`, as read from an index entry, names a codec.
inline bool IsKnownCodec(uint32_t code) { return code <= static_cast<uint32_t>(StoredCodec::kLZ4Split); }
inline bool IsSplitCodec(StoredCodec codec) { return codec == StoredCodec::kLZ4Split; }

// Bytes of the value region one group holds before compression (the last
// group of a block may hold fewer).
inline constexpr uint32_t kValueGroupBytes = 1024;

// The head of a split block's stored bytes (docs/ssd_format.md, "Compressed
// blocks"), parsed and checked: where the region lies in the block, and
// where the key part's frame and each group's frame lie in the stored bytes.
class SplitHead {
 public:
  // Parses the head at the start of `stored` (at least the head's bytes,
  // which must outlive *head: it reads the group ends there) of a block of
  // `block_size` bytes whose stored bytes are `stored_size` long.
  // Corruption if it is malformed or disagrees with those sizes.
  static Status Parse(const Slice& stored, uint64_t stored_size, uint64_t block_size, SplitHead* head);

  uint64_t head_size() const { return kFixedBytes + 4 * uint64_t{group_count_}; }
  uint64_t region_begin() const { return region_begin_; }
  uint64_t region_size() const { return region_size_; }
  uint64_t key_part_size() const { return block_size_ - region_size_; }
  // The key part's frame: [head_size(), key_part_end()) of the stored bytes.
  uint64_t key_part_end() const { return head_size() + key_part_stored_; }
  uint32_t group_count() const { return group_count_; }
  // Group g's frame: [GroupBegin(g), GroupBegin(g + 1)) of the stored bytes
  // (GroupBegin(group_count()) is their end).
  uint64_t GroupBegin(uint32_t g) const { return key_part_end() + (g == 0 ? 0 : GroupEnd(g - 1)); }
  // Region bytes group g holds: [g * kValueGroupBytes, + GroupSize(g)).
  uint64_t GroupSize(uint32_t g) const;

 private:
  static constexpr uint64_t kFixedBytes = 16;  // region begin, region size, key part stored, group count
  uint64_t block_size_ = 0;
  uint64_t region_begin_ = 0;
  uint64_t region_size_ = 0;
  uint64_t key_part_stored_ = 0;
  uint32_t group_count_ = 0;
  // group_ends[g]: where group g's frame ends, from the first group frame
  // (u32 little-endian, in the parsed bytes).
  const char* group_ends_ = nullptr;
  uint64_t GroupEnd(uint32_t g) const;
};

// How `codec` is named in messages and `jigsaw dump`.
const char* CodecName(StoredCodec codec);

// Compresses `block` with `compression` into *stored (replacing it) and
// returns the codec used: kRaw when compression is kNone or would not save
// at least an eighth of the block (*stored then holds nothing of use).
StoredCodec CompressBlock(Compression compression, const Slice& block, std::string* stored);

// Compresses `block` split with LZ4 (kLZ4Split): its bytes [region_begin,
// region_end) in groups of kValueGroupBytes, each a frame of its own, and
// the rest -- the bytes before the region, then those after it -- as one
// frame, behind the head SplitHead parses. Returns kRaw when that would not
// save at least an eighth. (Zstandard is not split: its per-frame cost
// makes 1 KiB frames slow to write and read, docs/design/030-compression.md.)
StoredCodec CompressBlockSplit(const Slice& block, uint64_t region_begin, uint64_t region_end, std::string* stored);

// Decompresses `stored`, of `codec` (not kRaw), into exactly `size` bytes at
// dest: the block, whole. Corruption if it does not decompress to exactly
// that many.
Status DecompressBlock(StoredCodec codec, const Slice& stored, char* dest, size_t size);

// A split block's key part, from its frame (the stored bytes
// [head.head_size(), head.key_part_end())), into head.key_part_size() bytes
// at dest.
Status DecompressKeyPart(const SplitHead& head, const Slice& frame, char* dest);

// The groups [*first, *last] of a split block's region that hold its bytes
// [offset, offset + size) (size > 0); false if those lie outside the region.
inline bool GroupsHolding(const SplitHead& head, uint64_t offset, uint64_t size, uint32_t* first, uint32_t* last) {
  if (size == 0 || offset + size > head.region_size()) return false;
  *first = static_cast<uint32_t>(offset / kValueGroupBytes);
  *last = static_cast<uint32_t>((offset + size - 1) / kValueGroupBytes);
  return true;
}

// A split block's region bytes [first * kValueGroupBytes, end) into dest
// (first * kValueGroupBytes < end <= head.region_size()): the groups that
// hold them, the last decompressed only as far as `end` (LZ4 stops there),
// from `frames`: the stored bytes of those groups, from
// head.GroupBegin(first) on. Corruption if they are truncated or do not
// decompress to the groups' sizes.
Status DecompressGroups(const SplitHead& head, const Slice& frames, uint32_t first, uint64_t end, char* dest);

}  // namespace jigsaw::ssd

#endif  // JIGSAW_SSD_BLOCK_COMPRESSION_H_
