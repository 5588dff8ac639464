// ConcatenatingIterator (table/concatenating_iterator.h) over children held
// in vectors: random moves in both directions and seeks against the model,
// with children cut inside a key's versions and empty children; the source's
// calls (one child at a time, read-ahead only forwards); errors.
#include "table/concatenating_iterator.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "tests/support/block_test_util.h"

namespace jigsaw {
namespace {

using test::TestEntry;

constexpr size_t kNever = ~size_t{0};

struct Child {
  std::vector<TestEntry> entries;
  size_t fail_at = kNever;  // the child's iterator fails on reaching this entry
  bool fail_open = false;   // OpenChild fails
};

// What the iterator asked of its source.
struct SourceLog {
  std::vector<size_t> opened;      // OpenChild calls
  std::vector<size_t> read_ahead;  // WillReadForwardFrom calls
  int live_children = 0;           // child iterators not yet destroyed
};

// Over one child's entries; Corruption on reaching entry `fail_at`.
class VectorIterator final : public InternalIterator {
 public:
  VectorIterator(const Child* child, SourceLog* log) : child_(child), log_(log) { ++log_->live_children; }
  ~VectorIterator() override { --log_->live_children; }

  void SeekToFirst() override { Go(0); }
  void SeekToLast() override { Go(child_->entries.empty() ? 0 : child_->entries.size() - 1); }
  void Seek(const Slice& user_key, SequenceNumber sequence) override {
    Go(test::ModelSeek(child_->entries, user_key.ToString(), sequence));
  }
  void Next() override { Go(pos_ + 1); }
  void Prev() override { Go(pos_ == 0 ? child_->entries.size() : pos_ - 1); }
  Status status() const override { return status_; }

 private:
  void Go(size_t pos) {
    pos_ = pos;
    if (pos == child_->fail_at) status_ = Status::Corruption("damaged entry");
    valid_ = status_.ok() && pos < child_->entries.size();
    if (!valid_) return;
    const TestEntry& e = child_->entries[pos];
    user_key_ = e.user_key;
    value_ = e.value;
    tag_ = PackTag(e.sequence, e.type);
  }

  const Child* const child_;
  SourceLog* const log_;
  size_t pos_ = 0;
  Status status_;
};

class VectorSource {
 public:
  VectorSource(const std::vector<Child>* children, SourceLog* log) : children_(children), log_(log) {}

  size_t num_children() const { return children_->size(); }
  size_t FirstCandidate(const Slice& user_key) const {
    for (size_t i = 0; i < children_->size(); ++i) {
      const auto& entries = (*children_)[i].entries;
      if (!entries.empty() && Slice(entries.back().user_key).compare(user_key) >= 0) return i;
    }
    return children_->size();
  }
  Status OpenChild(size_t i, std::unique_ptr<InternalIterator>* child) {
    EXPECT_LT(i, children_->size());
    EXPECT_EQ(log_->live_children, 0) << "child " << i << " opened before the previous one was destroyed";
    log_->opened.push_back(i);
    if ((*children_)[i].fail_open) return Status::IOError("child " + std::to_string(i));
    *child = std::make_unique<VectorIterator>(&(*children_)[i], log_);
    return Status::OK();
  }
  void WillReadForwardFrom(size_t i) { log_->read_ahead.push_back(i); }

