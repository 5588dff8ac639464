#include "format/classic_block.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "util/checksum.h"
#include "util/coding.h"
#include "util/profile_clock.h"

namespace jigsaw::classic {

namespace {

inline Slice UserKeyOf(const Slice& internal_key) {
  return Slice(internal_key.data(), internal_key.size() - 8);
}
inline uint64_t TagOf(const Slice& internal_key) {
  return DecodeFixed64(internal_key.data() + internal_key.size() - 8);
}

// Trailer field offsets, relative to the start of the trailer.
constexpr size_t kTrailerEntries = 0;
constexpr size_t kTrailerRestarts = 4;
constexpr size_t kTrailerMagic = 8;
constexpr size_t kTrailerVersion = 12;
constexpr size_t kTrailerChecksum = 16;

}  // namespace

// ---------------------------------------------------------------------------
// Builder

Builder::Builder(const BlockBuilderOptions& options, char* dest, size_t capacity)
    : options_(options), dest_(dest), capacity_(capacity) {
  assert(options.restart_interval >= 1);
}

Status Builder::Add(const Slice& user_key, SequenceNumber sequence, ValueType type, const Slice& value) {
  assert(!finished_);
  if (user_key.size() > kMaxKeySize) {
    return Status::InvalidArgument("key too large", std::to_string(user_key.size()) + " bytes, limit " +
                                                        std::to_string(kMaxKeySize));
  }
  if (value.size() > kMaxValueSize) {
    return Status::InvalidArgument("value too large", std::to_string(value.size()) + " bytes, limit " +
                                                          std::to_string(kMaxValueSize));
  }
  if (sequence > kMaxSequenceNumber) return Status::InvalidArgument("sequence number above 2^56-1");

  key_.assign(user_key.data(), user_key.size());
  char tag[8];
  EncodeFixed64(tag, PackTag(sequence, type));
  key_.append(tag, sizeof(tag));
  assert(entries_ == 0 ||
         CompareInternal(options_.comparator, UserKeyOf(last_key_), TagOf(last_key_), user_key,
                         PackTag(sequence, type)) < 0);

  const bool restart = entries_ == 0 || since_restart_ >= options_.restart_interval;
  size_t shared = 0;
  if (!restart) {
    const size_t limit = std::min(last_key_.size(), key_.size());
    while (shared < limit && last_key_[shared] == key_[shared]) ++shared;
  }
  const size_t non_shared = key_.size() - shared;
  const size_t entry_size = VarintLength(shared) + VarintLength(non_shared) + VarintLength(value.size()) +
                            non_shared + value.size();
  const size_t restart_bytes = 4 * (restarts_.size() + (restart ? 1 : 0));
  if (size_ + entry_size + restart_bytes + kTrailerSize > capacity_ || size_ + entry_size > UINT32_MAX) {
    return Status::NoSpace("classic block full");
  }
  if (restart) {
    restarts_.push_back(static_cast<uint32_t>(size_));
    since_restart_ = 0;
  }
  char* p = dest_ + size_;
  p = EncodeVarint32(p, static_cast<uint32_t>(shared));
  p = EncodeVarint32(p, static_cast<uint32_t>(non_shared));
  p = EncodeVarint32(p, static_cast<uint32_t>(value.size()));
  TimePart(WorkPart::kCopy, [&] {
    std::memcpy(p, key_.data() + shared, non_shared);
    if (!value.empty()) std::memcpy(p + non_shared, value.data(), value.size());
  });
  p += non_shared + value.size();
  size_ = static_cast<size_t>(p - dest_);
  last_key_.swap(key_);
  ++since_restart_;
  ++entries_;
  return Status::OK();
}

bool Builder::Restart() {
  size_ = 0;
  restarts_.clear();
  since_restart_ = 0;
  entries_ = 0;
  last_key_.clear();
  finished_ = false;
  return true;
}

Status Builder::Finish(size_t* block_size) {
  assert(!finished_);
  if (CurrentSize() > capacity_) return Status::NoSpace("classic block does not fit");
  finished_ = true;
  char* p = dest_ + size_;
  for (uint32_t restart : restarts_) {
    EncodeFixed32(p, restart);
    p += 4;
  }
  EncodeFixed32(p + kTrailerEntries, static_cast<uint32_t>(entries_));
  EncodeFixed32(p + kTrailerRestarts, static_cast<uint32_t>(restarts_.size()));
  EncodeFixed32(p + kTrailerMagic, kMagic);
  EncodeFixed32(p + kTrailerVersion, kFormatVersion);
  const size_t checksummed = static_cast<size_t>(p - dest_) + kTrailerChecksum;
  TimePart(WorkPart::kFilterChecksum,
           [&] { EncodeFixed32(p + kTrailerChecksum, crc32c::Value(dest_, checksummed)); });
  *block_size = checksummed + 4;
  return Status::OK();
}

// ---------------------------------------------------------------------------
// Reader

namespace {

class Reader final : public BlockReader {
 public:
  Reader(const char* data, uint32_t restarts_offset, uint32_t num_restarts, uint32_t num_entries,
         const Comparator* comparator)
      : data_(data),
        restarts_offset_(restarts_offset),
        num_restarts_(num_restarts),
        num_entries_(num_entries),
        comparator_(comparator) {}

