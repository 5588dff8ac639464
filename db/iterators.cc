#include "db/iterators.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "util/key_prefix.h"

namespace jigsaw {

Iterator::~Iterator() = default;

namespace {

// ---------------------------------------------------------------------------

// Merges children in internal-key order. With the bytewise comparator each
// child's current key is summarised by its prefix (src/key_prefix.h), so
// choosing the next entry mostly compares integers.
class MergingIterator final : public InternalIterator {
 public:
  MergingIterator(const Comparator* comparator, std::vector<std::unique_ptr<InternalIterator>> children)
      : comparator_(comparator),
        use_heads_(comparator == BytewiseComparator()),
        children_(std::move(children)),
        heads_(children_.size()) {}

  void SeekToFirst() override {
    for (auto& child : children_) child->SeekToFirst();
    forward_ = true;
    UpdateAllHeads();
    FindSmallest();
  }
  void SeekToLast() override {
    for (auto& child : children_) child->SeekToLast();
    forward_ = false;
    UpdateAllHeads();
    FindLargest();
  }
  void Seek(const Slice& user_key, SequenceNumber sequence) override {
    for (auto& child : children_) child->Seek(user_key, sequence);
    forward_ = true;
    UpdateAllHeads();
    FindSmallest();
  }
  void Next() override {
    assert(Valid());
    if (!forward_) {
      // Every other child is at or before the current entry: move each to
      // the first entry after it. Sequence numbers are unique, so no other
      // child holds the current (key, sequence).
      const std::string key = user_key_.ToString();
      const SequenceNumber sequence = TagSequence(tag_);
      for (size_t i = 0; i < children_.size(); ++i) {
        if (i != current_) children_[i]->Seek(key, sequence);
      }
      forward_ = true;
      UpdateAllHeads();
      order_known_ = false;
    }
    children_[current_]->Next();
    UpdateHead(current_);
    if (!order_known_) {
      FindSmallest();
      return;
    }
    // order_ holds the valid children by their current entries, current_
    // first, and only current_ moved: it sinks to its place among the
    // others -- one comparison while it stays the smallest, one more per
    // child it passes (not one per child every step).
    if (!children_[current_]->Valid()) {
      order_.erase(order_.begin());
    } else {
      for (size_t i = 0; i + 1 < order_.size() && Compare(order_[i], order_[i + 1]) > 0; ++i) {
        std::swap(order_[i], order_[i + 1]);
      }
    }
    current_ = order_.empty() ? kNone : order_.front();
    Publish();
  }
  void Prev() override {
    assert(Valid());
    if (forward_) {
      const std::string key = user_key_.ToString();
      const SequenceNumber sequence = TagSequence(tag_);
      for (size_t i = 0; i < children_.size(); ++i) {
        if (i == current_) continue;
        InternalIterator* child = children_[i].get();
        child->Seek(key, sequence);  // first entry after the current one
        if (child->Valid()) {
          child->Prev();
        } else {
          child->SeekToLast();
        }
      }
      forward_ = false;
      UpdateAllHeads();
    }
    children_[current_]->Prev();
    UpdateHead(current_);
    FindLargest();
  }
  Status status() const override {
    for (const auto& child : children_) {
      Status s = child->status();
      if (!s.ok()) return s;
    }
    return Status::OK();
  }

 private:
  static constexpr size_t kNone = ~size_t{0};

  void UpdateHead(size_t i) {
    if (use_heads_ && children_[i]->Valid()) heads_[i] = LoadKeyPrefix(children_[i]->user_key());
  }
  void UpdateAllHeads() {
    for (size_t i = 0; i < children_.size(); ++i) UpdateHead(i);
  }
  static int CompareTags(uint64_t a, uint64_t b) { return a > b ? -1 : a < b ? 1 : 0; }  // newer first
  // <0, 0, >0 as child a's entry sorts before, with, after child b's.
  int Compare(size_t a, size_t b) const {
    const InternalIterator* x = children_[a].get();
    const InternalIterator* y = children_[b].get();
    if (use_heads_) {
      const int r = CompareWithPrefixes(x->user_key(), heads_[a], y->user_key(), heads_[b]);
      return r != 0 ? r : CompareTags(x->tag(), y->tag());
    }
    return CompareInternal(comparator_, x->user_key(), x->tag(), y->user_key(), y->tag());
  }
  // Orders the valid children by their current entries (order_) and makes
  // the smallest current.
  void FindSmallest() {
    order_.clear();
    for (size_t i = 0; i < children_.size(); ++i) {
      if (children_[i]->Valid()) order_.push_back(i);
    }
    std::sort(order_.begin(), order_.end(), [this](size_t a, size_t b) { return Compare(a, b) < 0; });
    order_known_ = true;
    current_ = order_.empty() ? kNone : order_.front();
    Publish();
  }
  void FindLargest() {
    order_known_ = false;
    current_ = kNone;
    for (size_t i = 0; i < children_.size(); ++i) {
      if (children_[i]->Valid() && (current_ == kNone || Compare(i, current_) > 0)) current_ = i;
    }
    Publish();
  }
  void Publish() {
    valid_ = current_ != kNone;
    if (valid_) SetEntryFrom(*children_[current_]);
  }

