#include "format/keyset_v1.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>
#include <string>

#include "format/keyset_node.h"
#include "util/checksum.h"
#include "util/coding.h"

namespace jigsaw::keyset::v1 {

// The memtable's nodes (format/keyset_node.h) are version 1 entries.
static_assert(node::kTag == ent::kTag && node::kIndex == ent::kIndex && node::kKeySize == ent::kKeySize &&
              node::kValueSize == ent::kValueSize && node::kHeight == ent::kHeight &&
              node::kKeyHash == ent::kKeyHash && node::kNext == ent::kNext);
static_assert(node::kHeaderSize == kEntryHeaderSize && node::kHeadSize == kHeadNodeSize);
static_assert(node::NodeSize(1, 0) == EntrySize(1, 0) && node::NodeSize(1, 1) == EntrySize(1, 1) &&
              node::NodeSize(3, 17) == EntrySize(3, 17) && node::NodeSize(kMaxHeight, 64) == EntrySize(kMaxHeight, 64));

uint32_t BulkHeight(uint64_t index) {
  const int trailing_zero_bits = std::countr_zero(index + 1);
  return 1 + std::min<uint32_t>(static_cast<uint32_t>(trailing_zero_bits / 2), kMaxHeight - 1);
}

namespace {

// Reads the key of a well-formed entry (builder-side, trusted memory).
inline Slice TrustedEntryKey(const char* entry) {
  const uint32_t height = DecodeFixed32(entry + ent::kHeight);
  return Slice(entry + kEntryHeaderSize + 8 * size_t{height}, DecodeFixed32(entry + ent::kKeySize));
}

}  // namespace

// ---------------------------------------------------------------------------
// Builder

Builder::Builder(const BlockBuilderOptions& options, char* dest, size_t capacity)
    : options_(options),
      key_heads_(options.comparator == BytewiseComparator()),
      dest_(dest),
      capacity_(capacity) {
  assert(reinterpret_cast<uintptr_t>(dest) % 8 == 0);
  // Entry offset, key head and Bloom bits per entry, rounded up.
  per_entry_bound_ = 4 + (key_heads_ ? 8 : 0) + (std::max(options.bloom_bits_per_key, 0) + 7) / 8;
  // Start with room for ~1/3 of the destination, the usual share of keys.
  ReserveStaging(std::clamp<uint64_t>(capacity / 3, kHeadNodeSize, uint64_t{4} << 20));
  // The head node: a sentinel entry of full height whose links start every
  // level of the skiplist.
  std::memset(staging_.get(), 0, kHeadNodeSize);
  EncodeFixed32(StagingAt(0) + ent::kHeight, kMaxHeight);
  keyset_bytes_ = kHeadNodeSize;
}

void Builder::ReserveStaging(uint64_t bytes) {
  if (bytes <= staging_capacity_) return;
  const uint64_t capacity = std::max<uint64_t>(AlignUp8(bytes), 2 * staging_capacity_);
  std::unique_ptr<uint64_t[]> grown(new uint64_t[capacity / 8]);  // uninitialised
  if (keyset_bytes_ > 0) std::memcpy(grown.get(), staging_.get(), keyset_bytes_);
  staging_ = std::move(grown);
  staging_capacity_ = capacity;
}

Builder::Layout Builder::ComputeLayout(uint64_t entries, uint64_t value_bytes, uint64_t keyset_bytes,
                                       bool key_heads, int bloom_bits_per_key) {
  Layout layout;
  layout.keyset_offset = kHeaderSize + AlignUp8(value_bytes);
  layout.entry_offsets_offset = layout.keyset_offset + keyset_bytes;
  uint64_t end = layout.entry_offsets_offset + AlignUp8(4 * entries);
  layout.key_heads_offset = 0;
  if (key_heads) {
    layout.key_heads_offset = end;
    end += KeyHeadsSectionSize(entries);
  }
  layout.bloom.lines = bloom::LinesFor(entries, bloom_bits_per_key);
  layout.bloom.probes = layout.bloom.lines > 0 ? bloom::kProbes : 0;
  layout.bloom_offset = 0;
  if (layout.bloom.lines > 0) {
    layout.bloom_offset = AlignUp64(end);
    end = layout.bloom_offset + uint64_t{layout.bloom.lines} * bloom::kLineBytes;
  }
  layout.block_size = end;
  return layout;
}

uint64_t BlockSizeFor(uint64_t entries, uint64_t value_bytes, uint64_t keyset_bytes,
                      const BlockBuilderOptions& options) {
  return Builder::ComputeLayout(entries, value_bytes, keyset_bytes, options.comparator == BytewiseComparator(),
                                options.bloom_bits_per_key)
      .block_size;
}

Slice Builder::LastUserKey() const {
  assert(!entry_offsets_.empty());
  return TrustedEntryKey(StagingAt(entry_offsets_.back()));
}

size_t Builder::CurrentSize() const {
  return ComputeLayout(entry_offsets_.size(), value_bytes_, keyset_bytes_, key_heads_, options_.bloom_bits_per_key).block_size;
}

Status Builder::AddWithHash(const Slice& user_key, SequenceNumber sequence, ValueType type, const Slice& value,
                            uint32_t key_hash) {
  assert(key_hash == bloom::KeyHash(user_key));
  assert(!finished_);
  if (user_key.size() > kMaxKeySize) {
    return Status::InvalidArgument("key too large",
                                   std::to_string(user_key.size()) + " bytes, limit " +
                                       std::to_string(kMaxKeySize));
  }
  if (value.size() > kMaxValueSize) {
    return Status::InvalidArgument("value too large",
                                   std::to_string(value.size()) + " bytes, limit " +
                                       std::to_string(kMaxValueSize));
  }
  if (sequence > kMaxSequenceNumber) return Status::InvalidArgument("sequence number above 2^56-1");

  const uint64_t index = entry_offsets_.size();
  const uint32_t height = BulkHeight(index);
  const uint64_t entry_size = EntrySize(height, user_key.size());
  const uint64_t new_value_bytes = value_bytes_ + value.size();
  const uint64_t new_keyset_bytes = keyset_bytes_ + entry_size;
  if (new_value_bytes > kMaxSectionSize || new_keyset_bytes > kMaxSectionSize) {
    return Status::NoSpace("KeySet block full");
  }
  // A cheap upper bound of the finished size first; the exact layout only
  // when the block gets close to full.
  const uint64_t size_bound = kHeaderSize + new_value_bytes + new_keyset_bytes + (index + 1) * per_entry_bound_ +
                              kSizeBoundSlack;
  if (size_bound > capacity_ &&
      ComputeLayout(index + 1, new_value_bytes, new_keyset_bytes, key_heads_, options_.bloom_bits_per_key).block_size > capacity_) {
    return Status::NoSpace("KeySet block full");
  }

#ifndef NDEBUG
  if (index > 0) {
    const char* last = StagingAt(entry_offsets_.back());
    assert(CompareInternal(options_.comparator, TrustedEntryKey(last), DecodeFixed64(last),
                           user_key, PackTag(sequence, type)) < 0);
  }
#endif

  if (!value.empty()) std::memcpy(dest_ + kHeaderSize + value_bytes_, value.data(), value.size());

  const uint64_t offset = keyset_bytes_;
  ReserveStaging(new_keyset_bytes);
  char* entry = StagingAt(offset);
  EncodeFixed64(entry + ent::kTag, PackTag(sequence, type));
  EncodeFixed64(entry + ent::kIndex, value_bytes_);
  EncodeFixed32(entry + ent::kKeySize, static_cast<uint32_t>(user_key.size()));
  EncodeFixed32(entry + ent::kValueSize, static_cast<uint32_t>(value.size()));
  EncodeFixed32(entry + ent::kHeight, height);
  EncodeFixed32(entry + ent::kKeyHash, key_hash);
  // Links are not written here: each is set when the next entry of that
  // level arrives, or terminated by Finish.
  char* key = entry + kEntryHeaderSize + 8 * size_t{height};
  if (!user_key.empty()) {
    EncodeFixed64(key + AlignUp8(user_key.size()) - 8, 0);  // zero padding
    std::memcpy(key, user_key.data(), user_key.size());
  }
  for (uint32_t level = 0; level < height; ++level) {
    EncodeFixed64(StagingAt(last_at_level_[level]) + ent::kNext + 8 * level, offset);
    last_at_level_[level] = offset;
  }
  max_height_ = std::max(max_height_, height);
  entry_offsets_.push_back(static_cast<uint32_t>(offset));
  value_bytes_ = new_value_bytes;
  keyset_bytes_ = new_keyset_bytes;
  return Status::OK();
}

Status Builder::Finish(size_t* block_size) {
  assert(!finished_);
  const uint64_t n = entry_offsets_.size();
  const Layout layout = ComputeLayout(n, value_bytes_, keyset_bytes_, key_heads_, options_.bloom_bits_per_key);
  if (layout.block_size > capacity_) return Status::NoSpace("KeySet block does not fit");
  finished_ = true;
  char* staging = StagingAt(0);
  for (uint32_t level = 0; level < kMaxHeight; ++level) {
    EncodeFixed64(staging + last_at_level_[level] + ent::kNext + 8 * level, 0);  // end of each level
  }

  // The value buffer with its padding.
  std::memset(dest_ + kHeaderSize + value_bytes_, 0, layout.keyset_offset - kHeaderSize - value_bytes_);
  uint32_t crc = crc32c::Value(dest_ + kHeaderSize, layout.keyset_offset - kHeaderSize);

  // The key set, copied and checksummed in cache-sized chunks, with the key
  // head of each entry computed while its chunk is hot.
  uint32_t skip = 0;
  if (key_heads_ && n > 0) {
    skip = static_cast<uint32_t>(CommonPrefixLength(TrustedEntryKey(staging + entry_offsets_.front()),
                                                    TrustedEntryKey(staging + entry_offsets_.back())));
  }
  char* const keyset = dest_ + layout.keyset_offset;
  char* const heads = key_heads_ ? dest_ + layout.key_heads_offset : nullptr;
  constexpr uint64_t kChunkBytes = 64 * 1024;
  uint64_t chunk_begin = 0;
  uint64_t next_entry = 0;
  while (chunk_begin < keyset_bytes_) {
    uint64_t chunk_end = std::min(keyset_bytes_, chunk_begin + kChunkBytes);
    // Extend the chunk to the end of the entry it cuts through.
    while (next_entry < n && entry_offsets_[next_entry] < chunk_end) {
      const char* entry = staging + entry_offsets_[next_entry];
      if (heads != nullptr) {
        const uint64_t head = KeyHead(TrustedEntryKey(entry), skip);
        EncodeFixed64(heads + 8 * next_entry, head);
        if (next_entry % kHeadFenceStride == 0) EncodeFixed64(heads + 8 * (n + next_entry / kHeadFenceStride), head);
      }
      ++next_entry;
    }
    if (next_entry < n) chunk_end = std::max<uint64_t>(chunk_end, entry_offsets_[next_entry]);
    else chunk_end = keyset_bytes_;
    std::memcpy(keyset + chunk_begin, staging + chunk_begin, chunk_end - chunk_begin);
    crc = crc32c::Extend(crc, staging + chunk_begin, chunk_end - chunk_begin);
    chunk_begin = chunk_end;
  }

  // Entry offsets (zero-padded to 8 bytes), then the Bloom filter.
  char* offsets = dest_ + layout.entry_offsets_offset;
  if (n > 0) std::memcpy(offsets, entry_offsets_.data(), 4 * n);
  std::memset(offsets + 4 * n, 0, AlignUp8(4 * n) - 4 * n);
  if (layout.bloom.lines > 0) {
    const uint64_t filter_start = layout.key_heads_offset != 0 ? layout.key_heads_offset + KeyHeadsSectionSize(n)
                                                               : layout.entry_offsets_offset + AlignUp8(4 * n);
    std::memset(dest_ + filter_start, 0, layout.block_size - filter_start);
    char* bloom_lines = dest_ + layout.bloom_offset;
    // From the hashes stored in the entries: no key is hashed twice.
    for (uint32_t offset : entry_offsets_) {
      bloom::AddHash(bloom_lines, layout.bloom, DecodeFixed32(staging + offset + ent::kKeyHash));
    }
  }
  crc = crc32c::Extend(crc, offsets, layout.block_size - layout.entry_offsets_offset);

  // Header, then the checksum over [128, block_size) followed by [0, 124).
  std::memset(dest_, 0, kHeaderSize);
  EncodeFixed64(dest_ + hdr::kMagic, kMagic);
  EncodeFixed32(dest_ + hdr::kVersion, kFormatVersion);
  EncodeFixed32(dest_ + hdr::kHeaderSize, kHeaderSize);
  EncodeFixed64(dest_ + hdr::kBlockSize, layout.block_size);
  EncodeFixed32(dest_ + hdr::kFlags, key_heads_ ? kFlagKeyHeads : 0);
  EncodeFixed32(dest_ + hdr::kEntryCount, static_cast<uint32_t>(n));
  EncodeFixed64(dest_ + hdr::kValueBufferSize, value_bytes_);
  EncodeFixed64(dest_ + hdr::kKeySetOffset, layout.keyset_offset);
  EncodeFixed64(dest_ + hdr::kKeySetSize, keyset_bytes_);
  EncodeFixed64(dest_ + hdr::kEntryOffsetsOffset, layout.entry_offsets_offset);
  EncodeFixed64(dest_ + hdr::kKeyHeadsOffset, layout.key_heads_offset);
  EncodeFixed64(dest_ + hdr::kBloomOffset, layout.bloom_offset);
  EncodeFixed32(dest_ + hdr::kBloomLines, layout.bloom.lines);
  EncodeFixed32(dest_ + hdr::kBloomProbes, layout.bloom.probes);
  EncodeFixed32(dest_ + hdr::kKeyHeadSkip, skip);
  EncodeFixed32(dest_ + hdr::kMaxHeightUsed, max_height_);
  EncodeFixed32(dest_ + hdr::kComparatorId, ComparatorId(options_.comparator));
  crc = crc32c::Extend(crc, dest_, hdr::kChecksum);
  EncodeFixed32(dest_ + hdr::kChecksum, crc);
  *block_size = layout.block_size;
  return Status::OK();
}

// ---------------------------------------------------------------------------
// Reader

namespace {

struct EntryView {
  Slice key;
  Slice value;
  uint64_t tag = 0;
  uint64_t offset = 0;
  uint32_t height = 0;
};

// The sections every lookup and iteration reads. Iterators keep a copy, so a
// step reads no reader state through a pointer.
struct Sections {
  const char* values = nullptr;
  uint64_t value_buffer_size = 0;
  const char* keyset = nullptr;
  uint64_t keyset_size = 0;
  const char* entry_offsets = nullptr;

