// The version 2 builder (format/keyset_v2.h); readers are in
// keyset_v2_reader.cc, the piece reader in keyset_v2_pieces.cc.
#include "format/keyset_v2.h"

#include <algorithm>
#include <bit>
#include <cassert>
#include <cstring>
#include <memory>
#include <string>

#include "util/checksum.h"
#include "util/coding.h"
#include "util/profile_clock.h"
#include "util/short_copy.h"

namespace jigsaw::keyset::v2 {

uint32_t BulkHeight(uint64_t index) {
  const int trailing_zero_bits = std::countr_zero(index + 1);
  return 1 + std::min<uint32_t>(static_cast<uint32_t>(trailing_zero_bits / 3), kMaxHeight - 1);
}

uint64_t KeySetBytesBound(uint64_t entries, uint64_t height_one_bytes) {
  // Entries of height > l (l >= 1): those whose ordinal + 1 is a multiple
  // of 8^l, at most kMaxHeight - 1 extra levels.
  uint64_t extra_levels = 0;
  uint64_t stride = 1;
  for (uint32_t level = 1; level < kMaxHeight; ++level) {
    if (stride > entries / 8) break;
    stride *= 8;
    extra_levels += entries / stride;
  }
  return kHeadNodeSize + height_one_bytes + 8 * extra_levels;
}

namespace {

// Reads the key of a well-formed entry (builder-side, trusted memory).
inline Slice TrustedEntryKey(const char* entry) {
  const uint32_t shape = DecodeFixed32(entry + ent::kShape);
  return Slice(entry + kEntryHeaderSize + 4 * size_t{ShapeHeight(shape)}, ShapeKeySize(shape));
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
  // Start with room for ~1/3 of the destination, the usual share of keys.
  ReserveStaging(std::clamp<uint64_t>(capacity / 3, kHeadNodeSize, uint64_t{4} << 20));
  Restart();
}

bool Builder::Restart() {
  if (placed_values_) return false;
  entries_ = 0;
  value_bytes_ = 0;
  last_offset_ = 0;
  samples_.clear();
  key_hashes_.clear();
  std::fill(std::begin(last_at_level_), std::end(last_at_level_), 0);
  max_height_ = 1;
  finished_ = false;
  // The head node: a sentinel entry of full height, empty key, whose links
  // start every level of the skiplist.
  std::memset(keyset_, 0, kHeadNodeSize);
  EncodeFixed32(StagingAt(0) + ent::kShape, PackShape(0, kMaxHeight));
  keyset_bytes_ = kHeadNodeSize;
  return true;
}

Builder::Builder(const BlockBuilderOptions& options, char* dest, size_t capacity, uint64_t placed_value_bytes)
    : options_(options),
      key_heads_(options.comparator == BytewiseComparator()),
      dest_(dest),
      capacity_(capacity),
      value_bytes_(placed_value_bytes),
      placed_values_(true),
      keyset_(dest + kHeaderSize + AlignUp8(placed_value_bytes)) {
  assert(reinterpret_cast<uintptr_t>(dest) % 8 == 0);
  keyset_bytes_ = kHeadNodeSize;
}

std::unique_ptr<Builder> Builder::WithPlacedValues(const BlockBuilderOptions& options, char* dest, size_t capacity,
                                                   uint64_t placed_value_bytes) {
  std::unique_ptr<Builder> builder(new Builder(options, dest, capacity, placed_value_bytes));
  // The head node, in place when it fits (else every Add is NoSpace).
  if (kHeaderSize + AlignUp8(placed_value_bytes) + kHeadNodeSize <= capacity) {
    std::memset(builder->keyset_, 0, kHeadNodeSize);
    EncodeFixed32(builder->StagingAt(0) + ent::kShape, PackShape(0, kMaxHeight));
  }
  return builder;
}

void Builder::GrowStaging(uint64_t bytes) {
  const uint64_t capacity = std::max<uint64_t>(AlignUp8(bytes), 2 * staging_capacity_);
  std::unique_ptr<uint64_t[]> grown(new uint64_t[capacity / 8]);  // uninitialised
  if (keyset_bytes_ > 0) std::memcpy(grown.get(), staging_.get(), keyset_bytes_);
  staging_ = std::move(grown);
  staging_capacity_ = capacity;
  keyset_ = reinterpret_cast<char*>(staging_.get());
}

Builder::Layout Builder::ComputeLayout(uint64_t entries, uint64_t value_bytes, uint64_t keyset_bytes,
                                       bool key_heads, int bloom_bits_per_key) {
  Layout layout;
  const uint64_t samples = SampleCount(entries);
  layout.keyset_offset = kHeaderSize + AlignUp8(value_bytes);
  layout.samples_offset = layout.keyset_offset + keyset_bytes;
  uint64_t end = layout.samples_offset + AlignUp8(4 * samples);
  layout.sample_heads_offset = 0;
  if (key_heads) {
    layout.sample_heads_offset = end;
    end += 8 * samples;
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
  assert(entries_ > 0);
  return TrustedEntryKey(StagingAt(last_offset_));
}

size_t Builder::CurrentSize() const {
  return ComputeLayout(entries_, value_bytes_, keyset_bytes_, key_heads_, options_.bloom_bits_per_key).block_size;
}

Status Builder::AddWithHash(const Slice& user_key, SequenceNumber sequence, ValueType type, const Slice& value,
                            uint32_t key_hash) {
  assert(options_.bloom_bits_per_key == 0 || key_hash == bloom::KeyHash(user_key));
  if (placed_values_) return Status::InvalidArgument("KeySet builder with placed values: use AddPlaced");
  if (value.size() > kMaxValueSize) {
    return Status::InvalidArgument("value too large",
                                   std::to_string(value.size()) + " bytes, limit " +
                                       std::to_string(kMaxValueSize));
  }
  const uint64_t value_offset = value_bytes_;
  Status s = AddEntry(user_key, sequence, type, value_offset, value.size(), value_offset + value.size(), key_hash);
  if (s.ok()) {
    if (!value.empty()) {
      TimePart(WorkPart::kCopy, [&] { CopyShort(dest_ + kHeaderSize + value_offset, value.data(), value.size()); });
    }
    value_bytes_ += value.size();
  }
  return s;
}

Status Builder::AddPlaced(const Slice& user_key, SequenceNumber sequence, ValueType type, uint64_t value_offset,
                          uint64_t value_size, uint32_t key_hash) {
  assert(options_.bloom_bits_per_key == 0 || key_hash == bloom::KeyHash(user_key));
  if (!placed_values_) return Status::InvalidArgument("KeySet builder without placed values: use Add");
  if (value_size > kMaxValueSize || value_offset > value_bytes_ || value_size > value_bytes_ - value_offset) {
    return Status::InvalidArgument("value outside the placed value buffer",
                                   std::to_string(value_offset) + "+" + std::to_string(value_size) + " of " +
                                       std::to_string(value_bytes_) + " bytes");
  }
  return AddEntry(user_key, sequence, type, value_offset, value_size, value_bytes_, key_hash);
}

inline void Builder::LinkAsLast(uint64_t ordinal, uint64_t offset, uint32_t height) {
  char* entry = StagingAt(offset);
  for (uint32_t level = 0; level < height; ++level) {
    const uint64_t previous = last_at_level_[level];
    EncodeFixed32(StagingAt(previous) + ent::kNext + 4 * size_t{level}, static_cast<uint32_t>(offset - previous));
    EncodeFixed32(entry + ent::kNext + 4 * size_t{level}, 0);
    last_at_level_[level] = offset;
  }
  max_height_ = std::max(max_height_, height);
  if (ordinal % kSampleStride == 0) samples_.push_back(static_cast<uint32_t>(offset));
  last_offset_ = offset;
}

inline uint64_t Builder::WriteEntry(uint64_t ordinal, uint64_t offset, const Slice& key, uint64_t tag, uint64_t index) {
  const uint32_t height = BulkHeight(ordinal);
  const size_t key_size = key.size();
  const uint64_t entry_size = EntrySize(height, key_size);
#ifndef NDEBUG
  if (ordinal > 0) {
    const char* last = StagingAt(last_offset_);
    assert(CompareInternal(options_.comparator, TrustedEntryKey(last), DecodeFixed64(last), key, tag) < 0);
  }
#endif
  char* entry = StagingAt(offset);
  EncodeFixed64(entry + entry_size - 8, 0);  // the key's padding
  EncodeFixed64(entry + ent::kTag, tag);
  EncodeFixed64(entry + ent::kIndex, index);
  EncodeFixed32(entry + ent::kShape, PackShape(static_cast<uint32_t>(key_size), height));
  LinkAsLast(ordinal, offset, height);
  char* key_bytes = entry + kEntryHeaderSize + 4 * size_t{height};
  TimePart(WorkPart::kCopy, [&] {
    if (key_size >= 8 && key_size <= 16) {
      // Two overlapping words: no call for the usual short key.
      std::memcpy(key_bytes, key.data(), 8);
      std::memcpy(key_bytes + key_size - 8, key.data() + key_size - 8, 8);
    } else if (key_size > 0) {
      std::memcpy(key_bytes, key.data(), key_size);
    }
  });
  return entry_size;
}

Status Builder::AddPlacedRun(const PlacedEntry* entries, size_t n) {
  if (!placed_values_) return Status::InvalidArgument("KeySet builder without placed values: use Add");
  // The checks AddPlaced makes, for the whole run, and its size. Anything
  // amiss: entry by entry, which stops with the right error at the right
  // entry.
  auto one_by_one = [&] {
    for (size_t k = 0; k < n; ++k) {
      const PlacedEntry& e = entries[k];
      Status s = AddPlaced(e.key, TagSequence(e.tag), TagType(e.tag), e.value_offset, e.value_size, e.key_hash);
      if (!s.ok()) return s;
    }
    return Status::OK();
  };
  uint64_t run_bytes = 0;
  for (size_t k = 0; k < n; ++k) {
    const PlacedEntry& e = entries[k];
    if (e.key.size() > kMaxKeySize || TagSequence(e.tag) > kMaxSequenceNumber || e.value_size > kMaxValueSize ||
        e.value_offset > value_bytes_ || e.value_size > value_bytes_ - e.value_offset) {
      return one_by_one();
    }
    run_bytes += EntrySize(BulkHeight(entries_ + k), e.key.size());
  }
  const uint64_t new_keyset_bytes = keyset_bytes_ + run_bytes;
  if (new_keyset_bytes > kMaxSectionSize ||
      ComputeLayout(entries_ + n, value_bytes_, new_keyset_bytes, key_heads_, options_.bloom_bits_per_key)
              .block_size > capacity_) {
    return one_by_one();
  }
  // The entries, back to back.
  uint64_t offset = keyset_bytes_;
  for (size_t k = 0; k < n; ++k) {
    const PlacedEntry& e = entries[k];
    offset += WriteEntry(entries_ + k, offset, e.key, e.tag,
                         PackIndex(static_cast<uint32_t>(e.value_offset), e.value_size));
  }
  if (options_.bloom_bits_per_key > 0) {
    for (size_t k = 0; k < n; ++k) key_hashes_.push_back(entries[k].key_hash);
  }
  entries_ += n;
  keyset_bytes_ = new_keyset_bytes;
  return Status::OK();
}

Status Builder::AddEntry(const Slice& user_key, SequenceNumber sequence, ValueType type, uint64_t value_offset,
                         uint64_t value_size, uint64_t value_bytes_after, uint32_t key_hash) {
  assert(!finished_);
  if (user_key.size() > kMaxKeySize) {
    return Status::InvalidArgument("key too large",
                                   std::to_string(user_key.size()) + " bytes, limit " +
                                       std::to_string(kMaxKeySize));
  }
  if (sequence > kMaxSequenceNumber) return Status::InvalidArgument("sequence number above 2^56-1");

  const uint64_t index = entries_;
  const uint32_t height = BulkHeight(index);
  const uint64_t entry_size = EntrySize(height, user_key.size());
  const uint64_t new_keyset_bytes = keyset_bytes_ + entry_size;
  if (value_bytes_after > kMaxSectionSize || new_keyset_bytes > kMaxSectionSize) {
    return Status::NoSpace("KeySet block full");
  }
  if (ComputeLayout(index + 1, value_bytes_after, new_keyset_bytes, key_heads_, options_.bloom_bits_per_key)
          .block_size > capacity_) {
    return Status::NoSpace("KeySet block full");
  }

  ReserveStaging(new_keyset_bytes);
  WriteEntry(index, keyset_bytes_, user_key, PackTag(sequence, type),
             PackIndex(static_cast<uint32_t>(value_offset), static_cast<uint32_t>(value_size)));
  if (options_.bloom_bits_per_key > 0) key_hashes_.push_back(key_hash);
  ++entries_;
  keyset_bytes_ = new_keyset_bytes;
  return Status::OK();
}

void RunEntry(const EntryRun& run, uint32_t index, Slice* key, uint64_t* tag) {
  assert(index < run.count);
  const char* e = index + 1 == run.count ? run.last : run.entries;
  for (uint32_t i = 0; index + 1 < run.count && i < index; ++i) {
    const uint32_t shape = DecodeFixed32(e + ent::kShape);
    e += EntrySize(ShapeHeight(shape), ShapeKeySize(shape));
  }
  const uint32_t shape = DecodeFixed32(e + ent::kShape);
  *key = Slice(e + kEntryHeaderSize + 4 * size_t{ShapeHeight(shape)}, ShapeKeySize(shape));
  *tag = DecodeFixed64(e + ent::kTag);
}

void DropFront(EntryRun* run, uint32_t n) {
  assert(n <= run->count);
  // The whole run: its totals, no walk.
  uint64_t entry_bytes = n == run->count ? run->entry_bytes : 0;
  uint64_t value_bytes = n == run->count ? run->value_bytes : 0;
  const char* e = run->entries;
  for (uint32_t i = 0; n < run->count && i < n; ++i) {
    const uint32_t shape = DecodeFixed32(e + ent::kShape);
    const uint64_t size = EntrySize(ShapeHeight(shape), ShapeKeySize(shape));
    value_bytes += DecodeFixed64(e + ent::kIndex) >> 32;
    entry_bytes += size;
    e += size;
  }
  run->entries += entry_bytes;
  run->entry_bytes -= entry_bytes;
  run->values += value_bytes;
  run->value_bytes -= value_bytes;
  run->first_value_offset += static_cast<uint32_t>(value_bytes);
  run->count -= n;
  if (run->count == 0) run->last = nullptr;
}

uint32_t Builder::AppendRun(const EntryRun& run, uint64_t size_limit) {
  assert(!finished_);
  if (placed_values_) return 0;
  const uint64_t limit = std::min<uint64_t>(size_limit, capacity_);
  return run.count == 1 ? (AppendOne(run, limit) ? 1 : 0) : AppendMany(run, limit);
}

uint32_t Builder::AppendMany(const EntryRun& run, uint64_t limit) {
  // How many entries fit: all of them when a cheap bound says so, else
  // counted entry by entry with the exact layout (once per output block).
  uint32_t take = run.count;
  uint64_t take_entry_bytes = run.entry_bytes;
  uint64_t take_value_bytes = run.value_bytes;
  const uint64_t bound = CurrentSize() + run.entry_bytes + run.value_bytes + 2 * uint64_t{run.count} +
                         (options_.bloom_bits_per_key + 7) / 8 * uint64_t{run.count} + 192;
  if (bound > limit || keyset_bytes_ + run.entry_bytes > kMaxSectionSize ||
      value_bytes_ + run.value_bytes > kMaxSectionSize) {
    take = 0;
    take_entry_bytes = 0;
    take_value_bytes = 0;
    const char* e = run.entries;
    while (take < run.count) {
      const uint32_t shape = DecodeFixed32(e + ent::kShape);
      const uint64_t size = EntrySize(ShapeHeight(shape), ShapeKeySize(shape));
      const uint64_t value_size = DecodeFixed64(e + ent::kIndex) >> 32;
      const uint64_t keyset = keyset_bytes_ + take_entry_bytes + size;
      const uint64_t values = value_bytes_ + take_value_bytes + value_size;
      if (keyset > kMaxSectionSize || values > kMaxSectionSize ||
          ComputeLayout(entries_ + take + 1, values, keyset, key_heads_, options_.bloom_bits_per_key).block_size >
              limit) {
        break;
      }
      take_entry_bytes += size;
      take_value_bytes += value_size;
      e += size;
      ++take;
    }
    if (take == 0) return 0;
  }

  // The bytes, whole.
  const uint64_t start = keyset_bytes_;
  ReserveStaging(start + take_entry_bytes);
  TimePart(WorkPart::kCopy, [&] {
    CopyShort(StagingAt(start), run.entries, take_entry_bytes);
    CopyShort(dest_ + kHeaderSize + value_bytes_, run.values, take_value_bytes);
  });

  // The per-entry patch: value offsets rebased, links entering the run set
  // (the first entry of each level), samples recorded. Links inside the run
  // are distances and stay right.
  const int64_t rebase = static_cast<int64_t>(value_bytes_) - static_cast<int64_t>(run.first_value_offset);
  uint32_t run_height = 1;  // the levels the run reaches
  uint64_t offset = start;
  for (uint32_t k = 0; k < take; ++k) {
    char* e = StagingAt(offset);
    // Fields are read from the source, not from the copy just written: a
    // load from bytes a wide store has not finished stalls.
    const char* source = run.entries + (offset - start);
    const uint32_t shape = DecodeFixed32(source + ent::kShape);
    const uint32_t height = ShapeHeight(shape);
    const uint64_t index = DecodeFixed64(source + ent::kIndex);
    EncodeFixed64(e + ent::kIndex, PackIndex(static_cast<uint32_t>(static_cast<int64_t>(index & 0xffffffff) + rebase),
                                             static_cast<uint32_t>(index >> 32)));
    for (uint32_t level = 0; level < height; ++level) {
      const uint64_t previous = last_at_level_[level];
      if (previous < start) {
        EncodeFixed32(StagingAt(previous) + ent::kNext + 4 * size_t{level}, static_cast<uint32_t>(offset - previous));
      }
      last_at_level_[level] = offset;
    }
    run_height = std::max(run_height, height);
    if ((entries_ + k) % kSampleStride == 0) samples_.push_back(static_cast<uint32_t>(offset));
    last_offset_ = offset;
    offset += EntrySize(height, ShapeKeySize(shape));
  }
  // The keys' filter hashes, from the source's keys.
  if (options_.bloom_bits_per_key > 0) {
    TimePart(WorkPart::kFilterChecksum, [&] {
      const char* e = run.entries;
      for (uint32_t k = 0; k < take; ++k) {
        const uint32_t shape = DecodeFixed32(e + ent::kShape);
        const uint32_t height = ShapeHeight(shape);
        key_hashes_.push_back(bloom::KeyHash(Slice(e + kEntryHeaderSize + 4 * size_t{height}, ShapeKeySize(shape))));
        e += EntrySize(height, ShapeKeySize(shape));
      }
    });
  }
  // Links that left the run (or the part taken) end here until the next
  // entry of their level arrives.
  for (uint32_t level = 0; level < run_height; ++level) {
    if (last_at_level_[level] >= start) EncodeFixed32(StagingAt(last_at_level_[level]) + ent::kNext + 4 * size_t{level}, 0);
  }
  max_height_ = std::max(max_height_, run_height);
  entries_ += take;
  keyset_bytes_ += take_entry_bytes;
  value_bytes_ += take_value_bytes;
  return take;
}

// AppendRun's work for a run of one entry -- most runs where inputs
// interleave key by key -- without its loops and bulk copies.
bool Builder::AppendOne(const EntryRun& run, uint64_t limit) {
  const uint64_t entry_size = run.entry_bytes;
  const uint64_t value_size = run.value_bytes;
  const uint64_t keyset = keyset_bytes_ + entry_size;
  const uint64_t values = value_bytes_ + value_size;
  if (keyset > kMaxSectionSize || values > kMaxSectionSize ||
      ComputeLayout(entries_ + 1, values, keyset, key_heads_, options_.bloom_bits_per_key).block_size > limit) {
    return false;
  }
  const uint64_t offset = keyset_bytes_;
  ReserveStaging(keyset);
  char* e = StagingAt(offset);
  TimePart(WorkPart::kCopy, [&] {
    CopyShort(e, run.entries, entry_size);
    CopyShort(dest_ + kHeaderSize + value_bytes_, run.values, value_size);
  });
  // Its value now starts the appended part of the value buffer.
  const uint32_t shape = DecodeFixed32(run.entries + ent::kShape);
  const uint32_t height = ShapeHeight(shape);
  EncodeFixed64(e + ent::kIndex, PackIndex(static_cast<uint32_t>(value_bytes_), static_cast<uint32_t>(value_size)));
  LinkAsLast(entries_, offset, height);
  if (options_.bloom_bits_per_key > 0) {
    TimePart(WorkPart::kFilterChecksum, [&] {
      key_hashes_.push_back(
          bloom::KeyHash(Slice(run.entries + kEntryHeaderSize + 4 * size_t{height}, ShapeKeySize(shape))));
    });
  }
  ++entries_;
  keyset_bytes_ = keyset;
  value_bytes_ = values;
  return true;
}

Status Builder::Finish(size_t* block_size) {
  assert(!finished_);
  const uint64_t n = entries_;
  const uint64_t m = samples_.size();
  const Layout layout = ComputeLayout(n, value_bytes_, keyset_bytes_, key_heads_, options_.bloom_bits_per_key);
  if (layout.block_size > capacity_) return Status::NoSpace("KeySet block does not fit");
  finished_ = true;
  const char* staging = StagingAt(0);

  // The value buffer's padding, then the key set (every link was terminated
  // when its entry was added).
  TimePart(WorkPart::kCopy, [&] {
    std::memset(dest_ + kHeaderSize + value_bytes_, 0, layout.keyset_offset - kHeaderSize - value_bytes_);
    if (!placed_values_) std::memcpy(dest_ + layout.keyset_offset, staging, keyset_bytes_);
  });

  // Samples (zero-padded to 8), their heads, then the Bloom filter.
  char* samples = dest_ + layout.samples_offset;
  if (m > 0) std::memcpy(samples, samples_.data(), 4 * m);
  std::memset(samples + 4 * m, 0, AlignUp8(4 * m) - 4 * m);
  uint32_t skip = 0;
  if (key_heads_ && n > 0) {
    skip = static_cast<uint32_t>(
        CommonPrefixLength(TrustedEntryKey(staging + samples_.front()), TrustedEntryKey(staging + last_offset_)));
    char* heads = dest_ + layout.sample_heads_offset;
    for (uint64_t j = 0; j < m; ++j) EncodeFixed64(heads + 8 * j, KeyHead(TrustedEntryKey(staging + samples_[j]), skip));
  }
  if (layout.bloom.lines > 0) {
    TimePart(WorkPart::kFilterChecksum, [&] {
      const uint64_t filter_start = layout.sample_heads_offset != 0 ? layout.sample_heads_offset + 8 * m
                                                                    : layout.samples_offset + AlignUp8(4 * m);
      std::memset(dest_ + filter_start, 0, layout.block_size - filter_start);
      char* bloom_lines = dest_ + layout.bloom_offset;
      bloom::AddHashes(bloom_lines, layout.bloom, key_hashes_.data(), key_hashes_.size());
    });
  }

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
  EncodeFixed64(dest_ + hdr::kEntryOffsetsOffset, layout.samples_offset);
  EncodeFixed64(dest_ + hdr::kKeyHeadsOffset, layout.sample_heads_offset);
  EncodeFixed64(dest_ + hdr::kBloomOffset, layout.bloom_offset);
  EncodeFixed32(dest_ + hdr::kBloomLines, layout.bloom.lines);
  EncodeFixed32(dest_ + hdr::kBloomProbes, layout.bloom.probes);
  EncodeFixed32(dest_ + hdr::kKeyHeadSkip, skip);
  EncodeFixed32(dest_ + hdr::kMaxHeightUsed, max_height_);
  EncodeFixed32(dest_ + hdr::kComparatorId, ComparatorId(options_.comparator));
  TimePart(WorkPart::kFilterChecksum,
           [&] { EncodeFixed32(dest_ + hdr::kChecksum, BlockChecksum(dest_, layout.block_size)); });
  *block_size = layout.block_size;
  return Status::OK();
}

}  // namespace jigsaw::keyset::v2
