#include "db/db_iter.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <string>
#include <utility>

#include "format/keyset_entry.h"
#include "util/key_prefix.h"

namespace jigsaw {

Iterator::~Iterator() = default;

Status Iterator::Refresh() { return Status::NotSupported("iterator", "cannot be refreshed: make a new one"); }

namespace {

// What a thread's seek probes paid lately (NewProbingDBIterator): +1 for a
// probed position left without a step, -1 for a probe that found nothing,
// -2 for a step from a probed position; within +-kProbeCreditLimit.
thread_local int t_probe_credit = 0;
thread_local uint32_t t_unprobed_seeks = 0;
constexpr int kProbeCreditLimit = 8;
constexpr uint32_t kProbeSampleEvery = 16;

void CreditProbes(int delta) {
  t_probe_credit = std::clamp(t_probe_credit + delta, -kProbeCreditLimit, kProbeCreditLimit);
}

class DBIter final : public Iterator {
 public:
  DBIter(const Comparator* comparator, std::unique_ptr<InternalIterator> internal, SequenceNumber sequence,
         std::vector<std::shared_ptr<const void>> pins, const IteratorObserver* observer)
      : comparator_(comparator),
        bytewise_(comparator == BytewiseComparator()),
        pins_(std::move(pins)),
        observer_(observer),
        iter_(std::move(internal)),
        sequence_(sequence) {}
  DBIter(const Comparator* comparator, std::unique_ptr<SeekProbe> probe)
      : comparator_(comparator),
        bytewise_(comparator == BytewiseComparator()),
        observer_(probe->observer()),
        probe_(std::move(probe)),
        sequence_(probe_->sequence()) {}
  ~DBIter() override {
    LeaveProbe();
    if (observer_ != nullptr) observer_->Closed(moves_);
  }

  bool Valid() const override { return valid_; }
  Slice key() const override { return !forward_ ? Slice(saved_key_) : in_window_ ? entry_.key : iter_->user_key(); }
  Slice value() const override {
    return !forward_ ? Slice(saved_value_) : in_window_ ? entry_.value : iter_->value();
  }
  Status status() const override { return !status_.ok() || iter_ == nullptr ? status_ : iter_->status(); }

  void SeekToFirst() override {
    ++moves_;
    LeaveProbe();
    EnsureMerge();
    in_window_ = false;
    forward_ = true;
    saved_value_.clear();
    iter_->SeekToFirst();
    FindNextUserEntry(false);
  }
  void Seek(const Slice& target) override {
    ++moves_;
    LeaveProbe();
    in_window_ = false;
    if (probe_ != nullptr && bytewise_ && (t_probe_credit >= 0 || ++t_unprobed_seeks % kProbeSampleEvery == 0)) {
      if (probe_->Probe(target, &saved_value_)) {
        // Where the merge would stand, shown as a backward position is:
        // key() and value() from saved_key_ and saved_value_.
        saved_key_.assign(target.data(), target.size());
        forward_ = false;
        valid_ = true;
        probed_ = true;
        return;
      }
      CreditProbes(-1);
    }
    EnsureMerge();
    forward_ = true;
    saved_value_.clear();
    iter_->Seek(target, sequence_);
    FindNextUserEntry(false);
  }
  void SeekToLast() override {
    ++moves_;
    LeaveProbe();
    EnsureMerge();
    in_window_ = false;
    forward_ = false;
    saved_value_.clear();
    iter_->SeekToLast();
    FindPrevUserEntry();
  }

  void Next() override {
    assert(valid_);
    ++moves_;
    if (probed_ && !StepFromProbe()) return;
    if (in_window_) {
      if (StepInWindows()) return;
      // iter_ past what was read in the windows, then on as after any entry
      // of the current key.
      in_window_ = false;
      saved_key_.assign(entry_.key.data(), entry_.key.size());
      saved_hash_known_ = false;
      iter_->SkipRuns(window_set_->taken);
      FindNextUserEntry(true);
      OpenWindows();
      return;
    }
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
    OpenWindows();
  }