  // Loads entry `index` (< entry count). False if the entry does not lie
  // inside the block. These are the only checks memory safety needs; the
  // finer structure (alignment, heights, order, links) is Validate()'s job.
  bool LoadEntry(uint32_t index, EntryView* entry) const {
    const uint64_t offset = DecodeFixed32(entry_offsets + 4 * size_t{index});
    if (offset + kMinEntrySize > keyset_size) return false;
    const char* p = keyset + offset;
    const uint32_t height = DecodeFixed32(p + ent::kHeight);
    const uint64_t key_offset = offset + kEntryHeaderSize + 8 * uint64_t{height};
    const uint32_t key_size = DecodeFixed32(p + ent::kKeySize);
    const uint64_t value_offset = DecodeFixed64(p + ent::kIndex);
    const uint32_t value_size = DecodeFixed32(p + ent::kValueSize);
    const uint64_t tag = DecodeFixed64(p + ent::kTag);
    if (key_offset + key_size > keyset_size || value_offset > value_buffer_size ||
        value_size > value_buffer_size - value_offset || (tag & 0xff) > kMaxValueTypeByte) {
      return false;
    }
    entry->key = Slice(keyset + key_offset, key_size);
    entry->value = Slice(values + value_offset, value_size);
    entry->tag = tag;
    entry->offset = offset;
    entry->height = height;
    return true;
  }
};

// The header fields that place a block's sections (defined with Reader::Open).
struct SectionFields;

}  // namespace

class Reader final : public BlockReader {
 public:
  static Status Open(const Slice& contents, const BlockReadOptions& options,
                     std::unique_ptr<BlockReader>* reader);