  BlockFormat format() const override { return BlockFormat::kClassic; }
  uint64_t num_entries() const override { return num_entries_; }
  Status Get(const Slice& user_key, SequenceNumber snapshot, BlockLookup* result) const override;
  std::unique_ptr<InternalIterator> NewIterator() const override;
  Status Validate() const override;

  const char* data_;
  const uint32_t restarts_offset_;
  const uint32_t num_restarts_;
  const uint32_t num_entries_;
  const Comparator* const comparator_;
};

class Iterator final : public InternalIterator {
 public:
  explicit Iterator(const Reader* reader)
      : r_(reader), current_(reader->restarts_offset_), next_(reader->restarts_offset_) {}

  void SeekToFirst() override {
    if (r_->num_restarts_ == 0) return MakeInvalid();
    SeekToRestartPoint(0);
    ParseNextEntry();
  }

  void SeekToLast() override {
    if (r_->num_restarts_ == 0) return MakeInvalid();
    SeekToRestartPoint(r_->num_restarts_ - 1);
    while (ParseNextEntry() && next_ < r_->restarts_offset_) {
    }
  }

  void Seek(const Slice& user_key, SequenceNumber sequence) override {
    if (r_->num_restarts_ == 0) return MakeInvalid();
    const uint64_t target_tag = PackTag(sequence, ValueType::kValue);
    // Binary search for the last restart point whose key is < target.
    uint32_t left = 0;
    uint32_t right = r_->num_restarts_ - 1;
    while (left < right) {
      const uint32_t mid = left + (right - left + 1) / 2;
      uint32_t offset;
      Slice restart_key;
      if (!RestartPoint(mid, &offset) || !DecodeRestartKey(offset, &restart_key)) return MarkCorrupt();
      if (CompareInternal(r_->comparator_, UserKeyOf(restart_key), TagOf(restart_key), user_key, target_tag) < 0) {
        left = mid;
      } else {
        right = mid - 1;
      }
    }
    SeekToRestartPoint(left);
    while (ParseNextEntry()) {
      if (CompareInternal(r_->comparator_, user_key_, tag_, user_key, target_tag) >= 0) return;
    }
  }

  void Next() override {
    assert(Valid());
    ParseNextEntry();
  }

  void Prev() override {
    assert(Valid());
    const uint32_t original = current_;
    uint32_t restart_offset;
    for (;;) {
      if (!RestartPoint(restart_index_, &restart_offset)) return MarkCorrupt();
      if (restart_offset < original) break;
      if (restart_index_ == 0) return MakeInvalid();
      --restart_index_;
    }
    SeekToRestartPoint(restart_index_);
    while (ParseNextEntry() && next_ < original) {
    }
  }

  Status status() const override { return status_; }

 private:
  bool RestartPoint(uint32_t index, uint32_t* offset) const {
    *offset = DecodeFixed32(r_->data_ + r_->restarts_offset_ + 4 * size_t{index});
    return *offset < r_->restarts_offset_;
  }

