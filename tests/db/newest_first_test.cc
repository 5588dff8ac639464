// A key's newest version is the one read, in pmem mode, where the engine
// reorders work: CompactRange moving overlapping L0 tables, flushes let
// through between a compaction's outputs, and Gets that search a long L0
// in batches.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>

#include "jigsaw/db.h"
#include "tests/support/db_test_util.h"

namespace jigsaw {
namespace {

// L0 blocks overlap, so CompactRange moves all of L0 down together: moving
// only the in-range newer block would leave an older version of a shared key
// above the new one.
TEST(NewestFirstTest, CompactRangeMovesAllOfL0SoAnOlderVersionNeverEndsOnTop) {
  test::ScratchDir dir;
  Options options = test::SmallOptions();
  options.level0_compaction_trigger = 100;  // blocks stay in L0 until CompactRange
  options.level0_slowdown_trigger = 100;
  options.level0_stop_trigger = 100;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  const std::string filler(1000, 'f');
  auto fill = [&](const std::string& prefix) {
    for (int i = 0; i < 400; ++i) ASSERT_TRUE(db->Put(WriteOptions(), prefix + std::to_string(10000 + i), filler).ok());
  };
  ASSERT_TRUE(db->Put(WriteOptions(), "y", "old").ok());
  fill("y");  // an older L0 block with keys from "y" on
  ASSERT_TRUE(db->Put(WriteOptions(), "a", "x").ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "y", "new").ok());
  fill("z");  // a newer block from "a" to "z..."
  fill("zz");
  const Slice a("a");
  ASSERT_TRUE(db->CompactRange(&a, &a).ok());
  std::string got;
  ASSERT_TRUE(db->Get(ReadOptions(), "y", &got).ok());
  EXPECT_EQ(got, "new");
  db.reset();
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  ASSERT_TRUE(db->Get(ReadOptions(), "y", &got).ok());
  EXPECT_EQ(got, "new");
}

// A compaction into pmem gives way to waiting flushes between its outputs
// when the pool has room for both: writers are not stopped behind a full
// memtable queue, and what the flushes add while the compaction runs is
// kept (newer than anything the compaction moves), before and after a
// reopen.
TEST(NewestFirstTest, FlushesRunInsidePmemCompactionsAndLoseNothing) {
  test::ScratchDir dir;
  Options options = test::SmallOptions();
  options.memtable_size = 64 << 10;
  options.table_size = 64 << 10;  // many outputs per compaction
  options.level1_size = 4 << 20;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  auto flushes_within = [&] {
    std::string stalls;
    EXPECT_TRUE(db->GetProperty("jigsaw.stalls", &stalls));
    const size_t at = stalls.find("flushes_within_compactions ");
    EXPECT_NE(at, std::string::npos) << stalls;
    return std::stoull(stalls.substr(at + std::strlen("flushes_within_compactions ")));
  };
  std::map<std::string, std::string> model;
  std::mt19937 rng(7);
  char key[16];
  // Written until a flush has run inside a compaction, at most 200,000 puts
  // (a few thousand suffice: each L0 compaction rewrites L1's megabytes
  // while a memtable fills in a fraction of a millisecond).
  int writes = 0;
  for (; writes < 200000; ++writes) {
    if (writes > 0 && writes % 1000 == 0 && flushes_within() > 0) break;
    std::snprintf(key, sizeof(key), "k%07u", static_cast<unsigned>(rng() % 50000));
    const std::string value = std::to_string(writes) + std::string(90, 'v');
    ASSERT_TRUE(db->Put(WriteOptions(), key, value).ok());
    model[key] = value;
  }
  ASSERT_GT(flushes_within(), 0u) << "no flush ran inside a pmem compaction in " << writes << " writes";
  for (int reopen = 0; reopen < 2; ++reopen) {
    SCOPED_TRACE(reopen == 0 ? "open" : "reopened");
    auto it = db->NewIterator(ReadOptions());
    auto expected = model.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++expected) {
      ASSERT_NE(expected, model.end());
      ASSERT_EQ(it->key().ToString(), expected->first);
      ASSERT_EQ(it->value().ToString(), expected->second);
    }
    ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    EXPECT_EQ(expected, model.end());
    it.reset();
    db.reset();
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  }
}

// A Get searches the tables that may hold its key in batches, hinting each
// batch's tables first: with an L0 longer than a batch (32 runs), a key's
// newest version is still the one found, in whichever block it lies, and a
// deletion in a newer block still hides older versions.
TEST(NewestFirstTest, ALongL0IsSearchedNewestFirstAcrossBatches) {
  test::ScratchDir dir;
  Options options = test::SmallOptions();
  options.pmem_pool_size = uint64_t{256} << 20;
  options.level0_compaction_trigger = 120;  // every flush stays in L0
  options.level0_slowdown_trigger = 120;
  options.level0_stop_trigger = 120;
  std::unique_ptr<DB> db;
  Status opened = DB::Open(options, dir.path(), &db);
  ASSERT_TRUE(opened.ok()) << opened.ToString();
  const std::string filler(1000, 'f');
  constexpr int kBlocks = 45;
  for (int b = 0; b < kBlocks; ++b) {
    ASSERT_TRUE(db->Put(WriteOptions(), "shared", "v" + std::to_string(b)).ok());
    ASSERT_TRUE(db->Put(WriteOptions(), "only" + std::to_string(b), "o" + std::to_string(b)).ok());
    if (b == 2) {
      ASSERT_TRUE(db->Put(WriteOptions(), "gone", "old").ok());
    }
    if (b == 40) {
      ASSERT_TRUE(db->Delete(WriteOptions(), "gone").ok());
    }
    for (int i = 0; i < 200; ++i) {  // fills the memtable: one L0 block per round
      ASSERT_TRUE(db->Put(WriteOptions(), "filler" + std::to_string(b * 1000 + i), filler).ok());
    }
  }
  ASSERT_TRUE(db->Put(WriteOptions(), "flush", filler).ok());
  std::string blocks;
  ASSERT_TRUE(db->GetProperty("jigsaw.num-tables-at-level0", &blocks));
  ASSERT_GT(std::stoi(blocks), 40);
  std::string value;
  ASSERT_TRUE(db->Get(ReadOptions(), "shared", &value).ok());
  EXPECT_EQ(value, "v" + std::to_string(kBlocks - 1));
  for (int b = 0; b < kBlocks; ++b) {  // the oldest lie beyond the first batch
    ASSERT_TRUE(db->Get(ReadOptions(), "only" + std::to_string(b), &value).ok()) << b;
    EXPECT_EQ(value, "o" + std::to_string(b));
  }
  EXPECT_TRUE(db->Get(ReadOptions(), "gone", &value).IsNotFound());
  EXPECT_TRUE(db->Get(ReadOptions(), "absent", &value).IsNotFound());
}

}  // namespace
}  // namespace jigsaw