  BlockFormat format() const override { return BlockFormat::kKeySet; }
  uint64_t num_entries() const override { return count_; }
  Status Get(const Slice& user_key, SequenceNumber snapshot, BlockLookup* result) const override;
  std::unique_ptr<InternalIterator> NewIterator() const override;
  Status Validate() const override;

  bool LoadEntry(uint32_t index, EntryView* entry) const { return s_.LoadEntry(index, entry); }
  const Sections& sections() const { return s_; }

  // First index whose internal key is >= (user_key, tag); *corrupt is set if
  // a malformed entry was met. Two phases: Narrow does the cache-resident
  // part (common prefix, head fences) and prefetches what Search reads.
  uint32_t LowerBound(const Slice& user_key, uint64_t tag, bool* corrupt) const {
    return Search(Narrow(user_key), user_key, tag, corrupt);
  }

  struct SearchRange {
    uint32_t lo, hi;  // the answer is in [lo, hi]
    bool decided;     // the answer is lo
  };
  SearchRange Narrow(const Slice& user_key) const;
  uint32_t Search(SearchRange range, const Slice& user_key, uint64_t tag, bool* corrupt) const;

 private:
  Reader() = default;
  // Points the reader at the sections `f` places in the block at `base` (fields CheckSectionFields accepted).
  void AttachSections(const char* base, const SectionFields& f);
  // Checks the head node and, with a key head skip, that the first entry holds the common key prefix (which it
  // records). OK if both hold.
  Status CheckFirstEntries();
  uint64_t LinkAt(uint64_t node_offset, uint32_t level) const {
    return DecodeFixed64(s_.keyset + node_offset + ent::kNext + 8 * size_t{level});
  }

