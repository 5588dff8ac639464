// DBIter (db/db_iter.h) over a block of versions and deletions, against the
// model of what a reader at a snapshot sees: random moves in both
// directions and seeks.
#include "db/db_iter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "table/merging_iterator.h"
#include "tests/support/block_test_util.h"

namespace jigsaw {
namespace {

using test::TestEntry;

// Each key's newest version at or below `sequence`, deletions left out.
std::vector<std::pair<std::string, std::string>> Visible(const std::vector<TestEntry>& entries,
                                                         SequenceNumber sequence) {
  std::map<std::string, const TestEntry*> newest;
  for (const TestEntry& e : entries) {  // newest version of a key first
    if (e.sequence <= sequence) newest.emplace(e.user_key, &e);
  }
  std::vector<std::pair<std::string, std::string>> visible;
  for (const auto& [key, e] : newest) {
    if (e->type == ValueType::kValue) visible.emplace_back(key, e->value);
  }
  return visible;
}

// Keys short, or sharing their first 10 or 17 bytes (the iterator compares
// keys by their first 16 bytes as two words, then the rest).
class DBIterTest : public ::testing::TestWithParam<std::string> {};

// Builds a block of `format` from sorted `entries` into *buffer under
// `comparator` and opens it: its reader, or null (with a test failure).
std::unique_ptr<BlockReader> BuildAndOpen(BlockFormat format, const std::vector<TestEntry>& entries,
                                          test::AlignedBuffer* buffer,
                                          const Comparator* comparator = BytewiseComparator()) {
  BlockBuilderOptions build_options;
  build_options.comparator = comparator;
  BlockReadOptions read_options;
  read_options.comparator = comparator;
  size_t size = 0;
  std::unique_ptr<BlockReader> reader;
  Status s = test::BuildBlock(format, entries, build_options, buffer, &size);
  if (s.ok()) s = BlockReader::Open(format, Slice(buffer->data(), size), read_options, &reader);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return s.ok() ? std::move(reader) : nullptr;
}

// Moves `it` at random -- forward `next_weight` times in 20, else back,
// seeks to keys of `entries` (or just after them), to the first and the
// last -- checking it against `model` after each move.
void CheckRandomMoves(Iterator* it, const std::vector<std::pair<std::string, std::string>>& model,
                      const std::vector<TestEntry>& entries, std::mt19937_64* rng, int next_weight,
                      const std::string& context) {
  size_t at = 0;  // model position; model.size() = not valid
  it->SeekToFirst();
  for (int step = 0; step < 2000; ++step) {
    ASSERT_EQ(it->Valid(), at < model.size()) << context << " step " << step;
    if (at < model.size()) {
      ASSERT_EQ(it->key().ToString(), model[at].first) << context << " step " << step;
      ASSERT_EQ(it->value().ToString(), model[at].second) << context << " step " << step;
    }
    const uint64_t op = (*rng)() % 20;
    if (op < static_cast<uint64_t>(next_weight) && at < model.size()) {
      it->Next();
      ++at;
    } else if (op < 16 && at < model.size()) {
      it->Prev();
      at = at == 0 ? model.size() : at - 1;
    } else if (op < 19) {
      std::string target = entries[(*rng)() % entries.size()].user_key;
      if ((*rng)() % 3 == 0) target += 'c';
      it->Seek(target);
      at = 0;
      while (at < model.size() && model[at].first < target) ++at;
    } else if ((*rng)() % 2 == 0) {
      it->SeekToFirst();
      at = 0;
    } else {
      it->SeekToLast();
      at = model.size() - 1;
    }
  }
  EXPECT_TRUE(it->status().ok()) << context;
}

TEST_P(DBIterTest, RandomMovesShowWhatTheSnapshotSees) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    std::mt19937_64 rng(seed);
    // Few distinct keys, many versions each, one in three a deletion.
    std::vector<TestEntry> entries = test::RandomEntries(&rng, 800, 3, 10, /*deletion_every=*/3);
    for (TestEntry& e : entries) e.user_key = GetParam() + e.user_key;  // a common prefix keeps the order
    test::AlignedBuffer buffer;
    const std::unique_ptr<BlockReader> reader = BuildAndOpen(BlockFormat::kKeySet, entries, &buffer);
    ASSERT_NE(reader, nullptr);
    for (SequenceNumber sequence : {SequenceNumber{500000}, kMaxSequenceNumber}) {
      const auto model = Visible(entries, sequence);
      ASSERT_FALSE(model.empty());
      auto it = NewDBIterator(BytewiseComparator(), reader->NewIterator(), sequence, {});
      CheckRandomMoves(it.get(), model, entries, &rng, 8, "seed " + std::to_string(seed));
    }
  }
}

