#include "table/merging_iterator.h"

#include <algorithm>
#include <cassert>
#include <string>

#include "util/key_prefix.h"

namespace jigsaw {

namespace {

// Merges children in internal-key order. With the bytewise comparator each
// child's current key is summarised by its prefix (util/key_prefix.h), so
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
    Resort();
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
  // A run of the current child that ends before the next smallest child's
  // entry (forward iteration only).
  uint32_t PeekRun(const Slice* limit_key, uint64_t limit_tag, uint32_t max_entries, EntryRun* run) override {
    assert(Valid());
    if (!forward_ || !order_known_) return 0;
    const InternalIterator* runner_up = order_.size() > 1 ? children_[order_[1]].get() : nullptr;
    Slice limit;
    uint64_t tag = 0;
    if (runner_up != nullptr) {
      limit = runner_up->user_key();
      tag = runner_up->tag();
      if (limit_key != nullptr && CompareInternal(comparator_, *limit_key, limit_tag, limit, tag) < 0) {
        limit = *limit_key;
        tag = limit_tag;
      }
    } else if (limit_key != nullptr) {
      limit = *limit_key;
      tag = limit_tag;
    }
    const bool limited = runner_up != nullptr || limit_key != nullptr;
    return children_[current_]->PeekRun(limited ? &limit : nullptr, tag, max_entries, run);
  }
  void SkipRun(uint32_t n) override {
    assert(Valid() && forward_ && order_known_);
    children_[current_]->SkipRun(n);
    UpdateHead(current_);
    Resort();
  }
  // Windows on the children in the order of their current entries, up to
  // the first that has none: it limits them all, and the children after it
  // (whose entries all come after its own) need none.
  size_t OpenWindows(BlockWindow* windows, size_t capacity) override {
    assert(Valid());
    window_children_.clear();
    if (!forward_ || !order_known_) return 0;
    const InternalIterator* limit = nullptr;
    for (size_t position = 0; position < order_.size(); ++position) {
      InternalIterator* child = children_[order_[position]].get();
      if (position == capacity || !child->OpenWindow(&windows[position])) {
        limit = child;
        break;
      }
      window_children_.push_back(order_[position]);
    }
    if (limit != nullptr) {
      for (size_t k = 0; k < window_children_.size(); ++k) {
        BlockWindow& window = windows[k];
        if (!window.limited ||
            CompareInternal(comparator_, limit->user_key(), limit->tag(), window.limit_key, window.limit_tag) < 0) {
          window.limited = true;
          window.limit_key = limit->user_key();
          window.limit_tag = limit->tag();
        }
      }
    }
    return window_children_.size();
  }
  void SkipRuns(const uint32_t* taken) override {
    assert(Valid() && forward_ && order_known_);
    for (size_t k = 0; k < window_children_.size(); ++k) {
      if (taken[k] == 0) continue;
      children_[window_children_[k]]->SkipRun(taken[k]);
      UpdateHead(window_children_[k]);
    }
    window_children_.clear();
    FindSmallest();
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
  // After current_ (and only it) moved forward: order_ holds the valid
  // children by their current entries, current_ first, and current_ sinks
  // to its place among the others -- one comparison while it stays the
  // smallest, one more per child it passes (not one per child every step).
  void Resort() {
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
  std::vector<size_t> window_children_;  // the child of each window OpenWindows opened
  bool order_known_ = false;   // order_ is up to date
  bool forward_ = true;
};

}  // namespace

std::unique_ptr<InternalIterator> NewMergingIterator(const Comparator* comparator,
                                                     std::vector<std::unique_ptr<InternalIterator>> children) {
  return std::make_unique<MergingIterator>(comparator, std::move(children));
}

}  // namespace jigsaw
