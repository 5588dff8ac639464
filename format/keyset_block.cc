#include "format/keyset_block.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <type_traits>

#include "format/keyset_entry.h"
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

// The capabilities below that concern the current entry layout answer for
// version 2: keyset_entry.h must name that version's entries.
static_assert(std::is_same_v<EntryCursor, v2::EntryCursor> && std::is_same_v<EntryView, v2::EntryView>,
              "the current entry layout moved: update the capabilities of keyset_block.cc");
static_assert(SizingEntryBytes(16) == v2::EntrySize(1, 16), "BlockSizeBound expects v2's sizing bytes");

std::unique_ptr<PlacedBuilder> NewPlacedBuilder(const BlockBuilderOptions& options, char* dest, size_t capacity,
                                                uint64_t placed_value_bytes) {
  if (options.keyset_version != v2::kFormatVersion) return nullptr;
  return v2::Builder::WithPlacedValues(options, dest, capacity, placed_value_bytes);
}

bool BlockSizeBound(const BlockBuilderOptions& options, uint64_t entries, uint64_t value_bytes, uint64_t sizing_bytes,
                    uint64_t* size) {
  if (options.keyset_version != v2::kFormatVersion) return false;
  *size = v2::BlockSizeFor(entries, value_bytes, v2::KeySetBytesBound(entries, sizing_bytes), options);
  return true;
}

BlockSizer::BlockSizer(const BlockBuilderOptions& options)
    : options_(options),
      keyset_bytes_(options.keyset_version == v1::kFormatVersion ? v1::kHeadNodeSize : v2::kHeadNodeSize) {}

void BlockSizer::Add(size_t key_size, size_t value_size) {
  // The entry the bulk builder makes for entry number entries_.
  keyset_bytes_ += options_.keyset_version == v1::kFormatVersion
                       ? v1::EntrySize(v1::BulkHeight(entries_), key_size)
                       : v2::EntrySize(v2::BulkHeight(entries_), key_size);
  value_bytes_ += value_size;
  ++entries_;
}

uint64_t BlockSizer::size() const {
  return options_.keyset_version == v1::kFormatVersion
             ? v1::BlockSizeFor(entries_, value_bytes_, keyset_bytes_, options_)
             : v2::BlockSizeFor(entries_, value_bytes_, keyset_bytes_, options_);
}

bool BuilderTakesRuns(const BlockBuilderOptions& options) { return options.keyset_version == v2::kFormatVersion; }

bool HasEntryLayout(const Slice& block) { return VersionOf(block) == v2::kFormatVersion; }

Status ReadOutline(const char* header, uint64_t block_size, const Comparator* comparator, BlockOutline* outline) {
  v2::HeaderLayout layout;
  Status s = v2::ParseHeader(header, block_size, comparator, &layout);
  if (!s.ok()) return s;
  outline->count = layout.count;
  outline->bloom_offset = layout.bloom_offset;
  outline->bloom = layout.bloom;
  outline->piece_reads = layout.key_heads;
  return Status::OK();
}

namespace {

__attribute__((format(printf, 2, 3))) void Appendf(std::string* out, const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list again;
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  if (n > 0) {
    const size_t at = out->size();
    out->resize(at + static_cast<size_t>(n) + 1);
    std::vsnprintf(out->data() + at, static_cast<size_t>(n) + 1, format, again);
    out->resize(at + static_cast<size_t>(n));
  }
  va_end(again);
}

}  // namespace

std::string DescribeHeader(const Slice& block, const char* indent) {
  std::string out;
  if (block.size() < kHeaderSize) {
    Appendf(&out, "%s(%zu bytes: shorter than a KeySet header)\n", indent, block.size());
    return out;
  }
  const char* h = block.data();
  const uint32_t version = DecodeFixed32(h + hdr::kVersion);
  const uint64_t magic = DecodeFixed64(h + hdr::kMagic);
  // Version 1 names two of the fields after its own sections.
  const bool v1_names = version == v1::kFormatVersion;
  Appendf(&out, "%smagic %016" PRIx64 "%s, format_version %u, header_size %u, block_size %" PRIu64 "\n", indent,
          magic, magic == kMagic ? " (JIGSAWKS)" : " (not a KeySet block)", version,
          DecodeFixed32(h + hdr::kHeaderSize), DecodeFixed64(h + hdr::kBlockSize));
  Appendf(&out,
          "%sflags %#x, entry_count %u, value_buffer_size %" PRIu64 ", keyset_offset %" PRIu64
          ", keyset_size %" PRIu64 "\n",
          indent, DecodeFixed32(h + hdr::kFlags), DecodeFixed32(h + hdr::kEntryCount),
          DecodeFixed64(h + hdr::kValueBufferSize), DecodeFixed64(h + hdr::kKeySetOffset),
          DecodeFixed64(h + hdr::kKeySetSize));
  Appendf(&out, "%s%s %" PRIu64 ", %s %" PRIu64 ", bloom_offset %" PRIu64 ", bloom_lines %u, bloom_probes %u\n",
          indent, v1_names ? "entry_offsets_offset" : "samples_offset", DecodeFixed64(h + hdr::kEntryOffsetsOffset),
          v1_names ? "key_heads_offset" : "sample_heads_offset", DecodeFixed64(h + hdr::kKeyHeadsOffset),
          DecodeFixed64(h + hdr::kBloomOffset), DecodeFixed32(h + hdr::kBloomLines),
          DecodeFixed32(h + hdr::kBloomProbes));
  Appendf(&out, "%skey_head_skip %u, max_height %u, comparator_id %08x, checksum %08x\n", indent,
          DecodeFixed32(h + hdr::kKeyHeadSkip), DecodeFixed32(h + hdr::kMaxHeightUsed),
          DecodeFixed32(h + hdr::kComparatorId), DecodeFixed32(h + hdr::kChecksum));
  return out;
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
