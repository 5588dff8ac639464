#include "ssd/table_layout.h"

#include "format/block.h"
#include "format/bloom.h"
#include "util/checksum.h"
#include "util/coding.h"

namespace jigsaw::ssd {
namespace {

void PutFixed32(std::string* dst, uint32_t v) {
  char buf[4];
  EncodeFixed32(buf, v);
  dst->append(buf, 4);
}
void PutFixed64(std::string* dst, uint64_t v) {
  char buf[8];
  EncodeFixed64(buf, v);
  dst->append(buf, 8);
}

}  // namespace

void TableFooter::EncodeTo(std::string* out) const {
  const size_t start = out->size();
  PutFixed64(out, magic);
  PutFixed32(out, version);
  PutFixed32(out, block_format);
  PutFixed64(out, index_offset);
  PutFixed64(out, index_size);
  PutFixed64(out, entries);
  PutFixed32(out, index_crc);
  PutFixed32(out, crc32c::Value(out->data() + start, out->size() - start));
}

TableFooter TableFooter::DecodeFrom(const char* bytes) {
  TableFooter f;
  f.magic = DecodeFixed64(bytes);
  f.version = DecodeFixed32(bytes + 8);
  f.block_format = DecodeFixed32(bytes + 12);
  f.index_offset = DecodeFixed64(bytes + 16);
  f.index_size = DecodeFixed64(bytes + 24);
  f.entries = DecodeFixed64(bytes + 32);
  f.index_crc = DecodeFixed32(bytes + 40);
  f.footer_crc = DecodeFixed32(bytes + 44);
  return f;
}

Status TableFooter::Check(uint64_t file_size, const std::string& path) const {
  auto corrupt = [&](const char* what) { return Status::Corruption("table " + path, what); };
  if (magic != kTableMagic) return corrupt("bad magic (not a JigsawDB table)");
  std::string encoded;
  EncodeTo(&encoded);
  if (DecodeFixed32(encoded.data() + 44) != footer_crc) return corrupt("footer checksum mismatch");
  if (version > kTableFormatVersion) {
    return Status::NotSupported("table " + path, "format version " + std::to_string(version) + " is newer than " +
                                                     std::to_string(kTableFormatVersion));
  }
  if (version == 0 || (block_format != static_cast<uint32_t>(BlockFormat::kKeySet) &&
                       block_format != static_cast<uint32_t>(BlockFormat::kClassic))) {
    return corrupt("unknown version or block format");
  }
  if (file_size < kTableFooterSize || index_offset > file_size - kTableFooterSize ||
      index_size != file_size - kTableFooterSize - index_offset || index_size < 8) {
    return corrupt("index out of bounds");
  }
  return Status::OK();
}

uint32_t TableVersionFor(const std::vector<TableIndexEntry>& blocks) {
  uint32_t version = kUncompressedTableVersion;
  for (const TableIndexEntry& e : blocks) {
    if (IsSplitCodec(e.codec)) return kTableFormatVersion;
    if (e.compressed()) version = kWholeCompressionTableVersion;
  }
  return version;
}

void EncodeIndexEntries(const std::vector<TableIndexEntry>& blocks, uint32_t filter_lines, uint32_t version,
                        std::string* out) {
  PutFixed32(out, static_cast<uint32_t>(blocks.size()));
  PutFixed32(out, filter_lines);
  for (const TableIndexEntry& e : blocks) {
    PutFixed64(out, e.offset);
    PutFixed32(out, e.size);
    PutFixed32(out, e.entries);
    PutFixed32(out, static_cast<uint32_t>(e.smallest.size()));
    PutFixed32(out, static_cast<uint32_t>(e.largest.size()));
    if (version >= 2) {
      PutFixed32(out, static_cast<uint32_t>(e.stored_bytes()));
      PutFixed32(out, static_cast<uint32_t>(e.codec));
    }
    out->append(e.smallest);
    out->append(e.largest);
    out->resize(Pad8(out->size()), '\0');
  }
}

Status DecodeIndex(const Slice& index, uint64_t index_offset, uint32_t version, const std::string& path,
                   std::vector<TableIndexEntry>* blocks, Slice* filter, uint32_t* filter_lines) {
  auto corrupt = [&](const std::string& what) { return Status::Corruption("table " + path, what); };
  if (index.size() < 8) return corrupt("index truncated");
  const uint32_t count = DecodeFixed32(index.data());
  *filter_lines = DecodeFixed32(index.data() + 4);
  blocks->clear();
  size_t pos = 8;
  for (uint32_t i = 0; i < count; ++i) {
    const size_t fixed = IndexEntryFixed(version);
    if (index.size() - pos < fixed) return corrupt("index truncated");
    TableIndexEntry e;
    e.offset = DecodeFixed64(index.data() + pos);
    e.size = DecodeFixed32(index.data() + pos + 8);
    e.entries = DecodeFixed32(index.data() + pos + 12);
    const uint32_t small_len = DecodeFixed32(index.data() + pos + 16);
    const uint32_t large_len = DecodeFixed32(index.data() + pos + 20);
    if (version >= 2) {
      const uint32_t stored_size = DecodeFixed32(index.data() + pos + 24);
      const uint32_t codec = DecodeFixed32(index.data() + pos + 28);
      if (!IsKnownCodec(codec) || (version < 3 && IsSplitCodec(static_cast<StoredCodec>(codec)))) {
        return corrupt("block " + std::to_string(i) + ": unknown compression");
      }
      e.codec = static_cast<StoredCodec>(codec);
      if (e.compressed() ? stored_size == 0 : stored_size != e.size) {
        return corrupt("block " + std::to_string(i) + ": stored size disagrees with its compression");
      }
      e.stored_size = e.compressed() ? stored_size : 0;
    }
    pos += fixed;
    if (index.size() - pos < uint64_t{small_len} + large_len) return corrupt("index truncated");
    e.smallest.assign(index.data() + pos, small_len);
    e.largest.assign(index.data() + pos + small_len, large_len);
    pos = Pad8(pos + small_len + large_len);
    const uint64_t end = blocks->empty() ? 0 : blocks->back().offset + blocks->back().stored_bytes();
    if (e.offset % 8 != 0 || e.offset < end || e.offset + e.stored_bytes() > index_offset) {
      return corrupt("block " + std::to_string(i) + " out of bounds");
    }
    blocks->push_back(std::move(e));
  }
  if (pos > index.size() || index.size() - pos != uint64_t{*filter_lines} * bloom::kLineBytes) {
    return corrupt("filter size mismatch");
  }
  *filter = Slice(index.data() + pos, index.size() - pos);
  return Status::OK();
}

}  // namespace jigsaw::ssd