// Versions of one key spread over several blocks, merged: forward scans
// read stretches of one KeySet block in place (InternalIterator::
// OpenWindow) and must stop where another block's entry comes first, at a
// version the snapshot does not see, at a deletion and at an older version
// of the key just read -- and leave the merge where a reverse step or a
// seek expects it. A classic block among them offers no window.
// Bytewise order, but not BytewiseComparator(): the iterators' general
// paths (no key prefixes).
class SameOrderComparator final : public Comparator {
 public:
  int Compare(const Slice& a, const Slice& b) const override { return a.compare(b); }
  const char* Name() const override { return "test.SameOrder"; }
};

TEST_P(DBIterTest, MergedBlocksShowWhatTheSnapshotSees) {
  static const SameOrderComparator same_order;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const Comparator* comparator = seed % 2 == 0 ? &same_order : BytewiseComparator();
    std::mt19937_64 rng(seed);
    // More distinct keys than above, so that one block holds stretches of
    // consecutive ones; one in five entries a deletion.
    std::vector<TestEntry> entries = test::RandomEntries(&rng, 3000, 4, 10, /*deletion_every=*/5);
    for (TestEntry& e : entries) e.user_key = GetParam() + e.user_key;
    // Stretches of entries go to one block, then another.
    constexpr int kBlocks = 4;
    std::vector<TestEntry> parts[kBlocks];
    int block = 0;
    for (const TestEntry& e : entries) {
      if (rng() % 6 == 0) block = static_cast<int>(rng() % kBlocks);
      parts[block].push_back(e);
    }
    test::AlignedBuffer buffers[kBlocks];
    std::unique_ptr<BlockReader> readers[kBlocks];
    for (int b = 0; b < kBlocks; ++b) {
      const BlockFormat format = b == kBlocks - 1 ? BlockFormat::kClassic : BlockFormat::kKeySet;
      readers[b] = BuildAndOpen(format, parts[b], &buffers[b], comparator);
      ASSERT_NE(readers[b], nullptr);
    }
    for (SequenceNumber sequence : {SequenceNumber{500000}, kMaxSequenceNumber}) {
      const auto model = Visible(entries, sequence);
      ASSERT_FALSE(model.empty());
      std::vector<std::unique_ptr<InternalIterator>> children;
      for (auto& reader : readers) children.push_back(reader->NewIterator());
      auto it = NewDBIterator(comparator, NewMergingIterator(comparator, std::move(children)), sequence, {});
      // Mostly forward, for long scans.
      CheckRandomMoves(it.get(), model, entries, &rng, 14,
                       "seed " + std::to_string(seed) + " comparator " + comparator->Name());
    }
  }
}

// Forwards to a block's iterator, counting the steps taken through it.
class CountingIterator final : public InternalIterator {
 public:
  explicit CountingIterator(std::unique_ptr<InternalIterator> base) : base_(std::move(base)) {}
  void SeekToFirst() override { Moved([&] { base_->SeekToFirst(); }); }
  void SeekToLast() override { Moved([&] { base_->SeekToLast(); }); }
  void Seek(const Slice& user_key, SequenceNumber sequence) override {
    Moved([&] { base_->Seek(user_key, sequence); });
  }
  void Next() override {
    ++nexts;
    Moved([&] { base_->Next(); });
  }
  void Prev() override {
    ++prevs;
    Moved([&] { base_->Prev(); });
  }
  Status status() const override { return base_->status(); }
  bool OpenWindow(BlockWindow* window) override { return base_->OpenWindow(window); }
  void SkipRun(uint32_t n) override {
    ++skip_runs;
    Moved([&] { base_->SkipRun(n); });
  }

  uint64_t nexts = 0;
  uint64_t prevs = 0;
  uint64_t skip_runs = 0;

