#include "table/iterator_wrappers.h"

#include <utility>

namespace jigsaw {

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
  // A run is found and skipped without decoding an entry; timed exactly.
  uint32_t PeekRun(const Slice* limit_key, uint64_t limit_tag, uint32_t max_entries, EntryRun* run) override {
    return phase_->RunExact([&] { return base_->PeekRun(limit_key, limit_tag, max_entries, run); });
  }
  bool OpenWindow(BlockWindow* window) override {
    return phase_->RunExact([&] { return base_->OpenWindow(window); });
  }
  void SkipRun(uint32_t n) override {
    phase_->RunExact([&] { base_->SkipRun(n); });
    Moved();
  }

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

// ---------------------------------------------------------------------------

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

std::unique_ptr<InternalIterator> NewTimedIterator(std::unique_ptr<InternalIterator> base, SampledPhase* phase) {
  return std::make_unique<TimedIterator>(std::move(base), phase);
}

std::unique_ptr<InternalIterator> NewKeyRangeIterator(const Comparator* comparator,
                                                      std::unique_ptr<InternalIterator> base,
                                                      const std::string* after, const std::string* upto) {
  return std::make_unique<KeyRangeIterator>(comparator, std::move(base), after, upto);
}

}  // namespace jigsaw