  const Comparator* const comparator_;
  const bool use_heads_;  // bytewise order: heads order keys up to ties
  std::vector<std::unique_ptr<InternalIterator>> children_;
  std::vector<KeyPrefix> heads_;  // heads_[i]: prefix of child i's key while it is Valid()
  size_t current_ = kNone;
  std::vector<size_t> order_;  // forward: the valid children, smallest entry first
  bool order_known_ = false;   // order_ is up to date
  bool forward_ = true;
};

// ---------------------------------------------------------------------------

class LevelIterator final : public InternalIterator {
 public:
  LevelIterator(const Comparator* comparator, std::vector<TableRef> blocks, bool scan, SampledPhase* decode)
      : comparator_(comparator), blocks_(std::move(blocks)), scan_(scan), decode_(decode) {}

  void SeekToFirst() override {
    Open(0);
    if (block_iter_ != nullptr) block_iter_->SeekToFirst();
    SkipEmptyForward();
  }
  void SeekToLast() override {
    Open(blocks_.empty() ? 0 : blocks_.size() - 1);
    if (block_iter_ != nullptr) block_iter_->SeekToLast();
    SkipEmptyBackward();
  }
  void Seek(const Slice& user_key, SequenceNumber sequence) override {
    // First block whose largest key is >= the target.
    size_t lo = 0, hi = blocks_.size();
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (comparator_->Compare(blocks_[mid]->largest, user_key) < 0) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    Open(lo);
    if (block_iter_ != nullptr) block_iter_->Seek(user_key, sequence);
    SkipEmptyForward();
  }
  void Next() override {
    block_iter_->Next();
    SkipEmptyForward();
  }
  void Prev() override {
    block_iter_->Prev();
    SkipEmptyBackward();
  }
  Status status() const override { return status_; }

 private:
  void Open(size_t index) {
    index_ = index;
    if (index >= blocks_.size()) {
      block_iter_ = nullptr;
    } else {
      block_iter_ = scan_ ? blocks_[index]->table->NewScanIterator(decode_) : blocks_[index]->table->NewIterator();
    }
  }
  void Keep() {
    if (block_iter_ != nullptr && !block_iter_->status().ok() && status_.ok()) status_ = block_iter_->status();
  }
  void SkipEmptyForward() {
    while (block_iter_ != nullptr && !block_iter_->Valid()) {
      Keep();
      if (index_ + 1 >= blocks_.size()) {
        block_iter_ = nullptr;
        break;
      }
      Open(index_ + 1);
      block_iter_->SeekToFirst();
    }
    Publish();
  }
  void SkipEmptyBackward() {
    while (block_iter_ != nullptr && !block_iter_->Valid()) {
      Keep();
      if (index_ == 0) {
        block_iter_ = nullptr;
        break;
      }
      Open(index_ - 1);
      block_iter_->SeekToLast();
    }
    Publish();
  }
  void Publish() {
    valid_ = block_iter_ != nullptr && block_iter_->Valid();
    if (valid_) {
      SetEntryFrom(*block_iter_);
    }
  }

  const Comparator* const comparator_;
  const std::vector<TableRef> blocks_;
  const bool scan_;  // tables read by scan iterators (compaction inputs)
  SampledPhase* const decode_;  // for the scan iterators; may be null
  size_t index_ = 0;
  std::unique_ptr<InternalIterator> block_iter_;
  Status status_;
};

// ---------------------------------------------------------------------------

class DBIter final : public Iterator {
 public:
  DBIter(const Comparator* comparator, std::unique_ptr<InternalIterator> internal, SequenceNumber sequence,
         std::vector<std::shared_ptr<const void>> pins, const pmem::NvmTiming* timing, int pmem_sources)
      : comparator_(comparator),
        bytewise_(comparator == BytewiseComparator()),
        iter_(std::move(internal)),
        sequence_(sequence),
        pins_(std::move(pins)),
        timing_(timing),
        pmem_sources_(pmem_sources) {}

  bool Valid() const override { return valid_; }
  Slice key() const override { return forward_ ? iter_->user_key() : Slice(saved_key_); }
  Slice value() const override { return forward_ ? iter_->value() : Slice(saved_value_); }
  Status status() const override { return status_.ok() ? iter_->status() : status_; }