 private:
  template <typename F>
  void Moved(F&& move) {
    move();
    valid_ = base_->Valid();
    if (valid_) SetEntryFrom(*base_);
  }
  std::unique_ptr<InternalIterator> base_;
};

// A key rewritten a thousand times: a scan crossing it, either way, seeks
// past the versions it does not show instead of stepping through each.
TEST(DBIterSkipTest, ManyVersionsOfOneKeyArePassedBySeeking) {
  for (const bool newest_deleted : {false, true}) {
    std::vector<TestEntry> entries = {{"a", 1, ValueType::kValue, "a1"}};
    for (SequenceNumber s = 1000; s >= 2; --s) {
      const bool deletion = newest_deleted && s == 1000;
      entries.push_back({"b", s, deletion ? ValueType::kDeletion : ValueType::kValue,
                         deletion ? "" : "b" + std::to_string(s)});
    }
    entries.push_back({"c", 1001, ValueType::kValue, "c1001"});
    test::AlignedBuffer buffer;
    const std::unique_ptr<BlockReader> reader = BuildAndOpen(BlockFormat::kKeySet, entries, &buffer);
    ASSERT_NE(reader, nullptr);
    // The newest versions; a snapshot that sees version 10 of "b" (and
    // must pass the 990 after it) but not "c".
    for (const SequenceNumber sequence : {kMaxSequenceNumber, SequenceNumber{10}}) {
      auto counting = std::make_unique<CountingIterator>(reader->NewIterator());
      CountingIterator* steps = counting.get();
      auto it = NewDBIterator(BytewiseComparator(), std::move(counting), sequence, {});
      std::string seen;
      for (it->SeekToFirst(); it->Valid(); it->Next()) seen += it->key().ToString() + "=" + it->value().ToString() + " ";
      ASSERT_TRUE(it->status().ok());
      const std::string expected = sequence != kMaxSequenceNumber ? "a=a1 b=b10 "
                                   : newest_deleted             ? "a=a1 c=c1001 "
                                                                : "a=a1 b=b1000 c=c1001 ";
      const std::string context =
          "newest_deleted " + std::to_string(newest_deleted) + " sequence " + std::to_string(sequence);
      EXPECT_EQ(seen, expected) << context;
      EXPECT_LT(steps->nexts + steps->prevs, 100u) << context;

      // Backward, from the end and after stepping forward onto each key.
      steps->nexts = steps->prevs = 0;
      std::string seen_backward;
      for (it->SeekToLast(); it->Valid(); it->Prev()) {
        seen_backward = it->key().ToString() + "=" + it->value().ToString() + " " + seen_backward;
      }
      ASSERT_TRUE(it->status().ok());
      EXPECT_EQ(seen_backward, expected) << context;
      EXPECT_LT(steps->nexts + steps->prevs, 100u) << context;
      it->SeekToFirst();
      for (it->Next(); it->Valid(); it->Next()) {
        const std::string here = it->key().ToString();
        steps->nexts = steps->prevs = 0;
        it->Prev();
        ASSERT_TRUE(it->Valid()) << context << " at " << here;
        EXPECT_LT(it->key().ToString(), here) << context;
        EXPECT_LT(steps->nexts + steps->prevs, 100u) << context << " at " << here;
        it->Next();
        ASSERT_TRUE(it->Valid() && it->key().ToString() == here) << context << " at " << here;
      }
    }
  }
}

