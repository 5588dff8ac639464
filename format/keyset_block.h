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
#include <string>

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

// An entry for PlacedBuilder::AddPlacedRun, its value already in the value
// buffer.
struct PlacedEntry {
  Slice key;
  uint64_t tag;
  uint64_t value_offset;  // in the value buffer
  uint32_t value_size;
  uint32_t key_hash;   // bloom::KeyHash(key); read only when building a filter
  const char* value;   // the value's bytes where the caller keeps them (the builder does not read them)
};

// A builder whose caller places the values: the value buffer is the
// `placed_value_bytes` bytes (given when it is made) at value_buffer(),
// which the caller fills before Finish with the values of every entry it
// adds with AddPlaced or AddPlacedRun. The key set is written in place
// behind the value buffer as entries are added, so nothing is staged or
// copied twice. Add, AddWithHash and AppendRun are InvalidArgument / 0.
class PlacedBuilder : public BlockBuilder {
 public:
  virtual char* value_buffer() const = 0;
  // Adds an entry whose value is the `value_size` bytes at `value_offset`
  // of the value buffer (InvalidArgument if that is not inside it), after
  // the last one added; NoSpace if the block would outgrow its capacity.
  virtual Status AddPlaced(const Slice& user_key, SequenceNumber sequence, ValueType type, uint64_t value_offset,
                           uint64_t value_size, uint32_t key_hash) = 0;
  // The same for n entries in order, with the checks done for all of them
  // first and the entries then written in one tight pass: what a flush
  // calls. On error the builder holds the entries before the one that
  // failed, as after that many AddPlaced calls.
  virtual Status AddPlacedRun(const PlacedEntry* entries, size_t n) = 0;
};

// A PlacedBuilder of options.keyset_version into dest[0, capacity), or null
// if that version has none (the caller adds entries with a builder of
// NewBuilder).
std::unique_ptr<PlacedBuilder> NewPlacedBuilder(const BlockBuilderOptions& options, char* dest, size_t capacity,
                                                uint64_t placed_value_bytes);

// Sizing a block before building it, so that a caller (a flush) can reserve
// its destination first. Both answer for the block a builder of
// options.keyset_version makes (NewBuilder or NewPlacedBuilder) of the same
// entries added in order.
//
// In O(1): an upper bound (a few bytes per 8 entries above the exact size)
// of the block holding `entries` entries whose values total `value_bytes`
// and whose keys total `sizing_bytes`, the sum of SizingEntryBytes(key
// size) (format/keyset_entry.h) over the entries. True with *size, or false
// if that version has no such bound: then BlockSizer gives the size.
bool BlockSizeBound(const BlockBuilderOptions& options, uint64_t entries, uint64_t value_bytes, uint64_t sizing_bytes,
                    uint64_t* size);

// Exactly, from every entry's key and value sizes, in order.
class BlockSizer {
 public:
  explicit BlockSizer(const BlockBuilderOptions& options);
  void Add(size_t key_size, size_t value_size);
  // The size of the block holding the entries added so far.
  uint64_t size() const;

 private:
  const BlockBuilderOptions options_;
  uint64_t entries_ = 0;
  uint64_t value_bytes_ = 0;
  uint64_t keyset_bytes_;  // head node included
};

// Whether builders made with `options` take runs (BlockBuilder::TakesRuns),
// for a caller that asks before it has one.
bool BuilderTakesRuns(const BlockBuilderOptions& options);

// Whether the KeySet block at `block` holds entries of the current entry
// layout (format/keyset_entry.h), judged by its header's format_version
// alone: an EntryCursor reads such a block, and its runs go to a builder
// that TakesRuns. Other blocks are read through BlockReader.
bool HasEntryLayout(const Slice& block);

// What a block's header says of the block as a whole, for code that moves
// the block as bytes.
struct BlockOutline {
  uint32_t count = 0;         // entries
  uint64_t bloom_offset = 0;  // of the Bloom filter; 0 without one
  bloom::Geometry bloom;      // lines 0: no filter
  bool piece_reads = false;   // a PieceReader (format/keyset_pieces.h) can read it
};

// Checks the header `header` (a block's first 128 bytes, or fewer if
// `block_size` is smaller) of a block of `block_size` bytes as the reader
// does -- magic, version, comparator, that the sections add up -- except
// its checksum, which needs the whole block. OK with *outline filled;
// Corruption for a malformed header or a block whose entries are not of
// the current layout, NotSupported for a newer version, InvalidArgument for
// another comparator.
Status ReadOutline(const char* header, uint64_t block_size, const Comparator* comparator, BlockOutline* outline);

// The header fields of the KeySet block at `block` (docs/format.md,
// "Header"), whatever its version and even if malformed, as lines of text
// each starting with `indent` (docs/tool.md, "dump").
std::string DescribeHeader(const Slice& block, const char* indent);

// A builder of options.keyset_version (1 or 2); see BlockBuilder.
std::unique_ptr<BlockBuilder> NewBuilder(const BlockBuilderOptions& options, char* dest, size_t capacity);

// Opens a reader of whichever version the block is; see BlockReader::Open.
Status OpenReader(const Slice& contents, const BlockReadOptions& options, std::unique_ptr<BlockReader>* reader);

}  // namespace jigsaw::keyset

#endif  // JIGSAW_FORMAT_KEYSET_BLOCK_H_
