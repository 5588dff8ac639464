// ConcatenatingIterator: one InternalIterator over a sequence of children
// whose entries follow one another in internal-key order -- the tables of a
// level (version/level_iterator.h), the blocks of an SSD table (ssd/table.h).
// Children are opened one at a time, when the iterator moves into them.
//
// The children come from a source, a type the iterator is instantiated with
// and holds by value: no allocation of its own, no virtual call to reach it.
#ifndef JIGSAW_TABLE_CONCATENATING_ITERATOR_H_
#define JIGSAW_TABLE_CONCATENATING_ITERATOR_H_

#include <cassert>
#include <concepts>
#include <cstddef>
#include <memory>
#include <utility>

#include "format/internal_iterator.h"
#include "util/profile_clock.h"

namespace jigsaw {

// The children of a concatenation, numbered 0 .. num_children() - 1: every
// entry of child i sorts before every entry of child i + 1 (a user key's
// versions may continue from one child into the next).
//
//   num_children()          read once, when the iterator is made
//   FirstCandidate(key)     the first child whose largest user key is >= key
//                           (num_children() if none): where a Seek starts
//   OpenChild(i, &child)    sets child to a new, unpositioned iterator over
//                           child i (i < num_children()); a non-OK status
//                           ends the iteration (it becomes status()). The
//                           previous child's iterator is destroyed first, so
//                           a child may depend on state the source keeps
//                           until its next OpenChild or its destruction (a
//                           pinned block, a read buffer).
//   WillReadForwardFrom(i)  child i is about to be opened to be read from its
//                           first entry on (SeekToFirst, or Next stepping
//                           into it): where a source reads ahead. Not called
//                           on the way to a Seek target, nor backwards.
//
// A source is used by the one thread that uses its iterator.
template <typename S>
concept ConcatenationSource =
    requires(S& source, const S& const_source, size_t i, const Slice& key, std::unique_ptr<InternalIterator>* child) {
      { const_source.num_children() } -> std::convertible_to<size_t>;
      { const_source.FirstCandidate(key) } -> std::convertible_to<size_t>;
      { source.OpenChild(i, child) } -> std::same_as<Status>;
      source.WillReadForwardFrom(i);
    };

// The concatenation of a Source's children. The iterator owns its source and
// destroys its current child before it.
//
// `decode` (may be null; must outlive the iterator): the phase charged with
// what a forward pass costs the children's format -- positioning each child
// at its first entry timed exactly, steps forward sampled (the compaction
// profile's decode phase). What opening a child costs the format is the
// source's to time.
//
// Errors: the first error -- a child that cannot be opened, or a child that
// stops with a non-OK status() -- ends the iteration for good: the iterator
// is !Valid() from then on, whatever it is asked to do, and status() returns
// that error.
template <ConcatenationSource Source>
class ConcatenatingIterator final : public InternalIterator {
 public:
  // `args` construct the source.
  template <typename... Args>
  explicit ConcatenatingIterator(SampledPhase* decode, Args&&... args)
      : source_(std::forward<Args>(args)...), num_children_(source_.num_children()), decode_(decode) {}

  void SeekToFirst() override {
    if (status_.ok() && num_children_ > 0) source_.WillReadForwardFrom(0);
    Open(0);
    if (child_ != nullptr) Exact([&] { child_->SeekToFirst(); });
    SkipForward();
  }
  void SeekToLast() override {
    Open(num_children_ == 0 ? 0 : num_children_ - 1);
    if (child_ != nullptr) child_->SeekToLast();
    SkipBackward();
  }
  void Seek(const Slice& user_key, SequenceNumber sequence) override {
    // The target's versions may continue into the next child: seek there
    // too, not from its first entry.
    for (size_t i = source_.FirstCandidate(user_key);; ++i) {
      Open(i);
      if (child_ == nullptr) break;
      child_->Seek(user_key, sequence);
      if (child_->Valid() || !child_->status().ok()) break;
    }
    SkipForward();
  }
  void Next() override {
    assert(Valid());
    if (decode_ != nullptr) {
      decode_->Run([&] { child_->Next(); });
    } else {
      child_->Next();
    }
    if (child_->Valid()) {
      SetEntryFrom(*child_);
    } else {
      SkipForward();
    }
  }
  void Prev() override {
    assert(Valid());
    child_->Prev();
    if (child_->Valid()) {
      SetEntryFrom(*child_);
    } else {
      SkipBackward();
    }
  }
  Status status() const override { return status_; }
  // Runs stay inside one child (one block).
  uint32_t PeekRun(const Slice* limit_key, uint64_t limit_tag, uint32_t max_entries, EntryRun* run) override {
    assert(Valid());
    return child_->PeekRun(limit_key, limit_tag, max_entries, run);
  }
  // A window stays inside one child (one block).
  bool OpenWindow(BlockWindow* window) override {
    assert(Valid());
    return child_->OpenWindow(window);
  }
  void SkipRun(uint32_t n) override {
    assert(Valid());
    child_->SkipRun(n);
    if (child_->Valid()) {
      SetEntryFrom(*child_);
    } else {
      SkipForward();
    }
  }

 private:
  // Makes child i current (none if i is past the last child or the
  // iteration has failed).
  void Open(size_t i) {
    child_.reset();
    index_ = i;
    if (i >= num_children_ || !status_.ok()) return;
    Status s = source_.OpenChild(i, &child_);
    if (!s.ok()) Fail(s);
  }
  void Fail(const Status& s) {
    status_ = s;
    child_.reset();
  }
  template <typename Work>
  void Exact(Work&& work) {
    if (decode_ != nullptr) {
      decode_->RunExact(work);
    } else {
      work();
    }
  }
  // From a current child that may have run out: on to the next entry.
  void SkipForward() {
    while (child_ != nullptr && !child_->Valid()) {
      if (!child_->status().ok()) {
        Fail(child_->status());
        break;
      }
      if (index_ + 1 >= num_children_) break;
      source_.WillReadForwardFrom(index_ + 1);
      Open(index_ + 1);
      if (child_ != nullptr) Exact([&] { child_->SeekToFirst(); });
    }
    Publish();
  }
  void SkipBackward() {
    while (child_ != nullptr && !child_->Valid()) {
      if (!child_->status().ok()) {
        Fail(child_->status());
        break;
      }
      if (index_ == 0) break;
      Open(index_ - 1);
      if (child_ != nullptr) child_->SeekToLast();
    }
    Publish();
  }
  void Publish() {
    valid_ = child_ != nullptr && child_->Valid();
    if (valid_) SetEntryFrom(*child_);
  }

  Source source_;  // outlives child_ (declared first)
  const size_t num_children_;
  SampledPhase* const decode_;
  size_t index_ = 0;  // of child_
  std::unique_ptr<InternalIterator> child_;
  Status status_;  // the error that ended the iteration
};

}  // namespace jigsaw

#endif  // JIGSAW_TABLE_CONCATENATING_ITERATOR_H_
