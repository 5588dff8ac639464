// The version 2 reader, its iterator and EntryCursor (format/keyset_v2.h).
#include "format/keyset_v2.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstring>
#include <memory>
#include <string>

#include "util/checksum.h"
#include "util/coding.h"
#include "util/index_memory.h"
#include "util/key_prefix.h"

namespace jigsaw::keyset::v2 {

// ---------------------------------------------------------------------------
// Reader

class Reader final : public BlockReader {
 public:
  static Status Open(const Slice& contents, const BlockReadOptions& options, std::unique_ptr<BlockReader>* reader);
  // A reader over a key part (OpenKeyPartReader), values read as zeros
  // (kNoValues): its Get and its iterators' keys are the block's.
  static Status OpenKeyPart(const Slice& key_part, uint64_t block_size, const Comparator* comparator,
                            std::unique_ptr<BlockReader>* reader);

  BlockFormat format() const override { return BlockFormat::kKeySet; }
  uint64_t num_entries() const override { return s_.count; }
  Status Get(const Slice& user_key, SequenceNumber snapshot, BlockLookup* result) const override;
  void PrefetchForGet(uint64_t key_hash) const override {
    if (const HashIndex* index = hash_index_.load(std::memory_order_acquire)) {
      __builtin_prefetch(&index->slots[index->HomeSlot(key_hash)]);
    } else if (bloom_ != nullptr) {
      __builtin_prefetch(bloom::LineFor(bloom_, bloom_geometry_, static_cast<uint32_t>(key_hash)));
    }
  }
  size_t MemoryUsage() const override {
    const HashIndex* index = hash_index_.load(std::memory_order_acquire);
    return index != nullptr ? sizeof(uint64_t) * size_t{index->slot_count} : 0;
  }
  double ApproximatePosition(const Slice& user_key) const override {
    uint32_t ordinal = 0;
    EntryView entry;
    if (s_.count == 0 || !LowerBound(user_key, PackTag(kMaxSequenceNumber, ValueType::kValue), &ordinal, &entry)) {
      return 0.5;
    }
    return static_cast<double>(ordinal) / s_.count;
  }
  std::unique_ptr<InternalIterator> NewIterator() const override;
  Status Validate() const override;

  const Sections& sections() const { return s_; }
  const Comparator* comparator() const { return comparator_; }
  bool key_part() const { return key_part_; }

  // The first entry whose internal key is >= (user_key, tag): its ordinal
  // (count if none) and, when there is one, the entry in *entry. False if a
  // malformed entry was met.
  bool LowerBound(const Slice& user_key, uint64_t tag, uint32_t* ordinal, EntryView* entry) const {
    uint32_t sample = 0;
    return FindSample(user_key, tag, &sample) && WalkGroup(sample, user_key, tag, ordinal, entry);
  }

 private:
  Reader() = default;
  // LowerBound in two steps. FindSample: the first sample whose entry is >=
  // the target (sample_count() if none; kPastEveryKey when the target sorts
  // after every key), from the sample heads, comparing keys only among
  // samples of an equal head (all samples without heads). WalkGroup: the
  // answer, in the group before that sample or at the sample itself. Both
  // are false on a malformed entry.
  static constexpr uint32_t kPastEveryKey = 0xffffffff;
  bool FindSample(const Slice& user_key, uint64_t tag, uint32_t* sample) const;
  bool WalkGroup(uint32_t sample, const Slice& user_key, uint64_t tag, uint32_t* ordinal, EntryView* entry) const;
  // First sample whose entry is >= (user_key, tag), searching samples
  // [lo, hi) with full comparisons. False on a malformed entry.
  bool FirstSampleAtOrAfter(uint32_t lo, uint32_t hi, const Slice& user_key, uint64_t tag, uint32_t* result) const;
  uint32_t sample_count() const { return static_cast<uint32_t>(SampleCount(s_.count)); }

  const Comparator* comparator_ = nullptr;
  Sections s_;
  const char* sample_heads_ = nullptr;  // nullptr: no key heads
  uint32_t key_head_skip_ = 0;
  // The first key_head_skip_ bytes shared by every key: a copy in the
  // reader when short (the block's first key is one more cache line a
  // lookup would touch), else in the block.
  const char* common_prefix_ = nullptr;
  char common_prefix_copy_[24] = {};
  const char* bloom_ = nullptr;          // nullptr: no filter
  bloom::Geometry bloom_geometry_;
  uint32_t max_height_ = 1;

