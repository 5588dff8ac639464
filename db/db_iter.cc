#include "db/db_iter.h"

#include <cassert>
#include <cstring>
#include <string>

#include "util/key_prefix.h"

namespace jigsaw {

Iterator::~Iterator() = default;

namespace {

class DBIter final : public Iterator {
 public:
  DBIter(const Comparator* comparator, std::unique_ptr<InternalIterator> internal, SequenceNumber sequence,
         std::vector<std::shared_ptr<const void>> pins)
      : comparator_(comparator),
        bytewise_(comparator == BytewiseComparator()),
        pins_(std::move(pins)),
        iter_(std::move(internal)),
        sequence_(sequence) {}

  bool Valid() const override { return valid_; }
  Slice key() const override { return forward_ ? iter_->user_key() : Slice(saved_key_); }
  Slice value() const override { return forward_ ? iter_->value() : Slice(saved_value_); }
  Status status() const override { return status_.ok() ? iter_->status() : status_; }

  void SeekToFirst() override {
    forward_ = true;
    saved_value_.clear();
    iter_->SeekToFirst();
    FindNextUserEntry(false);
  }
  void Seek(const Slice& target) override {
    forward_ = true;
    saved_value_.clear();
    iter_->Seek(target, sequence_);
    FindNextUserEntry(false);
  }
  void SeekToLast() override {
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

  const Comparator* const comparator_;
  const bool bytewise_;
  // What iter_ reads (memtables, the version and its tables): declared
  // before iter_, so destroyed after it.
  std::vector<std::shared_ptr<const void>> pins_;
  std::unique_ptr<InternalIterator> iter_;
  const SequenceNumber sequence_;
  bool valid_ = false;
  bool forward_ = true;
  std::string saved_key_;    // forward: key to skip; reverse: current key
  uint32_t saved_hash_ = 0;  // forward: bloom::KeyHash(saved_key_) if saved_hash_known_
  bool saved_hash_known_ = false;
  std::string saved_value_;  // reverse: current value
  Status status_;
};

}  // namespace

std::unique_ptr<Iterator> NewDBIterator(const Comparator* comparator, std::unique_ptr<InternalIterator> internal,
                                        SequenceNumber sequence, std::vector<std::shared_ptr<const void>> pins) {
  return std::make_unique<DBIter>(comparator, std::move(internal), sequence, std::move(pins));
}

}  // namespace jigsaw
