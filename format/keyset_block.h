// The KeySet block: JigsawDB's one block format for DRAM, pmem and SSD.
// docs/format.md is the normative spec of both versions; the constants here
// and in keyset_v1.h / keyset_v2.h mirror it.
//
// What every version shares: the 128-byte header's first fields (magic,
// format_version, header_size, block_size) and its checksum field, the
// value buffer right after the header, the key heads and the Bloom filter's
// definitions. Builders write the latest version unless
// BlockBuilderOptions::keyset_version asks for another; OpenReader reads
// every version up to the latest and refuses newer ones with NotSupported.
#ifndef JIGSAW_FORMAT_KEYSET_BLOCK_H_
#define JIGSAW_FORMAT_KEYSET_BLOCK_H_

#include <cstdint>
#include <memory>

#include "format/block.h"
#include "format/bloom.h"

namespace jigsaw::keyset {

inline constexpr uint64_t kMagic = 0x534B57415347494AULL;  // bytes "JIGSAWKS"
inline constexpr uint32_t kLatestVersion = 2;
inline constexpr size_t kHeaderSize = 128;
inline constexpr uint32_t kMaxHeight = 12;
// Offsets are u32, so a key set and a value buffer stay below 4 GiB.
inline constexpr uint64_t kMaxSectionSize = uint64_t{0xffffffff};

// Header field offsets. Version 2 renames two of them (see keyset_v2.h) but
// keeps every position.
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

// Header flag bits.
inline constexpr uint32_t kFlagKeyHeads = 1u << 0;  // key heads present
inline constexpr uint32_t kKnownFlags = kFlagKeyHeads;

// CRC32C of the comparator name, stored in the header.
uint32_t ComparatorId(const Comparator* comparator);

// The u64 "key head" of a user key: bytes [skip, skip+8) read big-endian and
// zero-padded, so that for keys sharing their first `skip` bytes, bytewise
// order of keys implies order of heads.
uint64_t KeyHead(const Slice& user_key, size_t skip);

// Length of the common prefix of two keys.
size_t CommonPrefixLength(const Slice& a, const Slice& b);

// CRC32C of [128, block_size) followed by header bytes [0, 124): the value
// the checksum field must hold.
uint32_t BlockChecksum(const char* block, uint64_t block_size);

// The format version of the block at `contents` (0 if it is too short to
// say). Does not validate anything else.
uint32_t VersionOf(const Slice& contents);

// Size of the key-set entry the bulk builder of `version` makes for the
// `index`-th entry (0-based) with a key of `key_size` bytes, and of that
// version's head node. With BlockSizeFor, lets a caller (a flush) size the
// destination exactly before building.
uint64_t BulkEntrySize(uint32_t version, uint64_t index, size_t key_size);
uint64_t HeadNodeSize(uint32_t version);
// Size of a block of options.keyset_version holding `entries` entries whose
// values total `value_bytes` and whose key set (head node included) is
// `keyset_bytes`, built with `options`.
uint64_t BlockSizeFor(uint64_t entries, uint64_t value_bytes, uint64_t keyset_bytes,
                      const BlockBuilderOptions& options);

// A builder of options.keyset_version (1 or 2); see BlockBuilder.
std::unique_ptr<BlockBuilder> NewBuilder(const BlockBuilderOptions& options, char* dest, size_t capacity);

// Opens a reader of whichever version the block is; see BlockReader::Open.
Status OpenReader(const Slice& contents, const BlockReadOptions& options, std::unique_ptr<BlockReader>* reader);

}  // namespace jigsaw::keyset

#endif  // JIGSAW_FORMAT_KEYSET_BLOCK_H_
