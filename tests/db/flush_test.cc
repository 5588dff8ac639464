// Flush (db/flush.h): a memtable filled in random order becomes one block --
// a KeySet version 2 block by copy (the value log copied whole, each entry
// written once in key order), a version 1 block and a classic block by
// building -- that serves every entry like the model, within the size
// KeySetBlockSizeBound reserved.
#include "db/flush.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "format/keyset_block.h"
#include "tests/support/block_test_util.h"

namespace jigsaw {
namespace {

struct Case {
  BlockFormat format;
  uint32_t keyset_version;
};

class FlushTest : public ::testing::TestWithParam<Case> {};

TEST_P(FlushTest, BlockFromARandomlyFilledMemTableServesLikeTheModel) {
  const Case c = GetParam();
  std::mt19937_64 rng(17);
  std::vector<test::TestEntry> entries = test::RandomEntries(&rng, 4000, 24, 200);
  for (size_t i = 0; i < entries.size(); i += 151) entries[i].value.assign(20000 + i, 'L');  // own log chunks
  std::vector<test::TestEntry> shuffled = entries;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  MemTable mem(BytewiseComparator(), 32 << 10);
  for (const auto& e : shuffled) mem.Add(e.sequence, e.type, e.user_key, e.value);

  BlockBuilderOptions options;
  options.keyset_version = c.keyset_version;
  const size_t capacity =
      c.format == BlockFormat::kKeySet ? KeySetBlockSizeBound(mem, options) : 2 * mem.ApproximateMemoryUsage();
  test::AlignedBuffer buffer(capacity);
  size_t size = 0;
  ASSERT_TRUE(BuildMemTableBlock(mem, c.format, options, buffer.data(), capacity, &size).ok());
  EXPECT_LE(size, capacity);

  std::unique_ptr<BlockReader> reader;
  ASSERT_TRUE(BlockReader::Open(c.format, Slice(buffer.data(), size), {}, &reader).ok());
  ASSERT_TRUE(reader->Validate().ok());
  auto it = reader->NewIterator();
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
    ASSERT_LT(i, entries.size());
    ASSERT_EQ(it->user_key().ToString(), entries[i].user_key);
    ASSERT_EQ(it->sequence(), entries[i].sequence);
    ASSERT_EQ(it->type(), entries[i].type);
    if (entries[i].type == ValueType::kValue) {
      ASSERT_EQ(it->value().ToString(), entries[i].value);
    }
  }
  EXPECT_EQ(i, entries.size());
  for (size_t k = 0; k < entries.size(); k += 13) {
    const test::TestEntry* want = test::ModelGet(entries, entries[k].user_key, kMaxSequenceNumber);
    ASSERT_NE(want, nullptr);
    BlockLookup found;
    ASSERT_TRUE(reader->Get(entries[k].user_key, kMaxSequenceNumber, &found).ok());
    EXPECT_EQ(found.type, want->type);
    if (want->type == ValueType::kValue) {
      EXPECT_EQ(found.value.ToString(), want->value);
    }
  }
}

TEST_P(FlushTest, ADestinationTooSmallIsNoSpace) {
  const Case c = GetParam();
  MemTable mem(BytewiseComparator());
  for (int i = 0; i < 500; ++i) mem.Add(i + 1, ValueType::kValue, "key" + std::to_string(i), std::string(100, 'v'));
  BlockBuilderOptions options;
  options.keyset_version = c.keyset_version;
  test::AlignedBuffer buffer(16 << 10);
  size_t size = 0;
  EXPECT_TRUE(BuildMemTableBlock(mem, c.format, options, buffer.data(), 16 << 10, &size).IsNoSpace());
}

INSTANTIATE_TEST_SUITE_P(Formats, FlushTest,
                         ::testing::Values(Case{BlockFormat::kKeySet, 2}, Case{BlockFormat::kKeySet, 1},
                                           Case{BlockFormat::kClassic, 2}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.format == BlockFormat::kClassic
                                      ? std::string("Classic")
                                      : "KeySetV" + std::to_string(info.param.keyset_version);
                         });

}  // namespace
}  // namespace jigsaw
