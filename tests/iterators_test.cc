// Internal iterators against models: MergingIterator over several blocks
// (random moves in both directions, seeks), KeyRangeIterator (the bounds in
// every position of a block's keys, forwards, backwards and seeks).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "db/iterators.h"
#include "tests/block_test_util.h"

namespace jigsaw {
namespace {

struct Fixture {
  std::vector<test::TestEntry> entries;
  test::AlignedBuffer buffer;
  std::unique_ptr<BlockReader> reader;
};

void MakeBlock(uint64_t seed, Fixture* f) {
  std::mt19937_64 rng(seed);
  f->entries = test::RandomEntries(&rng, 300, 6, 20);
  size_t size = 0;
  ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, f->entries, BlockBuilderOptions(), &f->buffer, &size).ok());
  ASSERT_TRUE(BlockReader::Open(BlockFormat::kKeySet, Slice(f->buffer.data(), size), BlockReadOptions(), &f->reader)
                  .ok());
}

// Position of the first model entry at or after (key, sequence) in internal
// order.
size_t ModelSeek(const std::vector<test::TestEntry>& model, const std::string& key, SequenceNumber sequence) {
  size_t i = 0;
  while (i < model.size() && CompareInternal(BytewiseComparator(), model[i].user_key,
                                             PackTag(model[i].sequence, model[i].type), key,
                                             PackTag(sequence, ValueType::kValue)) < 0) {
    ++i;
  }
  return i;
}

TEST(MergingIteratorTest, RandomMovesMatchTheMergedModel) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    std::mt19937_64 rng(seed);
    // One set of entries with unique (key, sequence), dealt over 1-6 blocks.
    std::vector<test::TestEntry> model = test::RandomEntries(&rng, 900, 5, 8);
    const size_t n_blocks = seed == 1 ? 2 : 1 + rng() % 6;  // seed 1: two children, as a scan of L1 + L2
    std::vector<std::vector<test::TestEntry>> parts(n_blocks);
    for (const auto& e : model) parts[rng() % n_blocks].push_back(e);
    std::vector<test::AlignedBuffer> buffers(n_blocks);
    std::vector<std::unique_ptr<BlockReader>> readers(n_blocks);
    std::vector<std::unique_ptr<InternalIterator>> children;
    for (size_t b = 0; b < n_blocks; ++b) {
      size_t size = 0;
      ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, parts[b], BlockBuilderOptions(), &buffers[b], &size).ok());
      ASSERT_TRUE(BlockReader::Open(BlockFormat::kKeySet, Slice(buffers[b].data(), size), BlockReadOptions(),
                                    &readers[b])
                      .ok());
      children.push_back(readers[b]->NewIterator());
    }
    auto it = NewMergingIterator(BytewiseComparator(), std::move(children));
    size_t at = 0;  // model position; model.size() = not valid
    it->SeekToFirst();
    for (int step = 0; step < 3000; ++step) {
      ASSERT_EQ(it->Valid(), at < model.size()) << "seed " << seed << " step " << step;
      if (at < model.size()) {
        ASSERT_EQ(it->user_key().ToString(), model[at].user_key) << "seed " << seed << " step " << step;
        ASSERT_EQ(it->sequence(), model[at].sequence) << "seed " << seed << " step " << step;
      }
      const uint64_t op = rng() % 20;
      if (op < 9 && at < model.size()) {
        it->Next();
        ++at;
      } else if (op < 17 && at < model.size()) {
        it->Prev();
        at = at == 0 ? model.size() : at - 1;
      } else if (op < 19) {
        const test::TestEntry& target = model[rng() % model.size()];
        const SequenceNumber sequence = rng() % 2 == 0 ? target.sequence : rng() % 1000000;
        it->Seek(target.user_key, sequence);
        at = ModelSeek(model, target.user_key, sequence);
      } else if (rng() % 2 == 0) {
        it->SeekToFirst();
        at = 0;
      } else {
        it->SeekToLast();
        at = model.size() - 1;
      }
    }
    ASSERT_TRUE(it->status().ok());
  }
}

bool InRange(const std::string& key, const std::string* after, const std::string* upto) {
  return (after == nullptr || key > *after) && (upto == nullptr || key <= *upto);
}

TEST(KeyRangeIteratorTest, ShowsExactlyTheEntriesInsideTheBounds) {
  Fixture f;
  MakeBlock(7, &f);
  std::vector<std::string> bounds = {"", "zzzzzzzz"};
  for (size_t i = 0; i < f.entries.size(); i += 13) {
    bounds.push_back(f.entries[i].user_key);                // a key present, maybe with several versions
    bounds.push_back(f.entries[i].user_key + std::string(1, '\0'));  // just after it
  }
  for (const std::string& a : bounds) {
    for (const std::string& u : bounds) {
      for (int mode = 0; mode < 4; ++mode) {
        const std::string* after = (mode & 1) ? &a : nullptr;
        const std::string* upto = (mode & 2) ? &u : nullptr;
        std::vector<const test::TestEntry*> want;
        for (const auto& e : f.entries) {
          if (InRange(e.user_key, after, upto)) want.push_back(&e);
        }
        auto it = NewKeyRangeIterator(BytewiseComparator(), f.reader->NewIterator(), after, upto);
        size_t n = 0;
        for (it->SeekToFirst(); it->Valid(); it->Next(), ++n) {
          ASSERT_LT(n, want.size());
          EXPECT_EQ(it->user_key().ToString(), want[n]->user_key);
          EXPECT_EQ(it->sequence(), want[n]->sequence);
        }
        EXPECT_EQ(n, want.size()) << "after " << (after ? a : "-") << " upto " << (upto ? u : "-");
        n = 0;
        for (it->SeekToLast(); it->Valid(); it->Prev(), ++n) {
          ASSERT_LT(n, want.size());
          EXPECT_EQ(it->user_key().ToString(), want[want.size() - 1 - n]->user_key);
          EXPECT_EQ(it->sequence(), want[want.size() - 1 - n]->sequence);
        }
        EXPECT_EQ(n, want.size());
        EXPECT_TRUE(it->status().ok());
        // A seek lands on the first entry at or after the target inside the
        // bounds, or nowhere.
        for (size_t t = 0; t < f.entries.size(); t += 29) {
          const test::TestEntry& target = f.entries[t];
          it->Seek(target.user_key, kMaxSequenceNumber);
          const test::TestEntry* first = nullptr;
          for (const test::TestEntry* e : want) {
            if (e->user_key >= target.user_key) {
              first = e;
              break;
            }
          }
          ASSERT_EQ(it->Valid(), first != nullptr) << target.user_key;
          if (first != nullptr) {
            EXPECT_EQ(it->user_key().ToString(), first->user_key);
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace jigsaw
