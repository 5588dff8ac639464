// The iterators that wrap one other (table/iterator_wrappers.h):
// KeyRangeIterator with its bounds in every position of a block's keys,
// forwards, backwards and seeks; TimedIterator forwarding every move.
#include "table/iterator_wrappers.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/support/block_test_util.h"

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

TEST(TimedIteratorTest, ForwardsEveryMove) {
  Fixture f;
  MakeBlock(3, &f);
  SampledPhase phase;
  auto it = NewTimedIterator(f.reader->NewIterator(), &phase);
  size_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++n) {
    ASSERT_LT(n, f.entries.size());
    EXPECT_EQ(it->user_key().ToString(), f.entries[n].user_key);
    EXPECT_EQ(it->sequence(), f.entries[n].sequence);
    EXPECT_EQ(it->type(), f.entries[n].type);
    EXPECT_EQ(it->value().ToString(), f.entries[n].value);
    EXPECT_EQ(it->key_hash(), bloom::KeyHash(f.entries[n].user_key));
  }
  EXPECT_EQ(n, f.entries.size());
  for (it->SeekToLast(); it->Valid(); it->Prev()) --n;
  EXPECT_EQ(n, 0u);
  const test::TestEntry& target = f.entries[f.entries.size() / 2];
  it->Seek(target.user_key, target.sequence);
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->user_key().ToString(), target.user_key);
  EXPECT_EQ(it->sequence(), target.sequence);
  EXPECT_TRUE(it->status().ok());
}

}  // namespace
}  // namespace jigsaw