  void Prev() override {
    ++moves_;
    assert(valid_);
    if (probed_ && !StepFromProbe()) return;
    LeaveWindow();
    if (forward_) {
      // Move iter_ before every entry of the current key (by a seek to its
      // first entry past kMaxSequentialSkips of them).
      saved_key_.assign(iter_->user_key().data(), iter_->user_key().size());
      for (int steps = 1;; ++steps) {
        const bool sought = steps > kMaxSequentialSkips;
        if (sought) {
          iter_->Seek(saved_key_, kMaxSequenceNumber);
          steps = 0;
        }
        iter_->Prev();
        if (!iter_->Valid()) {
          valid_ = false;
          saved_key_.clear();
          saved_value_.clear();
          return;
        }
        if (comparator_->Compare(iter_->user_key(), saved_key_) < 0) break;
        if (sought) return StopOutOfOrder();  // before the key's first entry, yet not before the key
      }
      forward_ = false;
    }
    FindPrevUserEntry();
  }

  Status Refresh() override {
    if (probe_ == nullptr) return Status::NotSupported("iterator", "made without a read view to renew");
    LeaveProbe();
    in_window_ = false;
    std::unique_ptr<SeekProbe> renewed = probe_->Renew();
    if (renewed != nullptr) {
      // The old view's reads are told before it goes, as when an iterator is
      // destroyed; the merge goes before the view it reads.
      if (observer_ != nullptr) observer_->Closed(moves_);
      moves_ = 0;
      iter_.reset();
      probe_ = std::move(renewed);
      observer_ = probe_->observer();
      sequence_ = probe_->sequence();
    } else if (iter_ != nullptr && (!status_.ok() || !iter_->status().ok())) {
      iter_.reset();  // an error sticks to a merge: a new one reads afresh
    }
    valid_ = false;
    forward_ = true;
    saved_key_.clear();
    saved_value_.clear();
    saved_hash_known_ = false;
    status_ = Status::OK();
    return Status::OK();
  }

 private:
  static constexpr int kMaxSequentialSkips = 8;

  // The merge, built by the probe when first needed.
  void EnsureMerge() {
    if (iter_ == nullptr) iter_ = probe_->NewMerge();
  }
  // A probed position left without a step from it: the probe paid.
  void LeaveProbe() {
    if (!probed_) return;
    probed_ = false;
    CreditProbes(+1);
  }
  // From a probed position to the merge's, at the same entry, going
  // forward (what Next and Prev expect after a seek); false if the merge
  // does not find it there (an error, reported by status()).
  bool StepFromProbe() {
    probed_ = false;
    CreditProbes(-2);
    EnsureMerge();
    forward_ = true;
    saved_value_.clear();
    iter_->Seek(saved_key_, sequence_);
    FindNextUserEntry(false);
    return valid_;
  }

  // Forward scans read the entries of KeySet blocks in place while they are
  // what the merge below would return (InternalIterator::OpenWindows): a
  // window on each source, from its current entry on, as long as the
  // sources in the order of their entries offer one. A step takes the
  // smallest next entry of the windows (each window's entries one right
  // after the other in its block, before the window's limit) -- a value
  // visible at sequence_; an older version of the current key is passed --
  // instead of passing through every layer of iterators; iter_ stays where
  // the windows opened and catches up (SkipRuns) when they close: at a
  // window's end, an entry the reader does not see, a deletion, a limit.
  // Windows open after a Next, so a Seek followed by a read or two costs
  // nothing more.
  static constexpr size_t kMaxWindows = 8;
  // Window k is window_set_->blocks[k], as the merge opened it (its `remaining` counts
  // down as entries are taken), and what the steps keep of it here.
  struct Window {
    keyset::Sections sections;
    keyset::EntryView next;      // the first entry not taken
    KeyPrefix next_prefix;       // of next.key, when bytewise
    KeyPrefix limit_prefix;      // of the block window's limit_key, when bytewise and limited
    bool has_next = false;       // false: the window is spent (its source's next entry is unknown)
  };