  // The DRAM hash index (BlockReadOptions::hash_index): open addressing
  // with linear probing; a slot is 0 (empty) or, for one key, its
  // fingerprint (the top 16 bits of its XXH3-64 hash, never 0), the key-set
  // offset of its first (newest) entry in 8-byte units, and that entry's
  // value offset -- so a lookup fetches the value while it loads the entry
  // instead of after. 4/3 slots per entry (a key with versions takes one
  // slot): at most 3/4 of them are used. Blocks whose key set or value
  // buffer the fields cannot address get no index.
  struct HashIndex {
    static constexpr int kEntryBits = 23;  // key sets up to 64 MiB
    static constexpr int kValueBits = 25;  // value buffers up to 32 MiB
    static constexpr uint64_t kValueMask = (uint64_t{1} << kValueBits) - 1;
    static constexpr uint64_t kEntryMask = (uint64_t{1} << kEntryBits) - 1;
    static uint64_t Slot(uint32_t fingerprint, uint64_t entry_offset, uint64_t value_offset) {
      return uint64_t{fingerprint} << (kEntryBits + kValueBits) | (entry_offset / 8) << kValueBits | value_offset;
    }
    static uint32_t FingerprintOf(uint64_t slot) { return static_cast<uint32_t>(slot >> (kEntryBits + kValueBits)); }
    static uint64_t EntryOffsetOf(uint64_t slot) { return (slot >> kValueBits & kEntryMask) * 8; }
    static uint64_t ValueOffsetOf(uint64_t slot) { return slot & kValueMask; }

