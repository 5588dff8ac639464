#include "src/memtable.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "format/keyset_block.h"
#include "tests/block_test_util.h"

namespace jigsaw {
namespace {

TEST(MemTableTest, IteratesInInternalKeyOrderLikeABlock) {
  std::mt19937_64 rng(5);
  std::vector<test::TestEntry> entries = test::RandomEntries(&rng, 3000, 24, 200);
  std::vector<test::TestEntry> shuffled = entries;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  MemTable mem(BytewiseComparator(), 64 << 10);
  for (const auto& e : shuffled) mem.Add(e.sequence, e.type, e.user_key, e.value);
  EXPECT_EQ(mem.num_entries(), entries.size());
  auto it = mem.NewIterator();
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
    ASSERT_EQ(it->user_key().ToString(), entries[i].user_key);
    ASSERT_EQ(it->sequence(), entries[i].sequence);
    ASSERT_EQ(it->type(), entries[i].type);
    if (entries[i].type == ValueType::kValue) {
      ASSERT_EQ(it->value().ToString(), entries[i].value);
    }
  }
  EXPECT_EQ(i, entries.size());
  for (it->SeekToLast(); it->Valid(); it->Prev()) ASSERT_EQ(it->user_key().ToString(), entries[--i].user_key);
  EXPECT_EQ(i, 0u);
  // Point lookups at snapshots agree with the model.
  for (int probe = 0; probe < 500; ++probe) {
    const auto& e = entries[rng() % entries.size()];
    const SequenceNumber snapshot = rng() % 1200000;
    const test::TestEntry* want = test::ModelGet(entries, e.user_key, snapshot);
    ValueType type;
    std::string value;
    const bool found = mem.Get(e.user_key, snapshot, &type, &value);
    ASSERT_EQ(found, want != nullptr);
    if (found) {
      ASSERT_EQ(type, want->type);
      if (type == ValueType::kValue) {
        ASSERT_EQ(value, want->value);
      }
    }
  }
}

TEST(MemTableTest, NodesUseTheKeySetEntryLayout) {
  MemTable mem(BytewiseComparator());
  mem.Add(7, ValueType::kValue, "key", "value");
  auto it = mem.NewIterator();
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  // The key slice points into the node; the node header precedes the links.
  const char* key = it->user_key().data();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(key) % 8, 0u);
  EXPECT_EQ(it->value().ToString(), "value");
}

// One writer, concurrent readers: readers always see a sorted list whose
// entries are complete (run under TSan via the concurrency test target too).
TEST(MemTableTest, ReadersRunConcurrentlyWithOneWriter) {
  MemTable mem(BytewiseComparator(), 64 << 10);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < 20000; ++i) {
      mem.Add(static_cast<SequenceNumber>(i + 1), ValueType::kValue, "k" + std::to_string(i * 7919 % 20000),
              std::to_string(i));
    }
    done = true;
  });
  while (!done) {
    auto it = mem.NewIterator();
    std::string previous;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string key = it->user_key().ToString();
      ASSERT_TRUE(previous.empty() || previous < key);
      ASSERT_FALSE(it->value().empty());
      previous = key;
    }
  }
  writer.join();
  EXPECT_EQ(mem.num_entries(), 20000u);
}

}  // namespace
}  // namespace jigsaw