 private:
  const std::vector<Child>* const children_;
  SourceLog* const log_;
};

std::unique_ptr<InternalIterator> Concatenate(const std::vector<Child>* children, SourceLog* log,
                                              SampledPhase* decode = nullptr) {
  return std::make_unique<ConcatenatingIterator<VectorSource>>(decode, children, log);
}

// Deals the model's entries, in order, over children cut at random places
// (inside a key's versions too), with empty children among them.
std::vector<Child> Deal(const std::vector<TestEntry>& model, std::mt19937_64* rng) {
  std::vector<Child> children(1);
  for (const TestEntry& e : model) {
    while ((*rng)() % 40 == 0) children.emplace_back();
    children.back().entries.push_back(e);
  }
  if ((*rng)() % 2 == 0) children.emplace_back();  // an empty last child
  return children;
}

TEST(ConcatenatingIteratorTest, RandomMovesMatchTheModel) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    std::mt19937_64 rng(seed);
    const std::vector<TestEntry> model = test::RandomEntries(&rng, 600, 4, 8);
    const std::vector<Child> children = Deal(model, &rng);
    SourceLog log;
    SampledPhase decode;
    auto it = Concatenate(&children, &log, seed % 2 == 0 ? &decode : nullptr);
    size_t at = 0;  // model position; model.size() = not valid
    it->SeekToFirst();
    for (int step = 0; step < 4000; ++step) {
      ASSERT_EQ(it->Valid(), at < model.size()) << "seed " << seed << " step " << step;
      if (at < model.size()) {
        ASSERT_EQ(it->user_key().ToString(), model[at].user_key) << "seed " << seed << " step " << step;
        ASSERT_EQ(it->sequence(), model[at].sequence) << "seed " << seed << " step " << step;
        ASSERT_EQ(it->value().ToString(), model[at].value) << "seed " << seed << " step " << step;
      }
      const uint64_t op = rng() % 20;
      if (op < 9 && at < model.size()) {
        it->Next();
        ++at;
      } else if (op < 17 && at < model.size()) {
        it->Prev();
        at = at == 0 ? model.size() : at - 1;
      } else if (op < 19) {
        // A key of the model at any snapshot, or one between (or after) them.
        std::string key = model[rng() % model.size()].user_key;
        if (rng() % 4 == 0) key += static_cast<char>('a' + rng() % 6);
        const SequenceNumber sequence = rng() % 2 == 0 ? kMaxSequenceNumber : rng() % 1000000;
        it->Seek(key, sequence);
        at = test::ModelSeek(model, key, sequence);
      } else if (rng() % 2 == 0) {
        it->SeekToFirst();
        at = 0;
      } else {
        it->SeekToLast();
        at = model.size() - 1;
      }
    }
    ASSERT_TRUE(it->status().ok());
    it.reset();
    EXPECT_EQ(log.live_children, 0);
  }
}

TEST(ConcatenatingIteratorTest, NoChildrenOrOnlyEmptyOnesIsEmpty) {
  for (size_t n : {0, 1, 3}) {
    const std::vector<Child> children(n);
    SourceLog log;
    auto it = Concatenate(&children, &log);
    it->SeekToFirst();
    EXPECT_FALSE(it->Valid());
    it->SeekToLast();
    EXPECT_FALSE(it->Valid());
    it->Seek("a", kMaxSequenceNumber);
    EXPECT_FALSE(it->Valid());
    EXPECT_TRUE(it->status().ok());
  }
}

// A key's versions continue from child 0 into child 1: a seek for an older
// version lands on it there, not on child 1's first entry.
TEST(ConcatenatingIteratorTest, SeekContinuesIntoTheNextChildAtTheTarget) {
  std::vector<Child> children(2);
  children[0].entries = {{"k", 9, ValueType::kValue, "9"}, {"k", 8, ValueType::kValue, "8"}};
  children[1].entries = {{"k", 7, ValueType::kValue, "7"}, {"k", 6, ValueType::kValue, "6"}};
  SourceLog log;
  auto it = Concatenate(&children, &log);
  it->Seek("k", 6);
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->sequence(), 6u);
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->sequence(), 7u);
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->sequence(), 8u);
  EXPECT_EQ(log.read_ahead, std::vector<size_t>{});  // no read-ahead on the way to a target, nor backwards
}