  const Comparator* comparator_ = nullptr;
  uint32_t count_ = 0;
  Sections s_;
  const char* key_heads_ = nullptr;    // nullptr: no key heads
  const char* head_fences_ = nullptr;  // key_heads_[kHeadFenceStride * i], i < HeadFenceCount
  uint32_t key_head_skip_ = 0;
  const char* common_prefix_ = nullptr;  // first key_head_skip_ bytes shared by every key
  const char* bloom_ = nullptr;          // nullptr: no filter
  bloom::Geometry bloom_geometry_;
  uint32_t max_height_ = 1;
};

namespace {

// Checks what a block must hold before its sections are read: its size, alignment, magic, format version, header
// size, checksum (if options.verify_checksum), reserved bytes, flags and comparator. OK if all hold.
Status CheckHeader(const Slice& contents, const BlockReadOptions& options) {
  const char* base = contents.data();
  const uint64_t size = contents.size();
  if (size < kHeaderSize) {
    return Status::Corruption("KeySet block truncated",
                              std::to_string(size) + " bytes, header needs " + std::to_string(kHeaderSize));
  }
  if (reinterpret_cast<uintptr_t>(base) % 8 != 0) {
    return Status::InvalidArgument("KeySet block buffer is not 8-byte aligned");
  }
  if (DecodeFixed64(base + hdr::kMagic) != kMagic) return Status::Corruption("not a KeySet block (bad magic)");
  const uint32_t version = DecodeFixed32(base + hdr::kVersion);
  if (version > kFormatVersion) {
    return Status::NotSupported("KeySet block format version " + std::to_string(version) +
                                " is newer than the supported version " + std::to_string(kFormatVersion));
  }
  if (version == 0) return Status::Corruption("KeySet block has format version 0");
  if (DecodeFixed32(base + hdr::kHeaderSize) != kHeaderSize) {
    return Status::Corruption("KeySet block header size is not 128");
  }
  const uint64_t block_size = DecodeFixed64(base + hdr::kBlockSize);
  if (block_size != size) {
    return Status::Corruption("KeySet block size mismatch", "header says " + std::to_string(block_size) +
                                                                 ", buffer has " + std::to_string(size));
  }
  if (options.verify_checksum) {
    uint32_t crc = crc32c::Value(base + kHeaderSize, size - kHeaderSize);
    crc = crc32c::Extend(crc, base, hdr::kChecksum);
    if (crc != DecodeFixed32(base + hdr::kChecksum)) return Status::Corruption("KeySet block checksum mismatch");
  }
  for (size_t i = hdr::kReserved; i < hdr::kChecksum; ++i) {
    if (base[i] != 0) return Status::Corruption("KeySet block header has non-zero reserved bytes");
  }
  const uint32_t flags = DecodeFixed32(base + hdr::kFlags);
  if ((flags & ~kKnownFlags) != 0) return Status::Corruption("KeySet block has unknown flags");
  if (DecodeFixed32(base + hdr::kComparatorId) != ComparatorId(options.comparator)) {
    return Status::InvalidArgument("KeySet block was built with a different comparator than",
                                   options.comparator->Name());
  }
  if ((flags & kFlagKeyHeads) != 0 && options.comparator != BytewiseComparator()) {
    return Status::InvalidArgument("KeySet block has key heads but the comparator is not bytewise");
  }
  return Status::OK();
}

// The header fields that place a block's sections, as stored (not yet checked).
struct SectionFields {
  bool has_heads = false;
  uint64_t block_size = 0;
  uint64_t count = 0;
  uint64_t value_buffer_size = 0;
  uint64_t keyset_offset = 0;
  uint64_t keyset_size = 0;
  uint64_t entry_offsets_offset = 0;
  uint64_t key_heads_offset = 0;
  uint64_t bloom_offset = 0;
  bloom::Geometry geometry;
  uint32_t skip = 0;
  uint32_t max_height = 0;
};

// Reads the section fields of a header CheckHeader accepted.
SectionFields DecodeSectionFields(const char* base) {
  SectionFields f;
  f.has_heads = (DecodeFixed32(base + hdr::kFlags) & kFlagKeyHeads) != 0;
  f.block_size = DecodeFixed64(base + hdr::kBlockSize);
  f.count = DecodeFixed32(base + hdr::kEntryCount);
  f.value_buffer_size = DecodeFixed64(base + hdr::kValueBufferSize);
  f.keyset_offset = DecodeFixed64(base + hdr::kKeySetOffset);
  f.keyset_size = DecodeFixed64(base + hdr::kKeySetSize);
  f.entry_offsets_offset = DecodeFixed64(base + hdr::kEntryOffsetsOffset);
  f.key_heads_offset = DecodeFixed64(base + hdr::kKeyHeadsOffset);
  f.bloom_offset = DecodeFixed64(base + hdr::kBloomOffset);
  f.geometry = bloom::Geometry{DecodeFixed32(base + hdr::kBloomLines), DecodeFixed32(base + hdr::kBloomProbes)};
  f.skip = DecodeFixed32(base + hdr::kKeyHeadSkip);
  f.max_height = DecodeFixed32(base + hdr::kMaxHeightUsed);
  return f;
}

// Checks that the sections lie in the builder's order, each where the one before ends, and fill the block exactly;
// and that the key head skip and the max height are in range. OK if all hold.
Status CheckSectionFields(const SectionFields& f) {
  auto bad = [](const char* what) { return Status::Corruption("KeySet block header", what); };
  if (f.value_buffer_size > kMaxSectionSize) return bad("value buffer too large");
  if (f.keyset_offset != kHeaderSize + AlignUp8(f.value_buffer_size)) return bad("key set offset");
  if (f.keyset_size > kMaxSectionSize || f.keyset_size < kHeadNodeSize || f.keyset_size % 8 != 0) {
    return bad("key set size");
  }
  if (f.count * kMinEntrySize > f.keyset_size - kHeadNodeSize) return bad("entry count exceeds key set");
  if (f.entry_offsets_offset != f.keyset_offset + f.keyset_size) return bad("entry offsets offset");
  uint64_t end = f.entry_offsets_offset + AlignUp8(4 * f.count);
  if (f.has_heads) {
    if (f.key_heads_offset != end) return bad("key heads offset");
    end += KeyHeadsSectionSize(f.count);
  } else if (f.key_heads_offset != 0 || f.skip != 0) {
    return bad("key heads fields set without key heads");
  }
  if (f.geometry.lines > 0) {
    if (f.geometry.probes != bloom::kProbes) return bad("bloom probes");
    if (f.bloom_offset != AlignUp64(end)) return bad("bloom offset");
    end = f.bloom_offset + uint64_t{f.geometry.lines} * bloom::kLineBytes;
  } else if (f.geometry.probes != 0 || f.bloom_offset != 0) {
    return bad("bloom fields set without a filter");
  }
  if (end != f.block_size) return bad("sections do not add up to the block size");
  if (f.skip > kMaxKeySize) return bad("key head skip");
  if (f.max_height == 0 || f.max_height > kMaxHeight) return bad("max height");
  return Status::OK();
}

}  // namespace

Status Reader::Open(const Slice& contents, const BlockReadOptions& options,
                    std::unique_ptr<BlockReader>* result) {
  Status s = CheckHeader(contents, options);
  if (!s.ok()) return s;
  const char* base = contents.data();
  const SectionFields f = DecodeSectionFields(base);
  s = CheckSectionFields(f);
  if (!s.ok()) return s;

  std::unique_ptr<Reader> r(new Reader());
  r->comparator_ = options.comparator;
  r->AttachSections(base, f);
  s = r->CheckFirstEntries();
  if (!s.ok()) return s;
  *result = std::move(r);
  return Status::OK();
}

void Reader::AttachSections(const char* base, const SectionFields& f) {
  count_ = static_cast<uint32_t>(f.count);
  s_.values = base + kHeaderSize;
  s_.value_buffer_size = f.value_buffer_size;
  s_.keyset = base + f.keyset_offset;
  s_.keyset_size = f.keyset_size;
  s_.entry_offsets = base + f.entry_offsets_offset;
  key_heads_ = f.has_heads ? base + f.key_heads_offset : nullptr;
  head_fences_ = f.has_heads ? base + f.key_heads_offset + 8 * f.count : nullptr;
  key_head_skip_ = f.skip;
  bloom_ = f.geometry.lines > 0 ? base + f.bloom_offset : nullptr;
  bloom_geometry_ = f.geometry;
  max_height_ = f.max_height;
}

Status Reader::CheckFirstEntries() {
  if (DecodeFixed32(s_.keyset + ent::kHeight) != kMaxHeight || DecodeFixed32(s_.keyset + ent::kKeySize) != 0) {
    return Status::Corruption("KeySet block head node is malformed");
  }
  if (key_head_skip_ > 0) {
    EntryView first;
    if (count_ == 0 || !LoadEntry(0, &first) || first.key.size() < key_head_skip_) {
      return Status::Corruption("KeySet block first entry does not hold the common key prefix");
    }
    common_prefix_ = first.key.data();
  }
  return Status::OK();
}

namespace {

// First index in heads[lo, hi) whose head is >= target (or > target when
// `strict`), without data-dependent branches: the loop runs log2(hi - lo)
// times and each step is a conditional move, so a lookup costs only the
// dependent loads, never a mispredicted branch.
inline uint32_t HeadBound(const char* heads, uint32_t lo, uint32_t hi, uint64_t target, bool strict) {
  uint32_t base = lo;
  uint32_t n = hi - lo;
  while (n > 1) {
    const uint32_t half = n / 2;
    const uint64_t head = DecodeFixed64(heads + 8 * size_t{base + half - 1});
    base = (strict ? head <= target : head < target) ? base + half : base;
    n -= half;
  }
  if (n == 1) {
    const uint64_t head = DecodeFixed64(heads + 8 * size_t{base});
    base += (strict ? head <= target : head < target) ? 1 : 0;
  }
  return base;
}

}  // namespace

Reader::SearchRange Reader::Narrow(const Slice& user_key) const {
  SearchRange range{0, count_, false};
  if (key_heads_ == nullptr || count_ == 0) return range;
  // Every key starts with the common prefix; a target outside it sorts
  // before or after the whole block.
  const size_t n = std::min<size_t>(user_key.size(), key_head_skip_);
  const int c = n == 0 ? 0 : std::memcmp(user_key.data(), common_prefix_, n);
  if (c < 0 || (c == 0 && user_key.size() < key_head_skip_)) return {0, 0, true};
  if (c > 0) return {count_, count_, true};
  // The fences bracket the answer within one stride: heads[32(f-1)] < target
  // <= heads[32f] for the first fence f that is >= target.
  const uint64_t target_head = KeyHead(user_key, key_head_skip_);
  const auto fence =
      HeadBound(head_fences_, 0, static_cast<uint32_t>(HeadFenceCount(count_)), target_head, /*strict=*/false);
  if (fence == 0) return {0, 0, false};
  range.lo = (fence - 1) * kHeadFenceStride + 1;
  range.hi = std::min<uint32_t>(fence * kHeadFenceStride, count_);
  // Fetch the stride's heads (256 bytes) in parallel rather than one
  // dependent miss per step of the search.
  const char* first = key_heads_ + 8 * size_t{range.lo};
  const char* last = key_heads_ + 8 * size_t{range.hi};
  for (const char* p = first; p < last; p += 64) __builtin_prefetch(p);
  __builtin_prefetch(last - 1);
  return range;
}

uint32_t Reader::Search(SearchRange range, const Slice& user_key, uint64_t tag, bool* corrupt) const {
  *corrupt = false;
  if (range.decided) return range.lo;
  uint32_t lo = range.lo;
  uint32_t hi = range.hi;
  if (key_heads_ != nullptr) {
    // Heads order the keys up to ties; only the entries whose head equals
    // the target's need a full comparison.
    const uint64_t target_head = KeyHead(user_key, key_head_skip_);
    lo = HeadBound(key_heads_, lo, hi, target_head, /*strict=*/false);
    if (lo == count_ || DecodeFixed64(key_heads_ + 8 * size_t{lo}) != target_head) return lo;
    // The run of equal heads is usually one entry long (heads are unique
    // unless keys repeat or share 8 bytes after the prefix).
    hi = lo + 1;
    if (hi < count_ && DecodeFixed64(key_heads_ + 8 * size_t{hi}) == target_head) {
      hi = HeadBound(key_heads_, hi, count_, target_head, /*strict=*/true);
    }
  }
  EntryView entry;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (!LoadEntry(mid, &entry)) {
      *corrupt = true;
      return count_;
    }
    if (CompareInternal(comparator_, entry.key, entry.tag, user_key, tag) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

Status Reader::Get(const Slice& user_key, SequenceNumber snapshot, BlockLookup* result) const {
  // The Bloom line is fetched while the head fences (cache-resident) are
  // searched; it is tested before touching anything else.
  const char* line = nullptr;
  uint32_t hash = 0;
  if (bloom_ != nullptr) {
    hash = bloom::KeyHash(user_key);
    line = bloom::LineFor(bloom_, bloom_geometry_, hash);
    __builtin_prefetch(line);
  }
  const SearchRange range = Narrow(user_key);
  if (line != nullptr && !bloom::LineMayContain(line, hash)) return Status::NotFound(Slice());
  bool corrupt = false;
  const uint32_t index = Search(range, user_key, PackTag(snapshot, ValueType::kValue), &corrupt);
  if (corrupt) return Status::Corruption("KeySet block has a malformed entry");
  if (index >= count_) return Status::NotFound(Slice());
  EntryView entry;
  if (!LoadEntry(index, &entry)) return Status::Corruption("KeySet block has a malformed entry");
  if (comparator_->Compare(entry.key, user_key) != 0) return Status::NotFound(Slice());
  result->type = TagType(entry.tag);
  result->sequence = TagSequence(entry.tag);
  result->value = result->type == ValueType::kValue ? entry.value : Slice();
  return Status::OK();
}

Status Reader::Validate() const {
  // Last node seen at each level (0 = the head node, which has every level).
  uint64_t previous_at_level[kMaxHeight] = {};
  uint64_t previous_end = kHeadNodeSize;
  EntryView previous;
  EntryView entry;
  auto corruption = [](uint32_t index, const char* what) {
    return Status::Corruption("KeySet block entry " + std::to_string(index), what);
  };
  for (uint32_t i = 0; i < count_; ++i) {
    if (!LoadEntry(i, &entry)) return corruption(i, "lies outside the key set");
    if (entry.offset % 8 != 0) return corruption(i, "is not 8-byte aligned");
    if (entry.offset < previous_end) return corruption(i, "overlaps the previous entry");
    if (entry.height == 0) return corruption(i, "has height 0");
    previous_end = entry.offset + EntrySize(entry.height, entry.key.size());
    const uint32_t key_hash = DecodeFixed32(s_.keyset + entry.offset + ent::kKeyHash);
    if (key_hash != bloom::KeyHash(entry.key)) return corruption(i, "stored key hash mismatch");
    if (entry.height > max_height_) return corruption(i, "taller than the header's max height");
    if (i > 0 && CompareInternal(comparator_, previous.key, previous.tag, entry.key, entry.tag) >= 0) {
      return corruption(i, "out of order");
    }
    for (uint32_t level = 0; level < entry.height; ++level) {
      if (LinkAt(previous_at_level[level], level) != entry.offset) return corruption(i, "skiplist link mismatch");
      previous_at_level[level] = entry.offset;
    }
    if (key_heads_ != nullptr) {
      if (entry.key.size() < key_head_skip_ ||
          (key_head_skip_ > 0 && std::memcmp(entry.key.data(), common_prefix_, key_head_skip_) != 0)) {
        return corruption(i, "does not start with the block's common prefix");
      }
      const uint64_t head = DecodeFixed64(key_heads_ + 8 * size_t{i});
      if (head != KeyHead(entry.key, key_head_skip_)) return corruption(i, "key head mismatch");
      if (i % kHeadFenceStride == 0 && DecodeFixed64(head_fences_ + 8 * size_t{i / kHeadFenceStride}) != head) {
        return corruption(i, "head fence mismatch");
      }
    }
    if (bloom_ != nullptr && !bloom::MayContainHash(bloom_, bloom_geometry_, key_hash)) {
      return corruption(i, "missing from the Bloom filter");
    }
    previous = entry;
  }
  for (uint32_t level = 0; level < kMaxHeight; ++level) {
    if (LinkAt(previous_at_level[level], level) != 0) {
      return Status::Corruption("KeySet block skiplist level does not end after the last entry");
    }
  }
  return Status::OK();
}

// ---------------------------------------------------------------------------
// Iterator

namespace {

class Iterator final : public InternalIterator {
 public:
  explicit Iterator(const Reader* reader)
      : reader_(reader), sections_(reader->sections()), count_(reader->num_entries()), index_(count_) {}

  void SeekToFirst() override { Position(0); }
  void SeekToLast() override { Position(count_ == 0 ? 0 : count_ - 1); }
  void Seek(const Slice& user_key, SequenceNumber sequence) override {
    bool corrupt = false;
    const uint32_t index = reader_->LowerBound(user_key, PackTag(sequence, ValueType::kValue), &corrupt);
    if (corrupt) {
      MarkCorrupt();
    } else {
      Position(index);
    }
  }
  void Next() override {
    assert(Valid());
    Position(index_ + 1);
  }
  void Prev() override {
    assert(Valid());
    Position(index_ == 0 ? count_ : index_ - 1);
  }
  Status status() const override { return status_; }

 private:
  void Position(uint32_t index) {
    index_ = index;
    valid_ = index_ < count_;
    if (valid_) {
      EntryView entry;
      if (!sections_.LoadEntry(index_, &entry)) return MarkCorrupt();
      user_key_ = entry.key;
      value_ = entry.value;
      tag_ = entry.tag;
      key_hash_ = DecodeFixed32(sections_.keyset + entry.offset + ent::kKeyHash);
      has_key_hash_ = true;
    }
  }
  // Out of line and cold: keeps the Status construction off the stepping path.
  [[gnu::noinline, gnu::cold]] void MarkCorrupt() {
    status_ = Status::Corruption("KeySet block has a malformed entry");
    index_ = count_;
    valid_ = false;
  }

  const Reader* const reader_;
  const Sections sections_;
  const uint32_t count_;
  uint32_t index_;  // == count_ when not valid
  Status status_;
};

}  // namespace

std::unique_ptr<InternalIterator> Reader::NewIterator() const { return std::make_unique<Iterator>(this); }

Status OpenReader(const Slice& contents, const BlockReadOptions& options, std::unique_ptr<BlockReader>* reader) {
  return Reader::Open(contents, options, reader);
}

}  // namespace jigsaw::keyset::v1