// Keys dealt to three KeySet blocks in turn, some with an older version in
// the next block, one a deletion: a forward scan takes each entry from the
// window of the block it lies in (InternalIterator::OpenWindows), passing
// older versions, and moves the blocks' iterators only where a window ends
// or a deletion is met -- not once per entry, as a single window would,
// each one closing at the next key of another block. A classic block among
// them (no window) limits the windows to the entries before its own.
TEST(DBIterWindowsTest, InterleavedBlocksAreReadInTheirWindows) {
  for (const bool with_classic : {false, true}) {
    SCOPED_TRACE(with_classic ? "a classic block among them" : "KeySet blocks");
    constexpr int kBlocks = 3;
    std::vector<TestEntry> parts[kBlocks + 1];
    std::vector<TestEntry> entries;
    SequenceNumber sequence = 1;
    for (int i = 0; i < 3000; ++i) {
      char key[16];
      std::snprintf(key, sizeof(key), "key%06d", i);
      const int block = i % kBlocks;
      const bool deleted = i == 1500;
      TestEntry newest{key, 100000 + sequence++, deleted ? ValueType::kDeletion : ValueType::kValue,
                       deleted ? "" : "v" + std::to_string(i)};
      parts[block].push_back(newest);
      entries.push_back(newest);
      if (i % 7 == 0) {  // an older version, in the next block
        TestEntry older{key, sequence++, ValueType::kValue, "old" + std::to_string(i)};
        parts[(block + 1) % kBlocks].push_back(older);
        entries.push_back(older);
      }
    }
    const std::string classic_key = "key002000x";  // between two keys: one entry
    if (with_classic) {
      TestEntry e{classic_key, 100000 + sequence++, ValueType::kValue, "classic"};
      parts[kBlocks].push_back(e);
      entries.push_back(e);
    }
    // Each part in internal-key order (an older version may follow a newer
    // key of its block).
    for (auto& part : parts) {
      std::sort(part.begin(), part.end(), [](const TestEntry& a, const TestEntry& b) {
        return a.user_key != b.user_key ? a.user_key < b.user_key : a.sequence > b.sequence;
      });
    }
    std::sort(entries.begin(), entries.end(), [](const TestEntry& a, const TestEntry& b) {
      return a.user_key != b.user_key ? a.user_key < b.user_key : a.sequence > b.sequence;
    });
    test::AlignedBuffer buffers[kBlocks + 1];
    std::unique_ptr<BlockReader> readers[kBlocks + 1];
    std::vector<std::unique_ptr<InternalIterator>> children;
    std::vector<CountingIterator*> counters;
    for (int b = 0; b < kBlocks + (with_classic ? 1 : 0); ++b) {
      readers[b] = BuildAndOpen(b < kBlocks ? BlockFormat::kKeySet : BlockFormat::kClassic, parts[b], &buffers[b]);
      ASSERT_NE(readers[b], nullptr);
      auto counting = std::make_unique<CountingIterator>(readers[b]->NewIterator());
      counters.push_back(counting.get());
      children.push_back(std::move(counting));
    }
    auto it = NewDBIterator(BytewiseComparator(), NewMergingIterator(BytewiseComparator(), std::move(children)),
                            kMaxSequenceNumber, {});
    const auto model = Visible(entries, kMaxSequenceNumber);
    size_t seen = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++seen) {
      ASSERT_LT(seen, model.size());
      ASSERT_EQ(it->key().ToString(), model[seen].first);
      ASSERT_EQ(it->value().ToString(), model[seen].second);
    }
    ASSERT_TRUE(it->status().ok());
    EXPECT_EQ(seen, model.size());
    uint64_t moves = 0;
    for (const CountingIterator* c : counters) moves += c->nexts + c->skip_runs;
    EXPECT_LT(moves, 40u);

    // A step back from the middle of the windows finds the merge where the
    // windows left it.
    it->Seek("key000100");
    for (int i = 0; i < 10; ++i) it->Next();
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key().ToString(), "key000110");
    it->Prev();
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key().ToString(), "key000109");
    it->Next();
    it->Next();
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key().ToString(), "key000111");
  }
}

// A source whose Seek lands in the wrong place -- at its first entry, or at
// its last -- as a binary search over a damaged block read without its
// checksum can: the scans that seek past many versions of a key would go
// back over them forever. They stop with Corruption instead.
class MisseekingIterator final : public InternalIterator {
 public:
  MisseekingIterator(std::vector<TestEntry> entries, bool to_last) : entries_(std::move(entries)), to_last_(to_last) {}
  void SeekToFirst() override { At(0); }
  void SeekToLast() override { At(entries_.size() - 1); }
  void Seek(const Slice&, SequenceNumber) override { At(to_last_ ? entries_.size() - 1 : 0); }
  void Next() override { At(position_ + 1); }
  void Prev() override { At(position_ == 0 ? entries_.size() : position_ - 1); }
  Status status() const override { return Status::OK(); }

 private:
  void At(size_t position) {
    position_ = position;
    valid_ = position < entries_.size();
    if (!valid_) return;
    const TestEntry& e = entries_[position];
    user_key_ = Slice(e.user_key);
    value_ = Slice(e.value);
    tag_ = PackTag(e.sequence, e.type);
    has_key_hash_ = false;
  }
  const std::vector<TestEntry> entries_;
  const bool to_last_;
  size_t position_ = 0;
};