  void OpenWindows() {
    if (!valid_) return;
    if (window_set_ == nullptr) window_set_ = std::make_unique<WindowSet>();
    window_count_ = iter_->OpenWindows(window_set_->blocks, kMaxWindows);
    for (size_t k = 0; k < window_count_; ++k) {
      Window& w = window_set_->windows[k];
      const BlockWindow& block = window_set_->blocks[k];
      keyset::SetSections(block, &w.sections);
      if (!w.sections.LoadAt(block.offset, &w.next)) return;  // damaged: the merge reports it when it gets there
      w.has_next = true;
      if (bytewise_) {
        w.next_prefix = LoadKeyPrefix(w.next.key);
        if (block.limited) w.limit_prefix = LoadKeyPrefix(block.limit_key);
      }
      window_set_->taken[k] = 0;
      window_set_->order[k] = static_cast<uint8_t>(k);
    }
    if (window_count_ == 0) return;
    // Window 0's first entry is the current one.
    TakeAsCurrent(0);
    in_window_ = true;
  }
  // Window k's next entry becomes the current one.
  void TakeAsCurrent(size_t k) {
    entry_ = window_set_->windows[k].next;
    if (bytewise_) prefix_ = window_set_->windows[k].next_prefix;
    current_window_ = k;
    Advance(k);
  }
  // Window k (first in the window order) moves past its next entry, which
  // was taken, and sinks to its place in the order.
  void Advance(size_t k) {
    Window& w = window_set_->windows[k];
    BlockWindow& block = window_set_->blocks[k];
    ++window_set_->taken[k];
    const keyset::EntryView taken = w.next;
    if (block.remaining == 0 || !keyset::NextIsAdjacent(taken) || !w.sections.LoadNext(taken, &w.next)) {
      w.has_next = false;
      return;
    }
    --block.remaining;
    if (bytewise_) w.next_prefix = LoadKeyPrefix(w.next.key);
    for (size_t i = 0; i + 1 < window_count_ && SortsAfter(window_set_->order[i], window_set_->order[i + 1]); ++i) {
      std::swap(window_set_->order[i], window_set_->order[i + 1]);
    }
  }
  // Whether window a's next entry sorts after window b's. A spent window
  // sorts first: it closes the windows at the next step anyway.
  bool SortsAfter(size_t a, size_t b) const {
    const Window& x = window_set_->windows[a];
    const Window& y = window_set_->windows[b];
    if (!x.has_next || !y.has_next) return !y.has_next;
    const int r = bytewise_ ? CompareWithPrefixes(x.next.key, x.next_prefix, y.next.key, y.next_prefix)
                            : comparator_->Compare(x.next.key, y.next.key);
    return r > 0 || (r == 0 && x.next.tag < y.next.tag);  // newer first
  }
  // Moves to the windows' smallest next entry if the merge would return it
  // next, as the first entry of a new key: older versions of the current key
  // are passed. False where the windows cannot tell (a spent window: its
  // source's next entry is unread) or the slow path decides (an entry past
  // its window's limit, newer than the reader, or a deletion).
  bool StepInWindows() {
    for (;;) {
      const size_t k = window_set_->order[0];
      const Window& w = window_set_->windows[k];
      const BlockWindow& block = window_set_->blocks[k];
      if (!w.has_next) return false;  // spent windows sort first
      const keyset::EntryView& next = w.next;
      int versus_current;
      if (bytewise_) {
        if (block.limited) {
          const int r = CompareWithPrefixes(next.key, w.next_prefix, block.limit_key, w.limit_prefix);
          if (r > 0 || (r == 0 && next.tag <= block.limit_tag)) return false;
        }
        versus_current = CompareWithPrefixes(next.key, w.next_prefix, entry_.key, prefix_);
      } else {
        if (block.limited &&
            CompareInternal(comparator_, next.key, next.tag, block.limit_key, block.limit_tag) >= 0) {
          return false;
        }
        versus_current = comparator_->Compare(next.key, entry_.key);
      }
      if (TagSequence(next.tag) > sequence_) return false;
      if (versus_current <= 0) {  // sorted after the current entry: an older version of its key
        Advance(k);
        continue;
      }
      if (TagType(next.tag) != ValueType::kValue) return false;
      TakeAsCurrent(k);
      return true;
    }
  }
  // Moves iter_ to the current entry (the last one taken) and closes the
  // windows.
  void LeaveWindow() {
    if (!in_window_) return;
    in_window_ = false;
    --window_set_->taken[current_window_];
    iter_->SkipRuns(window_set_->taken);
  }

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
    if (!bytewise_) return comparator_->Compare(iter_->user_key(), saved_key_) <= 0;
    if (saved_hash_known_ && iter_->carries_key_hash() && iter_->key_hash() != saved_hash_) return false;
    // Equal bytes, tested inline: sizes, the first 16 bytes as two words,
    // then the rest.
    const Slice key = iter_->user_key();
    if (key.size() != saved_key_.size()) return false;
    const KeyPrefix a = LoadKeyPrefix(key);
    const KeyPrefix b = LoadKeyPrefix(saved_key_);
    if (a.high != b.high || a.low != b.low) return false;
    return key.size() <= 16 || std::memcmp(key.data() + 16, saved_key_.data() + 16, key.size() - 16) == 0;
  }
  // Forward: the first visible, live entry at or after iter_, skipping
  // entries of saved_key_ when `skipping`. Versions of one key are passed
  // one by one up to kMaxSequentialSkips in a row, then by a seek past
  // them (RocksDB's max_sequential_skip_in_iterations): a key updated
  // thousands of times since the memtable was switched would otherwise cost
  // every scan that crosses it a step per version.
  void FindNextUserEntry(bool skipping) {
    int skipped = 0;
    while (iter_->Valid()) {
      if (iter_->sequence() > sequence_) {
        // Newer than the reader: its versions the reader sees come later.
        if (++skipped > kMaxSequentialSkips) {
          skipped = 0;
          seek_key_.assign(iter_->user_key().data(), iter_->user_key().size());
          iter_->Seek(seek_key_, sequence_);
          // At a version the reader sees, or past the key.
          if (iter_->Valid()) {
            const int c = comparator_->Compare(iter_->user_key(), seek_key_);
            if (c < 0 || (c == 0 && iter_->sequence() > sequence_)) return StopOutOfOrder();
          }
        } else {
          iter_->Next();
        }
        continue;
      }
      if (skipping && IsKeyToSkip()) {
        if (++skipped > kMaxSequentialSkips) {
          skipped = 0;
          // To its versions of sequence 0 (an ingested file's), if any, or
          // past the key.
          iter_->Seek(saved_key_, 0);
          while (iter_->Valid() && iter_->sequence() == 0 && IsKeyToSkip()) iter_->Next();
          if (iter_->Valid() && comparator_->Compare(iter_->user_key(), saved_key_) <= 0) return StopOutOfOrder();
        } else {
          iter_->Next();
        }
        continue;
      }
      skipped = 0;
      if (iter_->type() == ValueType::kDeletion) {
        SaveKeyToSkip();  // hide older versions
        skipping = true;
        iter_->Next();
        continue;
      }
      valid_ = true;
      return;
    }
    valid_ = false;
    saved_key_.clear();
  }