  void SeekToFirst() override {
    ChargeSeek();
    forward_ = true;
    saved_value_.clear();
    iter_->SeekToFirst();
    FindNextUserEntry(false);
  }
  void Seek(const Slice& target) override {
    ChargeSeek();
    forward_ = true;
    saved_value_.clear();
    iter_->Seek(target, sequence_);
    FindNextUserEntry(false);
  }
  void SeekToLast() override {
    ChargeSeek();
    forward_ = false;
    saved_value_.clear();
    iter_->SeekToLast();
    FindPrevUserEntry();
  }

  void Next() override {
    assert(valid_);
    if (!forward_) {
      // iter_ is before the entries of key(); step into them, then past.
      // saved_key_ is key() (set walking backwards, without its hash).
      forward_ = true;
      saved_hash_known_ = false;
      if (!iter_->Valid()) {
        iter_->SeekToFirst();
      } else {
        iter_->Next();
      }
    } else {
      SaveKeyToSkip();
      iter_->Next();
    }
    FindNextUserEntry(true);
  }

  void Prev() override {
    assert(valid_);
    if (forward_) {
      // Move iter_ before every entry of the current key.
      saved_key_.assign(iter_->user_key().data(), iter_->user_key().size());
      for (;;) {
        iter_->Prev();
        if (!iter_->Valid()) {
          valid_ = false;
          saved_key_.clear();
          saved_value_.clear();
          return;
        }
        if (comparator_->Compare(iter_->user_key(), saved_key_) < 0) break;
      }
      forward_ = false;
    }
    FindPrevUserEntry();
  }

 private:
  // Forward: iter_'s key becomes the one whose older versions are skipped.
  void SaveKeyToSkip() {
    saved_key_.assign(iter_->user_key().data(), iter_->user_key().size());  // reuses the buffer
    saved_hash_known_ = iter_->carries_key_hash();
    if (saved_hash_known_) saved_hash_ = iter_->key_hash();
  }
  // Forward: iter_ is at an entry of saved_key_. Moving forward, iter_'s key
  // is never below it, so this is an equality test; in bytewise order equal
  // keys are equal bytes, and different carried hashes settle it without a
  // comparison (hashes are only used where entries carry them).
  bool IsKeyToSkip() const {
    if (bytewise_ && saved_hash_known_ && iter_->carries_key_hash() && iter_->key_hash() != saved_hash_) return false;
    return comparator_->Compare(iter_->user_key(), saved_key_) <= 0;
  }
  // Forward: the first visible, live entry at or after iter_, skipping
  // entries of saved_key_ when `skipping`.
  void FindNextUserEntry(bool skipping) {
    for (; iter_->Valid(); iter_->Next()) {
      if (iter_->sequence() > sequence_) continue;
      if (skipping && IsKeyToSkip()) continue;
      if (iter_->type() == ValueType::kDeletion) {
        SaveKeyToSkip();  // hide older versions
        skipping = true;
        continue;
      }
      valid_ = true;
      return;
    }
    valid_ = false;
    saved_key_.clear();
  }

  // Backward: walks back over the entries of one key at a time, keeping the
  // newest visible one; iter_ ends before them.
  void FindPrevUserEntry() {
    ValueType type = ValueType::kDeletion;
    for (; iter_->Valid(); iter_->Prev()) {
      if (iter_->sequence() > sequence_) continue;
      if (type != ValueType::kDeletion && comparator_->Compare(iter_->user_key(), saved_key_) < 0) {
        break;  // saved_key_ has a live value and iter_ is before its entries
      }
      type = iter_->type();
      if (type == ValueType::kDeletion) {
        saved_key_.clear();
        saved_value_.clear();
      } else {
        saved_key_.assign(iter_->user_key().data(), iter_->user_key().size());
        saved_value_.assign(iter_->value().data(), iter_->value().size());
      }
    }
    if (type == ValueType::kDeletion) {
      valid_ = false;
      saved_key_.clear();
      saved_value_.clear();
      forward_ = true;
    } else {
      valid_ = true;
    }
  }

  void ChargeSeek() const {
    if (timing_ == nullptr) return;
    for (int i = 0; i < pmem_sources_; ++i) timing_->ChargeRandomRead();
  }

