// The SSD table file's layout, encoded and decoded in one place
// (docs/ssd_format.md): the footer and the index. The builder writes
// through it, the reader and the `jigsaw dump` tool read through it.
//
//   file   := block* index footer
//   index  := u32 blocks, u32 filter_lines, entry{blocks}, filter
//   entry  := u64 offset, u32 size, u32 entries, u32 smallest_len,
//             u32 largest_len, smallest, largest, zeros to 8-byte alignment
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

namespace jigsaw::ssd {

inline constexpr uint64_t kTableMagic = 0x315453535753474AULL;  // bytes "JGSWSST1"
inline constexpr uint32_t kTableFormatVersion = 1;
inline constexpr size_t kTableFooterSize = 48;
// An index entry's fixed part: offset, size, entries, smallest and largest key lengths.
inline constexpr size_t kIndexEntryFixed = 8 + 4 + 4 + 4 + 4;

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
  uint64_t offset;
  uint32_t size;
  uint32_t entries;
  std::string smallest, largest;  // user keys
};

// The encoded size of an index entry with these keys.
inline size_t IndexEntryBytes(const TableIndexEntry& e) {
  return kIndexEntryFixed + Pad8(e.smallest.size() + e.largest.size());
}

// Appends the index's head and entries; its filter (filter_lines x 64
// bytes) is for the caller to append after them.
void EncodeIndexEntries(const std::vector<TableIndexEntry>& blocks, uint32_t filter_lines, std::string* out);

// Decodes an index read from `index_offset` of table `path`: its entries
// (8-aligned, in order, each ending before the index) and its filter.
// Corruption naming what is wrong otherwise.
Status DecodeIndex(const Slice& index, uint64_t index_offset, const std::string& path,
                   std::vector<TableIndexEntry>* blocks, Slice* filter, uint32_t* filter_lines);

}  // namespace jigsaw::ssd

#endif  // JIGSAW_SSD_TABLE_LAYOUT_H_