TEST(DBIterDamageTest, ASeekThatGoesBackStopsTheScanWithCorruption) {
  // "b" has 20 versions, 100 down to 81; "a" and "c" one each.
  std::vector<TestEntry> entries = {{"a", 1, ValueType::kValue, "a1"}};
  for (SequenceNumber s = 100; s > 80; --s) entries.push_back({"b", s, ValueType::kValue, "b" + std::to_string(s)});
  entries.push_back({"c", 2, ValueType::kValue, "c2"});
  struct Case {
    SequenceNumber sequence;
    bool backward;
  };
  // Forward over versions the reader does not see (snapshot 50), and past
  // the versions of a key just shown (every version visible): the seek
  // lands back at "a". Backward from the newest version of "b" the reader
  // sees (snapshot 85: fifteen newer ones before it), and from "c" over all
  // twenty: the seek lands at "c", after the key.
  for (const Case c : {Case{50, false}, Case{kMaxSequenceNumber, false}, Case{85, true},
                       Case{kMaxSequenceNumber, true}}) {
    const std::string context =
        std::string(c.backward ? "backward" : "forward") + " at sequence " + std::to_string(c.sequence);
    auto it = NewDBIterator(BytewiseComparator(), std::make_unique<MisseekingIterator>(entries, c.backward),
                            c.sequence, {});
    c.backward ? it->SeekToLast() : it->SeekToFirst();
    for (int steps = 0; it->Valid() && steps < 100; ++steps) c.backward ? it->Prev() : it->Next();
    EXPECT_FALSE(it->Valid()) << context;
    EXPECT_TRUE(it->status().IsCorruption()) << context << ": " << it->status().ToString();
  }
}

INSTANTIATE_TEST_SUITE_P(KeyShapes, DBIterTest, ::testing::Values("", "0123456789", "abcdefghijklmnopq"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           return "Prefix" + std::to_string(info.param.size());
                         });

TEST(DBIterPinTest, KeepsItsPinsUntilDestroyed) {
  auto pin = std::make_shared<int>(7);
  std::weak_ptr<int> watch = pin;
  std::vector<TestEntry> entries = {{"a", 1, ValueType::kValue, "x"}};
  test::AlignedBuffer buffer;
  const std::unique_ptr<BlockReader> reader = BuildAndOpen(BlockFormat::kKeySet, entries, &buffer);
  ASSERT_NE(reader, nullptr);
  auto it = NewDBIterator(BytewiseComparator(), reader->NewIterator(), kMaxSequenceNumber, {std::move(pin)});
  EXPECT_FALSE(watch.expired());
  it.reset();
  EXPECT_TRUE(watch.expired());
}

// The observer hears, once and at destruction, every positioning call:
// seeks, steps forward (also the ones served in a block's window) and back.
TEST(DBIterObserverTest, IsToldTheMovesWhenTheIteratorIsDestroyed) {
  class Recorder final : public IteratorObserver {
   public:
    explicit Recorder(std::vector<uint64_t>* closed) : closed_(closed) {}
    void Closed(uint64_t moves) const override { closed_->push_back(moves); }

   private:
    std::vector<uint64_t>* const closed_;
  };
  std::vector<TestEntry> entries;
  for (int i = 0; i < 100; ++i) entries.push_back({"key" + std::to_string(1000 + i), 1, ValueType::kValue, "v"});
  test::AlignedBuffer buffer;
  const std::unique_ptr<BlockReader> reader = BuildAndOpen(BlockFormat::kKeySet, entries, &buffer);
  ASSERT_NE(reader, nullptr);
  std::vector<uint64_t> closed;
  const Recorder recorder(&closed);
  auto it = NewDBIterator(BytewiseComparator(), reader->NewIterator(), kMaxSequenceNumber, {}, &recorder);
  uint64_t seen = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++seen;  // 1 + 100 moves
  EXPECT_EQ(seen, 100u);
  it->Seek("key1050");
  it->Prev();
  it->SeekToLast();
  EXPECT_TRUE(closed.empty());
  it.reset();
  EXPECT_EQ(closed, std::vector<uint64_t>{104});
}

}  // namespace
}  // namespace jigsaw
