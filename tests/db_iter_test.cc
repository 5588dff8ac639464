// DBIter (db/db_iter.h) over a block of versions and deletions, against the
// model of what a reader at a snapshot sees: random moves in both
// directions and seeks.
#include "db/db_iter.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

#include "tests/block_test_util.h"

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

TEST_P(DBIterTest, RandomMovesShowWhatTheSnapshotSees) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    std::mt19937_64 rng(seed);
    // Few distinct keys, many versions each, one in three a deletion.
    std::vector<TestEntry> entries = test::RandomEntries(&rng, 800, 3, 10, /*deletion_every=*/3);
    for (TestEntry& e : entries) e.user_key = GetParam() + e.user_key;  // a common prefix keeps the order
    test::AlignedBuffer buffer;
    size_t size = 0;
    ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, entries, BlockBuilderOptions(), &buffer, &size).ok());
    std::unique_ptr<BlockReader> reader;
    ASSERT_TRUE(
        BlockReader::Open(BlockFormat::kKeySet, Slice(buffer.data(), size), BlockReadOptions(), &reader).ok());
    for (SequenceNumber sequence : {SequenceNumber{500000}, kMaxSequenceNumber}) {
      const auto model = Visible(entries, sequence);
      ASSERT_FALSE(model.empty());
      auto it = NewDBIterator(BytewiseComparator(), reader->NewIterator(), sequence, {});
      size_t at = 0;  // model position; model.size() = not valid
      it->SeekToFirst();
      for (int step = 0; step < 2000; ++step) {
        ASSERT_EQ(it->Valid(), at < model.size()) << "seed " << seed << " step " << step;
        if (at < model.size()) {
          ASSERT_EQ(it->key().ToString(), model[at].first) << "seed " << seed << " step " << step;
          ASSERT_EQ(it->value().ToString(), model[at].second) << "seed " << seed << " step " << step;
        }
        const uint64_t op = rng() % 20;
        if (op < 8 && at < model.size()) {
          it->Next();
          ++at;
        } else if (op < 16 && at < model.size()) {
          it->Prev();
          at = at == 0 ? model.size() : at - 1;
        } else if (op < 19) {
          std::string target = entries[rng() % entries.size()].user_key;
          if (rng() % 3 == 0) target += 'c';
          it->Seek(target);
          at = 0;
          while (at < model.size() && model[at].first < target) ++at;
        } else if (rng() % 2 == 0) {
          it->SeekToFirst();
          at = 0;
        } else {
          it->SeekToLast();
          at = model.size() - 1;
        }
      }
      EXPECT_TRUE(it->status().ok());
    }
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
  size_t size = 0;
  ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, entries, BlockBuilderOptions(), &buffer, &size).ok());
  std::unique_ptr<BlockReader> reader;
  ASSERT_TRUE(BlockReader::Open(BlockFormat::kKeySet, Slice(buffer.data(), size), BlockReadOptions(), &reader).ok());
  auto it = NewDBIterator(BytewiseComparator(), reader->NewIterator(), kMaxSequenceNumber, {std::move(pin)});
  EXPECT_FALSE(watch.expired());
  it.reset();
  EXPECT_TRUE(watch.expired());
}

}  // namespace
}  // namespace jigsaw