  // Backward: walks back over the entries of one key at a time, keeping the
  // newest visible one; iter_ ends before them. Past kMaxSequentialSkips
  // entries in a row of one key it seeks instead: over versions newer than
  // the reader, to before the key's first entry; over visible versions,
  // forward to the newest and then before the first.
  void FindPrevUserEntry() {
    ValueType type = ValueType::kDeletion;
    bool have_key = false;  // saved_key_ is the last visible entry's key (live or deleted, as `type` says)
    int visible_run = 0;    // visible entries of saved_key_ in a row
    int invisible_run = 0;  // entries newer than the reader in a row
    while (iter_->Valid()) {
      const Slice key = iter_->user_key();
      if (type != ValueType::kDeletion && comparator_->Compare(key, saved_key_) < 0) {
        break;  // saved_key_ has a live value and iter_ is before its entries
      }
      if (iter_->sequence() > sequence_) {
        if (++invisible_run > kMaxSequentialSkips) {
          // The entries of `key` before this one are newer still.
          seek_key_.assign(key.data(), key.size());
          if (!StepBeforeKey(seek_key_)) return;
          invisible_run = 0;
        } else {
          iter_->Prev();
        }
        continue;
      }
      invisible_run = 0;
      if (have_key && KeyEquals(key, saved_key_)) {
        if (++visible_run > kMaxSequentialSkips) {
          seek_key_ = saved_key_;
          type = NewestVisibleVersionOf(seek_key_);
          have_key = type != ValueType::kDeletion;
          if (!StepBeforeKey(seek_key_)) return;
          visible_run = 0;
          continue;
        }
      } else {
        saved_key_.assign(key.data(), key.size());
        have_key = true;
        visible_run = 1;
      }
      type = iter_->type();
      if (type == ValueType::kDeletion) {
        saved_value_.clear();
      } else {
        saved_value_.assign(iter_->value().data(), iter_->value().size());
      }
      iter_->Prev();
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

  // Equal user keys; inline bytes when bytewise.
  bool KeyEquals(const Slice& a, const std::string& b) const {
    if (bytewise_) return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size()) == 0;
    return comparator_->Compare(a, b) == 0;
  }
  // Backward: iter_ to the last entry before `key`'s entries (which it has).
  // False (the scan stopped, StopOutOfOrder) if it is not before them.
  bool StepBeforeKey(const std::string& key) {
    iter_->Seek(key, kMaxSequenceNumber);
    if (iter_->Valid()) iter_->Prev();
    if (iter_->Valid() && comparator_->Compare(iter_->user_key(), key) >= 0) {
      StopOutOfOrder();
      return false;
    }
    return true;
  }
  // A seek that did not move past what the scan had passed: the sources'
  // entries are out of order (a damaged block read without its checksum).
  // Stepping on could loop forever; the iterator stops with Corruption.
  void StopOutOfOrder() {
    status_ = Status::Corruption("entries out of order (a damaged block read without its checksum?)");
    valid_ = false;
    forward_ = true;
    saved_key_.clear();
    saved_value_.clear();
  }
  // Backward: the type of `key`'s newest version visible at sequence_
  // (kDeletion if none), found by a forward seek, with saved_key_ and
  // saved_value_ set as FindPrevUserEntry's walk would have left them.
  // Leaves iter_ somewhere among or after the key's entries.
  ValueType NewestVisibleVersionOf(const std::string& key) {
    iter_->Seek(key, sequence_);
    if (iter_->Valid() && comparator_->Compare(iter_->user_key(), key) == 0 &&
        iter_->type() == ValueType::kValue) {
      saved_key_ = key;
      saved_value_.assign(iter_->value().data(), iter_->value().size());
      return ValueType::kValue;
    }
    saved_key_.clear();
    saved_value_.clear();
    return ValueType::kDeletion;
  }

  const Comparator* const comparator_;
  const bool bytewise_;
  // What iter_ reads (memtables, the version and its tables): declared
  // before iter_, so destroyed after it.
  std::vector<std::shared_ptr<const void>> pins_;
  const IteratorObserver* observer_;  // may be null; kept alive by pins_ or probe_
  uint64_t moves_ = 0;                // seeks and steps
  // NewProbingDBIterator: the read view -- looks seek targets up, builds
  // iter_ when it is first needed, renews on Refresh (declared before
  // iter_: the merge reads what it pins).
  std::unique_ptr<SeekProbe> probe_;
  bool probed_ = false;  // positioned by a probe: at saved_key_, saved_value_
  std::unique_ptr<InternalIterator> iter_;
  SequenceNumber sequence_;
  bool valid_ = false;
  bool forward_ = true;
  std::string saved_key_;    // forward: key to skip; reverse: current key
  uint32_t saved_hash_ = 0;  // forward: bloom::KeyHash(saved_key_) if saved_hash_known_
  bool saved_hash_known_ = false;
  std::string saved_value_;  // reverse: current value
  std::string seek_key_;     // a key whose versions are passed (by a seek past kMaxSequentialSkips)
  Status status_;
  // The windows (see OpenWindows); meaningful while in_window_. Made by the
  // first OpenWindows: an iterator that only seeks (and reads an entry or
  // two) does not allocate their ~1.5 KiB -- which would also keep the
  // iterator itself out of malloc's per-thread cache of small blocks.
  struct WindowSet {
    BlockWindow blocks[kMaxWindows];
    Window windows[kMaxWindows];
    uint32_t taken[kMaxWindows] = {};  // entries taken from each window (the current one included)
    uint8_t order[kMaxWindows] = {};   // windows by their next entries, smallest first
  };
  bool in_window_ = false;
  size_t window_count_ = 0;
  std::unique_ptr<WindowSet> window_set_;
  size_t current_window_ = 0;              // the window of the current entry
  keyset::EntryView entry_;                // the current entry, read in a window
  KeyPrefix prefix_;                       // of its key, when bytewise_
};

// The keys of an iterator between two bounds; see NewBoundedIterator.
class BoundedIterator final : public Iterator {
 public:
  BoundedIterator(const Comparator* comparator, std::unique_ptr<Iterator> iter, const Slice* lower,
                  const Slice* upper)
      : comparator_(comparator),
        iter_(std::move(iter)),
        has_lower_(lower != nullptr),
        has_upper_(upper != nullptr),
        lower_(lower != nullptr ? lower->ToString() : std::string()),
        upper_(upper != nullptr ? upper->ToString() : std::string()) {}