  void SeekToRestartPoint(uint32_t index) {
    key_.clear();
    restart_index_ = index;
    uint32_t offset;
    if (!RestartPoint(index, &offset)) return MarkCorrupt();
    next_ = offset;
  }

  // Decodes the lengths of the entry at `offset`. Returns the start of the
  // key delta, or nullptr if the entry does not fit in the data region.
  const char* DecodeEntry(uint32_t offset, uint32_t* shared, uint32_t* non_shared, uint32_t* value_size) const {
    const char* p = r_->data_ + offset;
    const char* limit = r_->data_ + r_->restarts_offset_;
    if (limit - p >= 3 && ((static_cast<uint8_t>(p[0]) | static_cast<uint8_t>(p[1]) |
                            static_cast<uint8_t>(p[2])) & 0x80) == 0) {
      // Fast path: all three lengths fit in one byte each.
      *shared = static_cast<uint8_t>(p[0]);
      *non_shared = static_cast<uint8_t>(p[1]);
      *value_size = static_cast<uint8_t>(p[2]);
      p += 3;
    } else {
      if ((p = DecodeVarint32(p, limit, shared)) == nullptr) return nullptr;
      if ((p = DecodeVarint32(p, limit, non_shared)) == nullptr) return nullptr;
      if ((p = DecodeVarint32(p, limit, value_size)) == nullptr) return nullptr;
    }
    if (static_cast<uint64_t>(limit - p) < uint64_t{*non_shared} + *value_size) return nullptr;
    return p;
  }

  bool DecodeRestartKey(uint32_t offset, Slice* key) const {
    uint32_t shared, non_shared, value_size;
    const char* p = DecodeEntry(offset, &shared, &non_shared, &value_size);
    if (p == nullptr || shared != 0 || non_shared < 8) return false;
    *key = Slice(p, non_shared);
    return true;
  }

  bool ParseNextEntry() {
    current_ = next_;
    if (current_ >= r_->restarts_offset_) {
      MakeInvalid();
      return false;
    }
    // The conversion out of the format: the varints parsed, the key rebuilt
    // from the previous key's shared prefix.
    uint32_t shared = 0, non_shared = 0, value_size = 0;
    const char* p = nullptr;
    const bool parsed = TimePart(WorkPart::kConvert, [&] {
      p = DecodeEntry(current_, &shared, &non_shared, &value_size);
      if (p == nullptr || shared > key_.size()) return false;
      key_.resize(shared);
      key_.append(p, non_shared);
      return key_.size() >= 8;
    });
    if (!parsed) {
      MarkCorrupt();
      return false;
    }
    // The tag is the last 8 bytes of the internal key; read it from the block
    // when the delta holds it, avoiding a load from the just-written key.
    tag_ = non_shared >= 8 ? DecodeFixed64(p + non_shared - 8) : TagOf(key_);
    if ((tag_ & 0xff) > kMaxValueTypeByte) {
      MarkCorrupt();
      return false;
    }
    valid_ = true;
    user_key_ = Slice(key_.data(), key_.size() - 8);
    value_ = Slice(p + non_shared, value_size);
    next_ = static_cast<uint32_t>(p + non_shared + value_size - r_->data_);
    uint32_t restart_offset;
    while (restart_index_ + 1 < r_->num_restarts_ && RestartPoint(restart_index_ + 1, &restart_offset) &&
           restart_offset <= current_) {
      ++restart_index_;
    }
    return true;
  }

  void MakeInvalid() {
    current_ = next_ = r_->restarts_offset_;
    valid_ = false;
  }
  void MarkCorrupt() {
    status_ = Status::Corruption("classic block has a malformed entry");
    MakeInvalid();
  }

  const Reader* const r_;
  uint32_t current_;  // offset of the current entry; == restarts_offset_ when invalid
  uint32_t next_;     // offset of the entry after it
  uint32_t restart_index_ = 0;
  std::string key_;   // internal key of the current entry
  Status status_;

