#include "db/db_iter.h"

#include <cassert>
#include <cstring>
#include <string>

#include "format/keyset_v2.h"
#include "util/key_prefix.h"

namespace jigsaw {

Iterator::~Iterator() = default;

namespace {

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
  ~DBIter() override {
    if (observer_ != nullptr) observer_->Closed(moves_);
  }

  bool Valid() const override { return valid_; }
  Slice key() const override { return !forward_ ? Slice(saved_key_) : in_window_ ? entry_.key : iter_->user_key(); }
  Slice value() const override {
    return !forward_ ? Slice(saved_value_) : in_window_ ? entry_.value : iter_->value();
  }
  Status status() const override { return status_.ok() ? iter_->status() : status_; }

  void SeekToFirst() override {
    ++moves_;
    in_window_ = false;
    forward_ = true;
    saved_value_.clear();
    iter_->SeekToFirst();
    FindNextUserEntry(false);
  }
  void Seek(const Slice& target) override {
    ++moves_;
    in_window_ = false;
    forward_ = true;
    saved_value_.clear();
    iter_->Seek(target, sequence_);
    FindNextUserEntry(false);
  }
  void SeekToLast() override {
    ++moves_;
    in_window_ = false;
    forward_ = false;
    saved_value_.clear();
    iter_->SeekToLast();
    FindPrevUserEntry();
  }

  void Next() override {
    assert(valid_);
    ++moves_;
    if (in_window_) {
      if (StepInWindow()) return;
      // iter_ past what was read in the window, then on as after any entry
      // of the current key.
      in_window_ = false;
      saved_key_.assign(entry_.key.data(), entry_.key.size());
      saved_hash_known_ = false;
      iter_->SkipRun(taken_ + 1);
      FindNextUserEntry(true);
      OpenWindow();
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
    OpenWindow();
  }

  void Prev() override {
    ++moves_;
    assert(valid_);
    LeaveWindow();
    if (forward_) {
      // Move iter_ before every entry of the current key (by a seek to its
      // first entry past kMaxSequentialSkips of them).
      saved_key_.assign(iter_->user_key().data(), iter_->user_key().size());
      for (int steps = 1;; ++steps) {
        if (steps > kMaxSequentialSkips) {
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
      }
      forward_ = false;
    }
    FindPrevUserEntry();
  }

 private:
  static constexpr int kMaxSequentialSkips = 8;

  // Forward scans read the entries of a KeySet block in place while they
  // are what the merge below would return (InternalIterator::OpenWindow):
  // each one right after the last, before every other source's next
  // entry, a value visible at sequence_, of a key other than the last. A
  // step then loads one entry from the block and compares its key twice,
  // instead of passing through every layer of iterators; iter_ stays at
  // the entry the window opened on and catches up (SkipRun) when the
  // window closes. Windows open after a Next, so a Seek followed by a read
  // or two costs nothing more.
  void OpenWindow() {
    if (!valid_ || !iter_->OpenWindow(&window_)) return;
    sections_.values = window_.values;
    sections_.value_buffer_size = window_.value_buffer_size;
    sections_.keyset = window_.keyset;
    sections_.keyset_size = window_.keyset_size;
    if (!sections_.LoadAt(window_.offset, &entry_)) return;
    if (bytewise_) {
      prefix_ = LoadKeyPrefix(entry_.key);
      if (window_.limited) limit_prefix_ = LoadKeyPrefix(window_.limit_key);
    }
    taken_ = 0;
    in_window_ = true;
  }
  // Moves to the window's next entry if the merge would return it next.
  bool StepInWindow() {
    namespace v2 = keyset::v2;
    if (window_.remaining == 0 || entry_.next != v2::EntrySize(entry_.height, entry_.key.size())) return false;
    v2::EntryView next;
    if (!sections_.LoadNext(entry_, &next) || TagType(next.tag) != ValueType::kValue ||
        TagSequence(next.tag) > sequence_) {
      return false;
    }
    if (bytewise_) {
      const KeyPrefix next_prefix = LoadKeyPrefix(next.key);
      // Sorted after the current entry: a key that is not greater is equal.
      if (CompareWithPrefixes(next.key, next_prefix, entry_.key, prefix_) <= 0) return false;
      if (window_.limited) {
        const int r = CompareWithPrefixes(next.key, next_prefix, window_.limit_key, limit_prefix_);
        if (r > 0 || (r == 0 && next.tag <= window_.limit_tag)) return false;
      }
      prefix_ = next_prefix;
    } else {
      if (comparator_->Compare(next.key, entry_.key) <= 0) return false;
      if (window_.limited &&
          CompareInternal(comparator_, next.key, next.tag, window_.limit_key, window_.limit_tag) >= 0) {
        return false;
      }
    }
    entry_ = next;
    --window_.remaining;
    ++taken_;
    return true;
  }
  // Moves iter_ to the window's current entry and closes the window.
  void LeaveWindow() {
    if (!in_window_) return;
    in_window_ = false;
    if (taken_ > 0) iter_->SkipRun(taken_);
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
        } else {
          iter_->Next();
        }
        continue;
      }
      if (skipping && IsKeyToSkip()) {
        if (++skipped > kMaxSequentialSkips) {
          skipped = 0;
          iter_->Seek(saved_key_, 0);  // its oldest possible version
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
          StepBeforeKey(seek_key_);
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
          StepBeforeKey(seek_key_);
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
  void StepBeforeKey(const std::string& key) {
    iter_->Seek(key, kMaxSequenceNumber);
    if (iter_->Valid()) iter_->Prev();
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
  const IteratorObserver* const observer_;  // may be null; kept alive by pins_
  uint64_t moves_ = 0;                      // seeks and steps
  std::unique_ptr<InternalIterator> iter_;
  const SequenceNumber sequence_;
  bool valid_ = false;
  bool forward_ = true;
  std::string saved_key_;    // forward: key to skip; reverse: current key
  uint32_t saved_hash_ = 0;  // forward: bloom::KeyHash(saved_key_) if saved_hash_known_
  bool saved_hash_known_ = false;
  std::string saved_value_;  // reverse: current value
  std::string seek_key_;     // a key whose versions are passed (by a seek past kMaxSequentialSkips)
  Status status_;
  // The window (see OpenWindow); its fields are meaningful while in_window_.
  bool in_window_ = false;
  BlockWindow window_;
  keyset::v2::Sections sections_;
  keyset::v2::EntryView entry_;  // the current entry, read in the window
  KeyPrefix prefix_;             // of its key, when bytewise_
  KeyPrefix limit_prefix_;       // of window_.limit_key, when bytewise_
  uint32_t taken_ = 0;           // entries read in the window after the one it opened on
};

}  // namespace

std::unique_ptr<Iterator> NewDBIterator(const Comparator* comparator, std::unique_ptr<InternalIterator> internal,
                                        SequenceNumber sequence, std::vector<std::shared_ptr<const void>> pins,
                                        const IteratorObserver* observer) {
  return std::make_unique<DBIter>(comparator, std::move(internal), sequence, std::move(pins), observer);
}

}  // namespace jigsaw
