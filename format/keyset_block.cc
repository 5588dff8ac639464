#include "format/keyset_block.h"

#include <algorithm>
#include <cstring>

#include "format/keyset_v1.h"
#include "format/keyset_v2.h"
#include "util/checksum.h"
#include "util/coding.h"

namespace jigsaw::keyset {

uint32_t ComparatorId(const Comparator* comparator) {
  const char* name = comparator->Name();
  return crc32c::Value(name, std::strlen(name));
}

uint64_t KeyHead(const Slice& user_key, size_t skip) {
  if (user_key.size() <= skip) return 0;
  uint64_t raw = 0;
  std::memcpy(&raw, user_key.data() + skip, std::min<size_t>(8, user_key.size() - skip));
  return __builtin_bswap64(raw);
}

size_t CommonPrefixLength(const Slice& a, const Slice& b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

uint32_t BlockChecksum(const char* block, uint64_t block_size) {
  const uint32_t crc = crc32c::Value(block + kHeaderSize, block_size - kHeaderSize);
  return crc32c::Extend(crc, block, hdr::kChecksum);
}

uint32_t VersionOf(const Slice& contents) {
  if (contents.size() < hdr::kVersion + 4) return 0;
  return DecodeFixed32(contents.data() + hdr::kVersion);
}

uint64_t BulkEntrySize(uint32_t version, uint64_t index, size_t key_size) {
  return version == 1 ? v1::EntrySize(v1::BulkHeight(index), key_size)
                      : v2::EntrySize(v2::BulkHeight(index), key_size);
}

uint64_t HeadNodeSize(uint32_t version) { return version == 1 ? v1::kHeadNodeSize : v2::kHeadNodeSize; }

uint64_t BlockSizeFor(uint64_t entries, uint64_t value_bytes, uint64_t keyset_bytes,
                      const BlockBuilderOptions& options) {
  return options.keyset_version == 1 ? v1::BlockSizeFor(entries, value_bytes, keyset_bytes, options)
                                     : v2::BlockSizeFor(entries, value_bytes, keyset_bytes, options);
}

std::unique_ptr<BlockBuilder> NewBuilder(const BlockBuilderOptions& options, char* dest, size_t capacity) {
  if (options.keyset_version == 1) return std::make_unique<v1::Builder>(options, dest, capacity);
  return std::make_unique<v2::Builder>(options, dest, capacity);
}

Status OpenReader(const Slice& contents, const BlockReadOptions& options, std::unique_ptr<BlockReader>* reader) {
  if (contents.size() >= kHeaderSize && DecodeFixed64(contents.data() + hdr::kMagic) == kMagic &&
      VersionOf(contents) == 1) {
    return v1::OpenReader(contents, options, reader);
  }
  // Everything else -- version 2, newer, 0, or not a block at all -- gets
  // version 2's checks and messages.
  return v2::OpenReader(contents, options, reader);
}

}  // namespace jigsaw::keyset