  friend class Reader;
};

std::unique_ptr<InternalIterator> Reader::NewIterator() const { return std::make_unique<Iterator>(this); }

Status Reader::Get(const Slice& user_key, SequenceNumber snapshot, BlockLookup* result) const {
  Iterator it(this);
  it.Seek(user_key, snapshot);
  if (!it.status().ok()) return it.status();
  if (!it.Valid() || comparator_->Compare(it.user_key(), user_key) != 0) return Status::NotFound(Slice());
  result->type = it.type();
  result->sequence = it.sequence();
  result->value = result->type == ValueType::kValue ? it.value() : Slice();
  return Status::OK();
}

Status Reader::Validate() const {
  uint32_t previous_restart = 0;
  for (uint32_t i = 0; i < num_restarts_; ++i) {
    const uint32_t offset = DecodeFixed32(data_ + restarts_offset_ + 4 * size_t{i});
    if (offset >= restarts_offset_ || (i == 0 ? offset != 0 : offset <= previous_restart)) {
      return Status::Corruption("classic block restart point " + std::to_string(i) + " is out of place");
    }
    previous_restart = offset;
  }
  Iterator it(this);
  std::string previous;
  uint32_t count = 0;
  uint32_t restart = 0;
  for (it.SeekToFirst(); it.Valid(); it.Next()) {
    const bool at_restart = restart < num_restarts_ &&
                            DecodeFixed32(data_ + restarts_offset_ + 4 * size_t{restart}) == it.current_;
    if (at_restart) {
      Slice key;
      if (!it.DecodeRestartKey(it.current_, &key)) {
        return Status::Corruption("classic block restart entry shares a key prefix");
      }
      ++restart;
    }
    if (count > 0 && CompareInternal(comparator_, UserKeyOf(previous), TagOf(previous), it.user_key(),
                                     TagOf(it.key_)) >= 0) {
      return Status::Corruption("classic block entry " + std::to_string(count) + " is out of order");
    }
    previous = it.key_;
    ++count;
  }
  if (!it.status().ok()) return it.status();
  if (restart != num_restarts_) return Status::Corruption("classic block restart point not at an entry");
  if (count != num_entries_) return Status::Corruption("classic block entry count mismatch");
  return Status::OK();
}

}  // namespace

Status OpenReader(const Slice& contents, const BlockReadOptions& options, std::unique_ptr<BlockReader>* reader) {
  const size_t size = contents.size();
  const char* data = contents.data();
  if (size < kTrailerSize) return Status::Corruption("classic block truncated", std::to_string(size) + " bytes");
  if (size > UINT32_MAX) return Status::Corruption("classic block larger than 4 GiB");
  const char* trailer = data + size - kTrailerSize;
  if (DecodeFixed32(trailer + kTrailerMagic) != kMagic) return Status::Corruption("not a classic block (bad magic)");
  const uint32_t version = DecodeFixed32(trailer + kTrailerVersion);
  if (version > kFormatVersion) {
    return Status::NotSupported("classic block format version " + std::to_string(version) +
                                " is newer than the supported version " + std::to_string(kFormatVersion));
  }
  if (version == 0) return Status::Corruption("classic block has format version 0");
  if (options.verify_checksum &&
      crc32c::Value(data, size - 4) != DecodeFixed32(trailer + kTrailerChecksum)) {
    return Status::Corruption("classic block checksum mismatch");
  }
  const uint32_t num_restarts = DecodeFixed32(trailer + kTrailerRestarts);
  const uint32_t num_entries = DecodeFixed32(trailer + kTrailerEntries);
  if (num_restarts > (size - kTrailerSize) / 4) return Status::Corruption("classic block restart count too large");
  const auto restarts_offset = static_cast<uint32_t>(size - kTrailerSize - 4 * size_t{num_restarts});
  if ((num_restarts == 0) != (restarts_offset == 0) || (num_entries == 0) != (num_restarts == 0)) {
    return Status::Corruption("classic block entries and restart points disagree");
  }
  *reader = std::make_unique<Reader>(data, restarts_offset, num_restarts, num_entries, options.comparator);
  return Status::OK();
}

}  // namespace jigsaw::classic