  const Comparator* const comparator_;
  const bool bytewise_;
  std::unique_ptr<InternalIterator> iter_;
  const SequenceNumber sequence_;
  std::vector<std::shared_ptr<const void>> pins_;
  const pmem::NvmTiming* const timing_;
  const int pmem_sources_;
  bool valid_ = false;
  bool forward_ = true;
  std::string saved_key_;    // forward: key to skip; reverse: current key
  uint32_t saved_hash_ = 0;  // forward: bloom::KeyHash(saved_key_) if saved_hash_known_
  bool saved_hash_known_ = false;
  std::string saved_value_;  // reverse: current value
  Status status_;
};

}  // namespace

std::unique_ptr<InternalIterator> NewMergingIterator(const Comparator* comparator,
                                                  std::vector<std::unique_ptr<InternalIterator>> children) {
  return std::make_unique<MergingIterator>(comparator, std::move(children));
}

namespace {

class TimedIterator final : public InternalIterator {
 public:
  TimedIterator(std::unique_ptr<InternalIterator> base, SampledPhase* phase) : base_(std::move(base)), phase_(phase) {}
  // Positioning is rare and may open a block: timed exactly. Steps are sampled.
  void SeekToFirst() override {
    phase_->RunExact([&] { base_->SeekToFirst(); });
    Moved();
  }
  void SeekToLast() override {
    phase_->RunExact([&] { base_->SeekToLast(); });
    Moved();
  }
  void Seek(const Slice& user_key, SequenceNumber sequence) override {
    phase_->RunExact([&] { base_->Seek(user_key, sequence); });
    Moved();
  }
  void Next() override {
    phase_->Run([&] { base_->Next(); });
    Moved();
  }
  void Prev() override {
    phase_->Run([&] { base_->Prev(); });
    Moved();
  }
  Status status() const override { return base_->status(); }

 private:
  void Moved() {
    valid_ = base_->Valid();
    if (valid_) {
      SetEntryFrom(*base_);
    }
  }

  std::unique_ptr<InternalIterator> base_;
  SampledPhase* const phase_;
};

}  // namespace

namespace {

class KeyRangeIterator final : public InternalIterator {
 public:
  KeyRangeIterator(const Comparator* comparator, std::unique_ptr<InternalIterator> base, const std::string* after,
                   const std::string* upto)
      : comparator_(comparator), base_(std::move(base)), after_(after), upto_(upto) {}

  void SeekToFirst() override {
    if (after_ == nullptr) {
      base_->SeekToFirst();
    } else {
      base_->Seek(*after_, 0);  // the oldest possible version of `after`
      while (base_->Valid() && comparator_->Compare(base_->user_key(), *after_) <= 0) base_->Next();
    }
    Moved();
  }
  void SeekToLast() override {
    if (upto_ == nullptr) {
      base_->SeekToLast();
    } else {
      base_->Seek(*upto_, 0);
      while (base_->Valid() && comparator_->Compare(base_->user_key(), *upto_) <= 0) base_->Next();
      if (base_->Valid()) {
        base_->Prev();
      } else if (base_->status().ok()) {
        base_->SeekToLast();
      }
    }
    Moved();
  }
  void Seek(const Slice& user_key, SequenceNumber sequence) override {
    if (after_ != nullptr && comparator_->Compare(user_key, *after_) <= 0) {
      SeekToFirst();
      return;
    }
    base_->Seek(user_key, sequence);
    Moved();
  }
  void Next() override {
    base_->Next();
    Moved();
  }
  void Prev() override {
    base_->Prev();
    Moved();
  }
  Status status() const override { return base_->status(); }

 private:
  void Moved() {
    valid_ = base_->Valid() && (after_ == nullptr || comparator_->Compare(base_->user_key(), *after_) > 0) &&
             (upto_ == nullptr || comparator_->Compare(base_->user_key(), *upto_) <= 0);
    if (valid_) SetEntryFrom(*base_);
  }

  const Comparator* const comparator_;
  std::unique_ptr<InternalIterator> base_;
  const std::string* const after_;
  const std::string* const upto_;
};

}  // namespace

std::unique_ptr<InternalIterator> NewKeyRangeIterator(const Comparator* comparator, std::unique_ptr<InternalIterator> base,
                                                   const std::string* after, const std::string* upto) {
  return std::make_unique<KeyRangeIterator>(comparator, std::move(base), after, upto);
}

std::unique_ptr<InternalIterator> NewTimedIterator(std::unique_ptr<InternalIterator> base, SampledPhase* phase) {
  return std::make_unique<TimedIterator>(std::move(base), phase);
}

std::unique_ptr<InternalIterator> NewLevelIterator(const Comparator* comparator, std::vector<TableRef> blocks) {
  return std::make_unique<LevelIterator>(comparator, std::move(blocks), /*scan=*/false, nullptr);
}

std::unique_ptr<InternalIterator> NewLevelScanIterator(const Comparator* comparator, std::vector<TableRef> blocks,
                                                    SampledPhase* decode) {
  return std::make_unique<LevelIterator>(comparator, std::move(blocks), /*scan=*/true, decode);
}

std::unique_ptr<Iterator> NewDBIterator(const Comparator* comparator, std::unique_ptr<InternalIterator> internal,
                                        SequenceNumber sequence, std::vector<std::shared_ptr<const void>> pins,
                                        const pmem::NvmTiming* timing, int pmem_sources) {
  return std::make_unique<DBIter>(comparator, std::move(internal), sequence, std::move(pins), timing, pmem_sources);
}

}  // namespace jigsaw
