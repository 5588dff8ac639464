// The SSD table file's layout, encoded and decoded in one place
// (docs/ssd_format.md): the footer and the index. The builder writes
// through it, the reader and the `jigsaw dump` tool read through it.
//
//   file   := block* index footer
//   index  := u32 blocks, u32 filter_lines, entry{blocks}, filter
//   entry  := u64 offset, u32 size, u32 entries, u32 smallest_len,
//             u32 largest_len, [versions 2, 3: u32 stored_size, u32 codec,]
//             smallest, largest, zeros to 8-byte alignment
//   filter := filter_lines x 64-byte Bloom lines (format/bloom.h)
//   footer := u64 magic, u32 version, u32 block_format, u64 index_offset,
//             u64 index_size, u64 entries, u32 index_crc, u32 footer_crc
#ifndef JIGSAW_SSD_TABLE_LAYOUT_H_
#define JIGSAW_SSD_TABLE_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "jigsaw/slice.h"
#include "jigsaw/status.h"
#include "ssd/block_compression.h"

namespace jigsaw::ssd {

inline constexpr uint64_t kTableMagic = 0x315453535753474AULL;  // bytes "JGSWSST1"
// The newest version read and written. A table is written in the oldest
// version that can hold it -- 1 without a compressed block, 2 when its
// blocks are compressed whole only, 3 once one is split -- so it reads
// under every release that knows that version.
inline constexpr uint32_t kTableFormatVersion = 3;
inline constexpr uint32_t kWholeCompressionTableVersion = 2;
inline constexpr uint32_t kUncompressedTableVersion = 1;
inline constexpr size_t kTableFooterSize = 48;
// An index entry's fixed part: offset, size, entries, smallest and largest
// key lengths; version 2 adds the stored size and the codec.
inline constexpr size_t kIndexEntryFixedV1 = 8 + 4 + 4 + 4 + 4;
inline constexpr size_t kIndexEntryFixedV2 = kIndexEntryFixedV1 + 4 + 4;
inline size_t IndexEntryFixed(uint32_t version) { return version >= 2 ? kIndexEntryFixedV2 : kIndexEntryFixedV1; }

// n rounded up to a multiple of 8 (blocks and index entries are 8-byte aligned).
inline size_t Pad8(size_t n) { return (n + 7) & ~size_t{7}; }

struct TableFooter {
  uint64_t magic = kTableMagic;
  uint32_t version = kTableFormatVersion;
  uint32_t block_format = 0;  // BlockFormat
  uint64_t index_offset = 0;
  uint64_t index_size = 0;
  uint64_t entries = 0;
  uint32_t index_crc = 0;
  uint32_t footer_crc = 0;  // as read; EncodeTo computes its own

  // Appends the kTableFooterSize bytes, footer_crc computed.
  void EncodeTo(std::string* out) const;
  // The fields of `bytes` (kTableFooterSize of them), none checked.
  static TableFooter DecodeFrom(const char* bytes);
  // OK if this footer, decoded from the end of a file of `file_size` bytes
  // named `path`, is one this reader can use: magic, checksum, version
  // (NotSupported if newer), block format, index within the file.
  // Corruption naming what is wrong otherwise.
  Status Check(uint64_t file_size, const std::string& path) const;
};

// One block of a table as the index describes it.
struct TableIndexEntry {
  uint64_t offset;  // of its stored bytes in the file
  uint32_t size;    // of the block (decompressed)
  uint32_t entries;
  std::string smallest, largest;  // user keys
  StoredCodec codec = StoredCodec::kRaw;
  uint32_t stored_size = 0;  // bytes in the file, when codec is not kRaw

  // Bytes of the file the block occupies (before its padding).
  uint64_t stored_bytes() const { return codec == StoredCodec::kRaw ? size : stored_size; }
  bool compressed() const { return codec != StoredCodec::kRaw; }
};

// The encoded size of an index entry with these keys in table format `version`.
inline size_t IndexEntryBytes(const TableIndexEntry& e, uint32_t version) {
  return IndexEntryFixed(version) + Pad8(e.smallest.size() + e.largest.size());
}

// The table format version a table of these blocks is written in: 3 if
// any is split, else 2 if any is compressed, else 1.
uint32_t TableVersionFor(const std::vector<TableIndexEntry>& blocks);

// Appends the index's head and entries in table format `version` (which
// must be TableVersionFor(blocks) or newer); its filter (filter_lines x 64
// bytes) is for the caller to append after them.
void EncodeIndexEntries(const std::vector<TableIndexEntry>& blocks, uint32_t filter_lines, uint32_t version,
                        std::string* out);

// Decodes an index of table format `version` read from `index_offset` of
// table `path`: its entries (8-aligned, in order, each ending before the
// index; a known codec, and a stored size that agrees with it) and its
// filter. Corruption naming what is wrong otherwise.
Status DecodeIndex(const Slice& index, uint64_t index_offset, uint32_t version, const std::string& path,
                   std::vector<TableIndexEntry>* blocks, Slice* filter, uint32_t* filter_lines);

}  // namespace jigsaw::ssd

#endif  // JIGSAW_SSD_TABLE_LAYOUT_H_