// The source opens one child at a time (OpenChild checks the previous one is
// gone) and hears of read-ahead only when a child is to be read from its
// start: SeekToFirst and stepping forward.
TEST(ConcatenatingIteratorTest, ReadAheadOnlyWhenReadingForwardFromAChildsStart) {
  std::vector<Child> children(4);
  for (int i = 0; i < 8; ++i) {
    children[i / 2].entries.push_back({std::string(1, static_cast<char>('a' + i)), 1, ValueType::kValue, ""});
  }
  SourceLog log;
  auto it = Concatenate(&children, &log);
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  EXPECT_EQ(n, 8);
  EXPECT_EQ(log.opened, (std::vector<size_t>{0, 1, 2, 3}));
  EXPECT_EQ(log.read_ahead, (std::vector<size_t>{0, 1, 2, 3}));
  log.opened.clear();
  log.read_ahead.clear();
  for (it->SeekToLast(); it->Valid(); it->Prev()) --n;
  EXPECT_EQ(n, 0);
  EXPECT_EQ(log.opened, (std::vector<size_t>{3, 2, 1, 0}));
  EXPECT_TRUE(log.read_ahead.empty());
  log.opened.clear();
  it->Seek("e", kMaxSequenceNumber);  // child 2's first key
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->user_key().ToString(), "e");
  EXPECT_EQ(log.opened, std::vector<size_t>{2});
  EXPECT_TRUE(log.read_ahead.empty());
  it->Seek("z", kMaxSequenceNumber);  // past every child: nothing opened
  EXPECT_FALSE(it->Valid());
  EXPECT_EQ(log.opened, std::vector<size_t>{2});
}

std::vector<Child> ThreeChildrenOfThree() {
  std::vector<Child> children(3);
  for (int i = 0; i < 9; ++i) {
    children[i / 3].entries.push_back({std::string(1, static_cast<char>('a' + i)), 1, ValueType::kValue, ""});
  }
  return children;
}

// A child that fails ends the iteration there, in either direction, for
// good: re-positioning does not revive the iterator and status() keeps the
// error.
TEST(ConcatenatingIteratorTest, ChildErrorEndsTheIteration) {
  for (bool forward : {true, false}) {
    std::vector<Child> children = ThreeChildrenOfThree();
    children[1].fail_at = 1;  // "e"
    SourceLog log;
    auto it = Concatenate(&children, &log);
    std::string seen;
    if (forward) {
      for (it->SeekToFirst(); it->Valid(); it->Next()) seen += it->user_key().ToString();
      EXPECT_EQ(seen, "abcd");
    } else {
      for (it->SeekToLast(); it->Valid(); it->Prev()) seen += it->user_key().ToString();
      EXPECT_EQ(seen, "ihgf");
    }
    EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
    EXPECT_EQ(log.live_children, 0);  // the failed child is released
    it->SeekToFirst();
    EXPECT_FALSE(it->Valid());
    it->Seek("h", kMaxSequenceNumber);
    EXPECT_FALSE(it->Valid());
    EXPECT_TRUE(it->status().IsCorruption());
  }
}

TEST(ConcatenatingIteratorTest, ChildThatCannotBeOpenedEndsTheIteration) {
  std::vector<Child> children = ThreeChildrenOfThree();
  children[1].fail_open = true;
  SourceLog log;
  auto it = Concatenate(&children, &log);
  std::string seen;
  for (it->SeekToFirst(); it->Valid(); it->Next()) seen += it->user_key().ToString();
  EXPECT_EQ(seen, "abc");
  EXPECT_TRUE(it->status().IsIOError()) << it->status().ToString();
  EXPECT_EQ(log.opened, (std::vector<size_t>{0, 1}));
  it->SeekToLast();  // child 2 is intact, but the iteration has failed
  EXPECT_FALSE(it->Valid());
  EXPECT_EQ(log.opened, (std::vector<size_t>{0, 1}));
  EXPECT_TRUE(it->status().IsIOError());

  // A seek straight into the child that cannot be opened.
  SourceLog log2;
  auto seek = Concatenate(&children, &log2);
  seek->Seek("e", kMaxSequenceNumber);
  EXPECT_FALSE(seek->Valid());
  EXPECT_TRUE(seek->status().IsIOError());
}

}  // namespace
}  // namespace jigsaw