    IndexWords slots;  // on huge pages where the kernel gives them: a probe takes no TLB miss
    uint32_t slot_count = 0;
    uint32_t HomeSlot(uint64_t hash) const {
      return static_cast<uint32_t>((uint64_t{static_cast<uint32_t>(hash)} * slot_count) >> 32);
    }
  };
  // Built by the first Get (so that blocks a compaction replaces before
  // anyone reads them never pay for one), the one that takes
  // hash_index_wanted_; Gets that come while it is being built search the
  // block.
  mutable std::atomic<bool> hash_index_wanted_{false};
  mutable std::unique_ptr<HashIndex> hash_index_storage_;  // written by the builder only
  mutable std::atomic<const HashIndex*> hash_index_{nullptr};
  // Builds the index and publishes it; no index if an entry is malformed
  // (the lookups without it then report it) or memory ran out.
  // Over a key part (OpenKeyPart): no values to iterate or validate.
  bool key_part_ = false;
  // *result as `entry`, the version a lookup found, tells it.
  void SetLookup(const EntryView& entry, BlockLookup* result) const {
    result->type = TagType(entry.tag);
    result->sequence = TagSequence(entry.tag);
    const bool value = result->type == ValueType::kValue;
    result->value = value ? entry.value : Slice();
    result->value_offset = value ? static_cast<uint32_t>(entry.value.data() - s_.values) : 0;
  }
  void BuildHashIndex() const;
  // The head node and, with key heads, the common prefix (which it keeps):
  // the checks every open makes beyond the header.
  Status CheckFirstEntries(const HeaderLayout& l);
  // Get through the index.
  Status HashGet(const HashIndex& index, const Slice& user_key, SequenceNumber snapshot, BlockLookup* result) const;
  static uint32_t Fingerprint(uint64_t hash) { return static_cast<uint32_t>(hash >> 48) | 1; }
};

Status ParseHeader(const char* base, uint64_t size, const Comparator* comparator, HeaderLayout* layout) {
  if (size < kHeaderSize) {
    return Status::Corruption("KeySet block truncated",
                              std::to_string(size) + " bytes, header needs " + std::to_string(kHeaderSize));
  }
  if (DecodeFixed64(base + hdr::kMagic) != kMagic) return Status::Corruption("not a KeySet block (bad magic)");
  const uint32_t version = DecodeFixed32(base + hdr::kVersion);
  if (version > kFormatVersion) {
    return Status::NotSupported("KeySet block format version " + std::to_string(version) +
                                " is newer than the supported version " + std::to_string(kFormatVersion));
  }
  if (version != kFormatVersion) {
    return Status::Corruption("KeySet block has format version " + std::to_string(version));
  }
  if (DecodeFixed32(base + hdr::kHeaderSize) != kHeaderSize) {
    return Status::Corruption("KeySet block header size is not 128");
  }
  const uint64_t block_size = DecodeFixed64(base + hdr::kBlockSize);
  if (block_size != size) {
    return Status::Corruption("KeySet block size mismatch", "header says " + std::to_string(block_size) +
                                                                 ", buffer has " + std::to_string(size));
  }
  for (size_t i = hdr::kReserved; i < hdr::kChecksum; ++i) {
    if (base[i] != 0) return Status::Corruption("KeySet block header has non-zero reserved bytes");
  }
  const uint32_t flags = DecodeFixed32(base + hdr::kFlags);
  if ((flags & ~kKnownFlags) != 0) return Status::Corruption("KeySet block has unknown flags");
  if (DecodeFixed32(base + hdr::kComparatorId) != ComparatorId(comparator)) {
    return Status::InvalidArgument("KeySet block was built with a different comparator than", comparator->Name());
  }
  HeaderLayout l;
  l.key_heads = (flags & kFlagKeyHeads) != 0;
  if (l.key_heads && comparator != BytewiseComparator()) {
    return Status::InvalidArgument("KeySet block has key heads but the comparator is not bytewise");
  }
  const uint64_t count = DecodeFixed32(base + hdr::kEntryCount);
  l.value_buffer_size = DecodeFixed64(base + hdr::kValueBufferSize);
  l.keyset_offset = DecodeFixed64(base + hdr::kKeySetOffset);
  l.keyset_size = DecodeFixed64(base + hdr::kKeySetSize);
  l.samples_offset = DecodeFixed64(base + hdr::kEntryOffsetsOffset);
  l.sample_heads_offset = DecodeFixed64(base + hdr::kKeyHeadsOffset);
  l.bloom_offset = DecodeFixed64(base + hdr::kBloomOffset);
  l.bloom = bloom::Geometry{DecodeFixed32(base + hdr::kBloomLines), DecodeFixed32(base + hdr::kBloomProbes)};
  l.key_head_skip = DecodeFixed32(base + hdr::kKeyHeadSkip);
  l.max_height = DecodeFixed32(base + hdr::kMaxHeightUsed);
  const uint64_t samples = SampleCount(count);

  auto bad = [](const char* what) { return Status::Corruption("KeySet block header", what); };
  if (l.value_buffer_size > kMaxSectionSize) return bad("value buffer too large");
  if (l.keyset_offset != kHeaderSize + AlignUp8(l.value_buffer_size)) return bad("key set offset");
  if (l.keyset_size > kMaxSectionSize || l.keyset_size < kHeadNodeSize || l.keyset_size % 8 != 0) {
    return bad("key set size");
  }
  if (count * kMinEntrySize > l.keyset_size - kHeadNodeSize) return bad("entry count exceeds key set");
  if (l.samples_offset != l.keyset_offset + l.keyset_size) return bad("samples offset");
  uint64_t end = l.samples_offset + AlignUp8(4 * samples);
  if (l.key_heads) {
    if (l.sample_heads_offset != end) return bad("sample heads offset");
    end += 8 * samples;
  } else if (l.sample_heads_offset != 0 || l.key_head_skip != 0) {
    return bad("key heads fields set without key heads");
  }
  if (l.bloom.lines > 0) {
    if (l.bloom.probes != bloom::kProbes) return bad("bloom probes");
    if (l.bloom_offset != AlignUp64(end)) return bad("bloom offset");
    end = l.bloom_offset + uint64_t{l.bloom.lines} * bloom::kLineBytes;
  } else if (l.bloom.probes != 0 || l.bloom_offset != 0) {
    return bad("bloom fields set without a filter");
  }
  if (end != block_size) return bad("sections do not add up to the block size");
  if (l.key_head_skip > kMaxKeySize) return bad("key head skip");
  if (l.max_height == 0 || l.max_height > kMaxHeight) return bad("max height");
  l.count = static_cast<uint32_t>(count);
  *layout = l;
  return Status::OK();
}

Status EntryCursor::Reset(const Slice& block, const Comparator* comparator) {
  ordinal_ = 0;
  ahead_ = 0;
  values_scattered_ = false;
  s_ = Sections();
  status_ = Status::OK();
  if (keyset::VersionOf(block) != kFormatVersion) {
    return Status::NotSupported("not a KeySet version 2 block", std::to_string(keyset::VersionOf(block)));
  }
  if (reinterpret_cast<uintptr_t>(block.data()) % 8 != 0) {
    return Status::InvalidArgument("KeySet block buffer is not 8-byte aligned");
  }
  HeaderLayout l;
  Status s = ParseHeader(block.data(), block.size(), comparator, &l);
  if (!s.ok()) return s;
  s_.values = block.data() + kHeaderSize;
  s_.value_buffer_size = l.value_buffer_size;
  s_.keyset = block.data() + l.keyset_offset;
  s_.keyset_size = l.keyset_size;
  s_.samples = block.data() + l.samples_offset;
  s_.count = l.count;
  if (s_.count > 0 && !s_.LoadAt(s_.SampleOffset(0), &entry_)) {
    s_.count = 0;
    return status_ = Status::Corruption("KeySet block has a malformed first entry");
  }
  // Values out of key order (a flushed block): fetch them ahead.
  EntryView at = entry_;
  for (int i = 1; i < kOrderProbe && i < static_cast<int>(s_.count); ++i) {
    EntryView next;
    if (!s_.LoadNext(at, &next)) break;  // Next reports it when it gets there
    if (next.value.data() != at.value.data() + at.value.size()) {
      values_scattered_ = true;
      break;
    }
    at = next;
  }
  if (values_scattered_) {
    ahead_ = entry_.offset;
    __builtin_prefetch(entry_.value.data());
    for (int i = 0; i < kValueAhead; ++i) PrefetchValueAhead();
  }
  return Status::OK();
}

namespace {
// What a key part's entries point their values at: zeros, as long as any
// value region a KeyPartReader accepts.
alignas(64) const char kNoValues[kMaxKeyPartValueRegion] = {};
}  // namespace

Status Reader::OpenKeyPart(const Slice& key_part, uint64_t block_size, const Comparator* comparator,
                           std::unique_ptr<BlockReader>* result) {
  const char* base = key_part.data();
  if (reinterpret_cast<uintptr_t>(base) % 8 != 0) return Status::InvalidArgument("key part is not 8-byte aligned");
  if (key_part.size() < kHeaderSize) return Status::Corruption("KeySet key part truncated");
  HeaderLayout l;
  Status s = ParseHeader(base, block_size, comparator, &l);
  if (!s.ok()) return s;
  const uint64_t region = l.keyset_offset - kHeaderSize;
  if (region > kMaxKeyPartValueRegion) return Status::NotSupported("value region too large for a key part");
  if (key_part.size() != block_size - region) {
    return Status::Corruption("KeySet key part size disagrees with its header");
  }
  // Every section after the value buffer, moved back by the region's size.
  auto at = [&](uint64_t offset) { return base + (offset - region); };
  std::unique_ptr<Reader> r(new Reader());
  r->comparator_ = comparator;
  r->s_.values = kNoValues;
  r->s_.value_buffer_size = l.value_buffer_size;
  r->s_.keyset = at(l.keyset_offset);
  r->s_.keyset_size = l.keyset_size;
  r->s_.samples = at(l.samples_offset);
  r->s_.count = l.count;
  r->sample_heads_ = l.key_heads ? at(l.sample_heads_offset) : nullptr;
  r->key_head_skip_ = l.key_head_skip;
  r->bloom_ = l.bloom.lines > 0 ? at(l.bloom_offset) : nullptr;
  r->bloom_geometry_ = l.bloom;
  r->max_height_ = l.max_height;
  r->key_part_ = true;
  s = r->CheckFirstEntries(l);
  if (!s.ok()) return s;
  *result = std::move(r);
  return Status::OK();
}

Status Reader::Open(const Slice& contents, const BlockReadOptions& options, std::unique_ptr<BlockReader>* result) {
  const char* base = contents.data();
  const uint64_t size = contents.size();
  if (size >= kHeaderSize && reinterpret_cast<uintptr_t>(base) % 8 != 0) {
    return Status::InvalidArgument("KeySet block buffer is not 8-byte aligned");
  }
  HeaderLayout l;
  Status s = ParseHeader(base, size, options.comparator, &l);
  // A newer version may checksum differently; a malformed header is named
  // as such; but a block whose checksum does not match is damaged, not
  // "built with another comparator".
  if (s.IsNotSupported() || s.IsCorruption()) return s;
  if (options.verify_checksum && BlockChecksum(base, size) != DecodeFixed32(base + hdr::kChecksum)) {
    return Status::Corruption("KeySet block checksum mismatch");
  }
  if (!s.ok()) return s;
  std::unique_ptr<Reader> r(new Reader());
  r->comparator_ = options.comparator;
  r->s_.values = base + kHeaderSize;
  r->s_.value_buffer_size = l.value_buffer_size;
  r->s_.keyset = base + l.keyset_offset;
  r->s_.keyset_size = l.keyset_size;
  r->s_.samples = base + l.samples_offset;
  r->s_.count = l.count;
  r->sample_heads_ = l.key_heads ? base + l.sample_heads_offset : nullptr;
  r->key_head_skip_ = l.key_head_skip;
  r->bloom_ = l.bloom.lines > 0 ? base + l.bloom_offset : nullptr;
  r->bloom_geometry_ = l.bloom;
  r->max_height_ = l.max_height;
  s = r->CheckFirstEntries(l);
  if (!s.ok()) return s;
  r->hash_index_wanted_.store(options.hash_index && l.count > 0, std::memory_order_relaxed);
  *result = std::move(r);
  return Status::OK();
}

void Reader::BuildHashIndex() const {
  const uint64_t slot_count = uint64_t{s_.count} * 4 / 3 + 1;
  if (slot_count > 0xffffffff || s_.keyset_size > (HashIndex::kEntryMask + 1) * 8 ||
      s_.value_buffer_size > HashIndex::kValueMask + 1) {
    return;
  }
  auto index = std::make_unique<HashIndex>();
  index->slot_count = static_cast<uint32_t>(slot_count);
  index->slots = AllocateIndexWords(slot_count);
  EntryView entry;
  Slice previous_key;
  for (uint32_t i = 0; index->slots != nullptr && i < s_.count; ++i) {
    const bool loaded = i == 0 ? s_.LoadAt(s_.SampleOffset(0), &entry) : s_.LoadNext(EntryView(entry), &entry);
    if (!loaded || entry.offset % 8 != 0) {
      index->slots.reset();
      break;
    }
    if (i > 0 && comparator_->Compare(entry.key, previous_key) == 0) continue;  // an older version
    previous_key = entry.key;
    const uint64_t hash = XXH3_64bits(entry.key.data(), entry.key.size());
    uint32_t slot = index->HomeSlot(hash);
    while (index->slots[slot] != 0) slot = slot + 1 == index->slot_count ? 0 : slot + 1;
    index->slots[slot] = HashIndex::Slot(Fingerprint(hash), entry.offset,
                                         static_cast<uint64_t>(entry.value.data() - s_.values));
  }
  if (index->slots == nullptr) return;  // a malformed entry, or no memory: search
  hash_index_storage_ = std::move(index);
  hash_index_.store(hash_index_storage_.get(), std::memory_order_release);
}

Status Reader::HashGet(const HashIndex& index, const Slice& user_key, SequenceNumber snapshot,
                       BlockLookup* result) const {
  const uint64_t hash = XXH3_64bits(user_key.data(), user_key.size());
  const uint32_t fingerprint = Fingerprint(hash);
  EntryView entry;
  for (uint32_t slot = index.HomeSlot(hash);; slot = slot + 1 == index.slot_count ? 0 : slot + 1) {
    const uint64_t found = index.slots[slot];
    if (found == 0) return Status::NotFound(Slice());
    if (HashIndex::FingerprintOf(found) != fingerprint) continue;
    // The value's first lines come in while the entry does (both are
    // inside the block: the index was built from its entries).
    const char* value = s_.values + HashIndex::ValueOffsetOf(found);
    __builtin_prefetch(value);
    __builtin_prefetch(value + 64);
    if (!s_.LoadAt(HashIndex::EntryOffsetOf(found), &entry)) {
      return Status::Corruption("KeySet block has a malformed entry");
    }
    if (comparator_->Compare(entry.key, user_key) == 0) break;
  }
  // Versions of a key are adjacent, newest first: the first one the
  // snapshot sees.
  while (TagSequence(entry.tag) > snapshot) {
    EntryView next;
    if (entry.next == 0) return Status::NotFound(Slice());
    if (!s_.LoadNext(entry, &next)) return Status::Corruption("KeySet block has a malformed entry");
    if (comparator_->Compare(next.key, user_key) != 0) return Status::NotFound(Slice());
    entry = next;
  }
  SetLookup(entry, result);
  return Status::OK();
}

namespace {

// First index in heads[lo, hi) whose head is >= target (or > target when
// `strict`), with conditional moves instead of data-dependent branches.
// Each step also asks for the heads both possible next steps compare, so
// that the cache misses of a search over a cold block overlap instead of
// each waiting for the one before it.
inline uint32_t HeadBound(const char* heads, uint32_t lo, uint32_t hi, uint64_t target, bool strict) {
  uint32_t base = lo;
  uint32_t n = hi - lo;
  while (n > 1) {
    const uint32_t half = n / 2;
    if (n > 16) {  // below, the rest lies within two or three lines
      const uint32_t next_half = (n - half) / 2;
      __builtin_prefetch(heads + 8 * size_t{base + next_half - 1});
      __builtin_prefetch(heads + 8 * size_t{base + half + next_half - 1});
    }
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

bool Reader::FirstSampleAtOrAfter(uint32_t lo, uint32_t hi, const Slice& user_key, uint64_t tag,
                                  uint32_t* result) const {
  EntryView entry;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (!s_.LoadAt(s_.SampleOffset(mid), &entry)) return false;
    if (CompareInternal(comparator_, entry.key, entry.tag, user_key, tag) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  *result = lo;
  return true;
}

bool Reader::FindSample(const Slice& user_key, uint64_t tag, uint32_t* sample) const {
  const uint32_t m = sample_count();
  if (sample_heads_ == nullptr || s_.count == 0) return FirstSampleAtOrAfter(0, m, user_key, tag, sample);
  // Every key starts with the common prefix; a target outside it sorts
  // before or after the whole block.
  const size_t n = std::min<size_t>(user_key.size(), key_head_skip_);
  const int c = n == 0 ? 0 : std::memcmp(user_key.data(), common_prefix_, n);
  if (c > 0) {
    *sample = kPastEveryKey;
    return true;
  }
  if (c < 0 || user_key.size() < key_head_skip_) {
    *sample = 0;
    return true;
  }
  // Samples with a smaller head are before the target, with a larger head
  // after it; only equal heads need a full comparison.
  const uint64_t target_head = KeyHead(user_key, key_head_skip_);
  const uint32_t lo = HeadBound(sample_heads_, 0, m, target_head, /*strict=*/false);
  uint32_t hi = lo;
  if (hi < m && DecodeFixed64(sample_heads_ + 8 * size_t{hi}) == target_head) {
    hi = HeadBound(sample_heads_, lo + 1, m, target_head, /*strict=*/true);
  }
  return FirstSampleAtOrAfter(lo, hi, user_key, tag, sample);
}

bool Reader::WalkGroup(uint32_t sample, const Slice& user_key, uint64_t tag, uint32_t* ordinal,
                       EntryView* entry) const {
  const uint32_t count = s_.count;
  if (sample == kPastEveryKey) {
    *ordinal = count;
    return true;
  }
  if (sample == 0) {
    *ordinal = 0;
    return count == 0 || s_.LoadAt(s_.SampleOffset(0), entry);
  }
  // The answer is in the group after sample - 1 (at most 15 steps), or is
  // sample's own entry.
  uint32_t i = (sample - 1) * kSampleStride;
  const uint32_t group_end = std::min<uint32_t>(sample * kSampleStride, count);
  const uint64_t group_offset = s_.SampleOffset(sample - 1);
  // The group's entries lie between its sample and the next one: ask for all
  // their cache lines at once, so that the walk below waits for one miss
  // rather than one per entry. Only a hint: nothing here is trusted.
  if (sample < sample_count()) {
    const uint64_t group_limit = std::min<uint64_t>(s_.SampleOffset(sample), s_.keyset_size);
    const uint64_t first_line = group_offset & ~uint64_t{63};
    for (uint64_t line = first_line; line < group_limit && line - first_line < 4096; line += 64) {
      __builtin_prefetch(s_.keyset + line);
    }
  }
  if (!s_.LoadAt(group_offset, entry)) return false;
  const KeyTarget target(comparator_, user_key);  // by prefixes, inline, when bytewise
  for (++i; i < group_end; ++i) {
    EntryView next;
    if (!s_.LoadNext(*entry, &next)) return false;
    *entry = next;
    const int r = target.Compare(entry->key);
    if (r > 0 || (r == 0 && entry->tag <= tag)) {  // (key, tag) at or after the target: newer tags first
      *ordinal = i;
      return true;
    }
  }
  *ordinal = group_end;
  if (group_end == count) return true;
  EntryView next;
  if (!s_.LoadNext(*entry, &next)) return false;
  *entry = next;
  return true;
}

Status Reader::Get(const Slice& user_key, SequenceNumber snapshot, BlockLookup* result) const {
  if (const HashIndex* index = hash_index_.load(std::memory_order_acquire)) {
    return HashGet(*index, user_key, snapshot, result);
  }
  if (hash_index_wanted_.load(std::memory_order_relaxed) &&
      hash_index_wanted_.exchange(false, std::memory_order_relaxed)) {
    BuildHashIndex();
    if (const HashIndex* index = hash_index_.load(std::memory_order_acquire)) {
      return HashGet(*index, user_key, snapshot, result);
    }
  }
  // The Bloom filter first: most blocks a lookup probes lack the key, and
  // for them one cache line decides.
  if (bloom_ != nullptr) {
    const uint32_t hash = bloom::KeyHash(user_key);
    if (!bloom::LineMayContain(bloom::LineFor(bloom_, bloom_geometry_, hash), hash)) {
      return Status::NotFound(Slice());
    }
  }
  const uint64_t tag = PackTag(snapshot, ValueType::kValue);
  uint32_t sample = 0;
  const bool found_sample = FindSample(user_key, tag, &sample);
  uint32_t ordinal = 0;
  EntryView entry;
  if (!found_sample || !WalkGroup(sample, user_key, tag, &ordinal, &entry)) {
    return Status::Corruption("KeySet block has a malformed entry");
  }
  if (ordinal >= s_.count || comparator_->Compare(entry.key, user_key) != 0) return Status::NotFound(Slice());
  SetLookup(entry, result);
  return Status::OK();
}

Status Reader::Validate() const {
  if (key_part_) return Status::NotSupported("a KeySet key part holds no values");
  // Last node seen at each level (0 = the head node, which has every level).
  uint64_t previous_at_level[kMaxHeight] = {};
  uint64_t previous_end = kHeadNodeSize;
  uint64_t offset = LinkOf(s_.keyset, 0);  // the head node is at 0
  EntryView previous;
  EntryView entry;
  auto corruption = [](uint32_t index, const char* what) {
    return Status::Corruption("KeySet block entry " + std::to_string(index), what);
  };
  for (uint32_t i = 0; i < s_.count; ++i) {
    if (i > 0) offset = previous.next == 0 ? 0 : previous.offset + previous.next;
    if (offset == 0) return corruption(i, "is missing: the level-0 list ends early");
    if (!s_.LoadAt(offset, &entry)) return corruption(i, "lies outside the key set or is malformed");
    if (entry.offset % 8 != 0) return corruption(i, "is not 8-byte aligned");
    if (entry.offset < previous_end) return corruption(i, "overlaps the previous entry");
    previous_end = entry.offset + EntrySize(entry.height, entry.key.size());
    if (entry.height > max_height_) return corruption(i, "taller than the header's max height");
    if (i > 0 && CompareInternal(comparator_, previous.key, previous.tag, entry.key, entry.tag) >= 0) {
      return corruption(i, "out of order");
    }
    for (uint32_t level = 0; level < entry.height; ++level) {
      const uint64_t from = previous_at_level[level];
      if (from + LinkOf(s_.keyset + from, level) != entry.offset) return corruption(i, "skiplist link mismatch");
      previous_at_level[level] = entry.offset;
    }
    if (i % kSampleStride == 0) {
      if (s_.SampleOffset(i / kSampleStride) != entry.offset) return corruption(i, "sample offset mismatch");
      if (sample_heads_ != nullptr &&
          DecodeFixed64(sample_heads_ + 8 * size_t{i / kSampleStride}) != KeyHead(entry.key, key_head_skip_)) {
        return corruption(i, "sample head mismatch");
      }
    }
    if (sample_heads_ != nullptr &&
        (entry.key.size() < key_head_skip_ ||
         (key_head_skip_ > 0 && std::memcmp(entry.key.data(), common_prefix_, key_head_skip_) != 0))) {
      return corruption(i, "does not start with the block's common prefix");
    }
    if (bloom_ != nullptr && !bloom::MayContainHash(bloom_, bloom_geometry_, bloom::KeyHash(entry.key))) {
      return corruption(i, "missing from the Bloom filter");
    }
    previous = entry;
  }
  if (previous_end > s_.keyset_size) return Status::Corruption("KeySet block entries overrun the key set");
  for (uint32_t level = 0; level < kMaxHeight; ++level) {
    if (LinkOf(s_.keyset + previous_at_level[level], level) != 0) {
      return Status::Corruption("KeySet block skiplist level does not end after the last entry");
    }
  }
  return Status::OK();
}

// ---------------------------------------------------------------------------
// Iterator

namespace {

// Steps forward along the level-0 links; steps backward through the sample
// of the current entry's group, whose offsets it keeps while the group lasts
// (a reverse scan walks each group once).
class Iterator final : public InternalIterator {
 public:
  explicit Iterator(const Reader* reader)
      : reader_(reader),
        comparator_(reader->comparator()),
        s_(reader->sections()),
        has_values_(!reader->key_part()),
        ordinal_(s_.count) {}

  void SeekToFirst() override { PositionAt(0); }
  void SeekToLast() override { PositionAt(s_.count == 0 ? 0 : s_.count - 1); }
  void Seek(const Slice& user_key, SequenceNumber sequence) override {
    uint32_t ordinal = 0;
    EntryView entry;
    if (!reader_->LowerBound(user_key, PackTag(sequence, ValueType::kValue), &ordinal, &entry)) {
      return MarkCorrupt();
    }
    if (ordinal >= s_.count) return SetInvalid();
    Set(ordinal, entry);
  }
  void Next() override {
    assert(Valid());
    if (ordinal_ + 1 >= s_.count) return SetInvalid();
    EntryView next;
    if (next_ == 0 || !s_.LoadAt(offset_ + next_, &next)) return MarkCorrupt();
    // Each step's address comes from the entry before it; entries are
    // laid out in order, so fetching a few lines ahead hides the chain.
    __builtin_prefetch(s_.keyset + next.offset + kScanPrefetchBytes);
    Set(ordinal_ + 1, next);
  }
  void Prev() override {
    assert(Valid());
    PositionAt(ordinal_ == 0 ? s_.count : ordinal_ - 1);
  }
  Status status() const override { return status_; }

  uint32_t PeekRun(const Slice* limit_key, uint64_t limit_tag, uint32_t max_entries, EntryRun* run) override {
    assert(Valid());
    if (TagType(tag_) == ValueType::kDeletion || !has_values_) return 0;
    EntryView entry;
    if (!s_.LoadAt(offset_, &entry)) return 0;
    if (limit_key != nullptr &&
        CompareInternal(comparator_, entry.key, entry.tag, *limit_key, limit_tag) >= 0) {
      return 0;
    }
    const uint32_t available = std::min<uint32_t>(max_entries, s_.count - ordinal_);
    uint32_t n = 1;
    uint64_t end = offset_ + EntrySize(entry.height, entry.key.size());
    const uint64_t first_value = entry.value.data() - s_.values;
    uint64_t value_end = first_value + entry.value.size();
    // Extend while the next entry is adjacent, its value follows, and the
    // merge would decide nothing about it.
    while (n < available) {
      EntryView next;
      if (entry.next != EntrySize(entry.height, entry.key.size()) || !s_.LoadAt(end, &next)) break;
      if (TagType(next.tag) == ValueType::kDeletion || next.value.data() - s_.values != static_cast<ptrdiff_t>(value_end) ||
          comparator_->Compare(next.key, entry.key) == 0 ||
          (limit_key != nullptr && CompareInternal(comparator_, next.key, next.tag, *limit_key, limit_tag) >= 0)) {
        break;
      }
      entry = next;
      end += EntrySize(entry.height, entry.key.size());
      value_end += entry.value.size();
      ++n;
    }
    run->entries = s_.keyset + offset_;
    run->last = s_.keyset + entry.offset;
    run->entry_bytes = end - offset_;
    run->values = s_.values + first_value;
    run->value_bytes = value_end - first_value;
    run->first_value_offset = static_cast<uint32_t>(first_value);
    run->count = n;
    peeked_last_ = entry.offset;
    peeked_count_ = n;
    return n;
  }
  bool OpenWindow(BlockWindow* window) override {
    assert(Valid());
    if (!has_values_) return false;
    window->values = s_.values;
    window->value_buffer_size = s_.value_buffer_size;
    window->keyset = s_.keyset;
    window->keyset_size = s_.keyset_size;
    window->offset = offset_;
    window->remaining = s_.count - ordinal_ - 1;
    window->limited = false;
    peeked_count_ = 0;
    return true;
  }
  void SkipRun(uint32_t n) override {
    assert(Valid() && n >= 1);
    if (ordinal_ + n >= s_.count) return SetInvalid();
    // The run's entries are adjacent (PeekRun checked): its n-th entry
    // starts where the first n - 1 end (or is the peeked run's last); the
    // entry after it is its link's.
    uint64_t offset = offset_;
    if (n == peeked_count_) {
      offset = peeked_last_;
    } else {
      for (uint32_t i = 1; i < n; ++i) {
        const uint32_t shape = DecodeFixed32(s_.keyset + offset + ent::kShape);
        offset += EntrySize(ShapeHeight(shape), ShapeKeySize(shape));
      }
    }
    peeked_count_ = 0;
    EntryView last, next;
    if (!s_.LoadAt(offset, &last) || !s_.LoadNext(last, &next)) return MarkCorrupt();
    Set(ordinal_ + n, next);
  }

 private:
  // Positions at entry `ordinal` (count: past the end): from its group's
  // sample, walking no further than the entry itself, and remembering the
  // offsets walked so that a reverse scan visits each entry once.
  void PositionAt(uint32_t ordinal) {
    if (ordinal >= s_.count) return SetInvalid();
    const uint32_t group = ordinal / kSampleStride;
    const uint32_t k = ordinal % kSampleStride;
    EntryView entry;
    if (group != cached_group_) {
      if (!s_.LoadAt(s_.SampleOffset(group), &entry)) return MarkCorrupt();
      cached_group_ = group;
      group_offsets_[0] = entry.offset;
      cached_ = 1;
    }
    // The entry itself if known, else the last known one (cached_ >= 1).
    const uint32_t start = std::min(k, cached_ - 1) % kSampleStride;
    if (!s_.LoadAt(group_offsets_[start], &entry)) return MarkCorrupt();
    while (cached_ <= k) {
      EntryView next;
      if (!s_.LoadNext(entry, &next)) return MarkCorrupt();
      entry = next;
      group_offsets_[cached_++] = entry.offset;
    }
    Set(ordinal, entry);
  }
  // Makes `entry` the current entry, at `ordinal`. Takes the fields from the
  // caller's copy (registers), never back from this object's memory: a
  // load spanning two fresh stores stalls every step.
  void Set(uint32_t ordinal, const EntryView& entry) {
    ordinal_ = ordinal;
    valid_ = true;
    peeked_count_ = 0;
    user_key_ = entry.key;
    value_ = entry.value;
    tag_ = entry.tag;
    has_key_hash_ = false;
    offset_ = entry.offset;
    next_ = entry.next;
  }
  void SetInvalid() {
    ordinal_ = s_.count;
    valid_ = false;
    peeked_count_ = 0;
  }
  // Out of line and cold: keeps the Status construction off the stepping path.
  [[gnu::noinline, gnu::cold]] void MarkCorrupt() {
    status_ = Status::Corruption("KeySet block has a malformed entry");
    SetInvalid();
  }

  static constexpr uint32_t kNoGroup = 0xffffffff;
  static constexpr uint64_t kScanPrefetchBytes = 512;
  const Reader* const reader_;
  const Comparator* const comparator_;
  const Sections s_;
  const bool has_values_;  // false over a key part: no runs or windows to hand out
  uint32_t ordinal_;     // == count when not valid
  uint64_t offset_ = 0;  // of the current entry, when valid
  uint32_t next_ = 0;    // its level-0 link
  uint64_t peeked_last_ = 0;   // the last entry of the run PeekRun described
  uint32_t peeked_count_ = 0;  // its length (0: none since the last move)
  uint32_t cached_group_ = kNoGroup;
  uint32_t cached_ = 0;  // group_offsets_[0, cached_) are known
  uint64_t group_offsets_[kSampleStride] = {};
  Status status_;
};

}  // namespace

std::unique_ptr<InternalIterator> Reader::NewIterator() const { return std::make_unique<Iterator>(this); }

Status Reader::CheckFirstEntries(const HeaderLayout& l) {
  if (DecodeFixed32(s_.keyset + ent::kShape) != PackShape(0, kMaxHeight)) {
    return Status::Corruption("KeySet block head node is malformed");
  }
  if (l.key_head_skip > 0) {
    EntryView first;
    if (l.count == 0 || !s_.LoadAt(s_.SampleOffset(0), &first) || first.key.size() < l.key_head_skip) {
      return Status::Corruption("KeySet block first entry does not hold the common key prefix");
    }
    if (l.key_head_skip <= sizeof(common_prefix_copy_)) {
      std::memcpy(common_prefix_copy_, first.key.data(), l.key_head_skip);
      common_prefix_ = common_prefix_copy_;
    } else {
      common_prefix_ = first.key.data();
    }
  }
  return Status::OK();
}

Status OpenReader(const Slice& contents, const BlockReadOptions& options, std::unique_ptr<BlockReader>* reader) {
  return Reader::Open(contents, options, reader);
}

Status ValueRegion(const Slice& header, uint64_t block_size, const Comparator* comparator, uint64_t* begin,
                   uint64_t* end) {
  if (header.size() < kHeaderSize) return Status::Corruption("KeySet block header truncated");
  if (keyset::VersionOf(header) != kFormatVersion) return Status::NotSupported("not a KeySet version 2 block");
  HeaderLayout l;
  Status s = ParseHeader(header.data(), block_size, comparator, &l);
  if (!s.ok()) return s;
  *begin = kHeaderSize;
  *end = l.keyset_offset;
  return Status::OK();
}

Status OpenKeyPartReader(const Slice& key_part, uint64_t block_size, const Comparator* comparator,
                         std::unique_ptr<BlockReader>* reader) {
  return Reader::OpenKeyPart(key_part, block_size, comparator, reader);
}

uint64_t KeyPartValueOffset(const InternalIterator& it) { return static_cast<uint64_t>(it.value().data() - kNoValues); }

}  // namespace jigsaw::keyset::v2
