#include "table/range_tombstones.h"

#include <algorithm>
#include <utility>

namespace jigsaw {

RangeTombstoneSet::RangeTombstoneSet(const Comparator* ucmp, std::vector<RangeTombstone> tombstones)
    : ucmp_(ucmp), tombstones_(std::move(tombstones)) {
  std::sort(tombstones_.begin(), tombstones_.end(),
            [](const RangeTombstone& a, const RangeTombstone& b) { return a.sequence < b.sequence; });
  auto less = [this](const std::string& a, const std::string& b) { return ucmp_->Compare(a, b) < 0; };
  std::vector<std::string> bounds;
  bounds.reserve(2 * tombstones_.size());
  for (const RangeTombstone& t : tombstones_) {
    bounds.push_back(t.begin);
    bounds.push_back(t.end);
  }
  std::sort(bounds.begin(), bounds.end(), less);
  bounds.erase(std::unique(bounds.begin(), bounds.end(),
                           [this](const std::string& a, const std::string& b) { return ucmp_->Compare(a, b) == 0; }),
               bounds.end());
  // Sweep the bounds in order, with the tombstones that started at or
  // before the current one and end after it.
  std::vector<const RangeTombstone*> by_begin;
  for (const RangeTombstone& t : tombstones_) by_begin.push_back(&t);
  std::sort(by_begin.begin(), by_begin.end(),
            [&](const RangeTombstone* a, const RangeTombstone* b) { return less(a->begin, b->begin); });
  std::vector<const RangeTombstone*> active;
  size_t next = 0;
  for (size_t i = 0; i + 1 < bounds.size(); ++i) {
    const std::string& at = bounds[i];
    while (next < by_begin.size() && ucmp_->Compare(by_begin[next]->begin, at) <= 0) active.push_back(by_begin[next++]);
    std::erase_if(active, [&](const RangeTombstone* t) { return ucmp_->Compare(t->end, at) <= 0; });
    if (active.empty()) continue;
    Fragment f{at, bounds[i + 1], {}};
    for (const RangeTombstone* t : active) f.sequences.push_back(t->sequence);
    std::sort(f.sequences.begin(), f.sequences.end());
    fragments_.push_back(std::move(f));
  }
}

ptrdiff_t RangeTombstoneSet::FragmentOf(const Slice& user_key) const {
  // The last fragment beginning at or before the key.
  auto it = std::upper_bound(fragments_.begin(), fragments_.end(), user_key,
                             [this](const Slice& key, const Fragment& f) { return ucmp_->Compare(key, f.begin) < 0; });
  if (it == fragments_.begin()) return -1;
  --it;
  return ucmp_->Compare(user_key, it->end) < 0 ? it - fragments_.begin() : -1;
}

SequenceNumber RangeTombstoneSet::Largest(const Fragment& f, SequenceNumber visible) {
  auto it = std::upper_bound(f.sequences.begin(), f.sequences.end(), visible);
  return it == f.sequences.begin() ? 0 : *(it - 1);
}

SequenceNumber RangeTombstoneSet::Covering(const Slice& user_key, SequenceNumber visible) const {
  const ptrdiff_t i = FragmentOf(user_key);
  return i < 0 ? 0 : Largest(fragments_[static_cast<size_t>(i)], visible);
}

bool RangeTombstoneSet::Overlaps(const Slice& smallest, const Slice& largest, SequenceNumber visible) const {
  for (const RangeTombstone& t : tombstones_) {
    if (t.sequence <= visible && ucmp_->Compare(t.begin, largest) <= 0 && ucmp_->Compare(smallest, t.end) < 0) {
      return true;
    }
  }
  return false;
}

std::shared_ptr<const RangeTombstoneSet> RangeTombstoneSet::Changed(const std::vector<RangeTombstone>& added,
                                                                    const std::vector<SequenceNumber>& removed) const {
  std::vector<RangeTombstone> kept;
  for (const RangeTombstone& t : tombstones_) {
    if (std::find(removed.begin(), removed.end(), t.sequence) == removed.end()) kept.push_back(t);
  }
  kept.insert(kept.end(), added.begin(), added.end());
  if (kept.empty()) return nullptr;
  return std::make_shared<const RangeTombstoneSet>(ucmp_, std::move(kept));
}

std::shared_ptr<const RangeTombstoneSet> MergeRangeTombstones(const Comparator* ucmp,
                                                              const std::shared_ptr<const RangeTombstoneSet>& a,
                                                              const std::shared_ptr<const RangeTombstoneSet>& b) {
  if (a == nullptr || a->empty()) return b != nullptr && !b->empty() ? b : nullptr;
  if (b == nullptr || b->empty()) return a;
  std::vector<RangeTombstone> all = a->tombstones();
  all.insert(all.end(), b->tombstones().begin(), b->tombstones().end());
  return std::make_shared<const RangeTombstoneSet>(ucmp, std::move(all));
}

class RangeDeletionFilter final : public InternalIterator {
 public:
  RangeDeletionFilter(std::unique_ptr<InternalIterator> base, const RangeTombstoneSet* tombstones,
                      SequenceNumber visible)
      : base_(std::move(base)), set_(tombstones), visible_(visible) {}

  void SeekToFirst() override {
    base_->SeekToFirst();
    SkipForward();
  }
  void SeekToLast() override {
    base_->SeekToLast();
    SkipBackward();
  }
  void Seek(const Slice& user_key, SequenceNumber sequence) override {
    base_->Seek(user_key, sequence);
    SkipForward();
  }
  void Next() override {
    base_->Next();
    SkipForward();
  }
  void Prev() override {
    base_->Prev();
    SkipBackward();
  }
  Status status() const override { return base_->status(); }

 private:
  // Whether the base's current entry is deleted. The fragment found last
  // is tried first: keys come in order.
  bool Hidden() {
    const Slice key = base_->user_key();
    const Comparator* ucmp = set_->ucmp_;
    const auto& fragments = set_->fragments_;
    if (cached_ < 0 || ucmp->Compare(key, fragments[static_cast<size_t>(cached_)].begin) < 0 ||
        ucmp->Compare(key, fragments[static_cast<size_t>(cached_)].end) >= 0) {
      cached_ = set_->FragmentOf(key);
      if (cached_ < 0) return false;
      covering_ = RangeTombstoneSet::Largest(fragments[static_cast<size_t>(cached_)], visible_);
    }
    return base_->sequence() < covering_;
  }
  void SkipForward() {
    while (base_->Valid() && Hidden()) base_->Next();
    Moved();
  }
  void SkipBackward() {
    while (base_->Valid() && Hidden()) base_->Prev();
    Moved();
  }
  void Moved() {
    valid_ = base_->Valid();
    if (valid_) SetEntryFrom(*base_);
  }

  std::unique_ptr<InternalIterator> base_;
  const RangeTombstoneSet* const set_;
  const SequenceNumber visible_;
  ptrdiff_t cached_ = -1;  // fragment of the last key checked, if it had one
  SequenceNumber covering_ = 0;
};

std::unique_ptr<InternalIterator> NewRangeDeletionFilter(std::unique_ptr<InternalIterator> base,
                                                         const RangeTombstoneSet* tombstones, SequenceNumber visible) {
  return std::make_unique<RangeDeletionFilter>(std::move(base), tombstones, visible);
}

}  // namespace jigsaw