  bool Valid() const override { return valid_; }
  Slice key() const override { return iter_->key(); }
  Slice value() const override { return iter_->value(); }
  Status status() const override { return iter_->status(); }

  void SeekToFirst() override {
    if (has_lower_) {
      iter_->Seek(lower_);
    } else {
      iter_->SeekToFirst();
    }
    Check();
  }
  void Seek(const Slice& target) override {
    if (has_lower_ && comparator_->Compare(target, lower_) < 0) {
      iter_->Seek(lower_);
    } else {
      iter_->Seek(target);
    }
    Check();
  }
  void SeekToLast() override {
    if (has_upper_) {
      iter_->Seek(upper_);
      if (iter_->Valid()) {
        iter_->Prev();
      } else if (iter_->status().ok()) {
        iter_->SeekToLast();  // every key is below the upper bound
      }
    } else {
      iter_->SeekToLast();
    }
    Check();
  }
  void Next() override {
    assert(valid_);
    iter_->Next();
    Check();
  }
  void Prev() override {
    assert(valid_);
    iter_->Prev();
    Check();
  }
  Status Refresh() override {
    Status s = iter_->Refresh();
    if (s.ok()) valid_ = false;
    return s;
  }

 private:
  void Check() {
    valid_ = iter_->Valid() && (!has_lower_ || comparator_->Compare(iter_->key(), lower_) >= 0) &&
             (!has_upper_ || comparator_->Compare(iter_->key(), upper_) < 0);
  }

  const Comparator* const comparator_;
  const std::unique_ptr<Iterator> iter_;
  const bool has_lower_, has_upper_;
  const std::string lower_, upper_;
  bool valid_ = false;
};

}  // namespace

std::unique_ptr<Iterator> NewBoundedIterator(const Comparator* comparator, std::unique_ptr<Iterator> iter,
                                             const Slice* lower, const Slice* upper) {
  if (lower == nullptr && upper == nullptr) return iter;
  return std::make_unique<BoundedIterator>(comparator, std::move(iter), lower, upper);
}

std::unique_ptr<Iterator> NewDBIterator(const Comparator* comparator, std::unique_ptr<InternalIterator> internal,
                                        SequenceNumber sequence, std::vector<std::shared_ptr<const void>> pins,
                                        const IteratorObserver* observer) {
  return std::make_unique<DBIter>(comparator, std::move(internal), sequence, std::move(pins), observer);
}

std::unique_ptr<Iterator> NewProbingDBIterator(const Comparator* comparator, std::unique_ptr<SeekProbe> probe) {
  return std::make_unique<DBIter>(comparator, std::move(probe));
}

}  // namespace jigsaw
