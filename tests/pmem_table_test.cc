// Pmem tables (pmem/pmem_table.h): a block served through the Table
// interface like the model; the NVM-timed decorator charging one random
// read per Get and per iterator positioning, and the block's bytes to the
// read bandwidth as iterators and scans step over its entries.
#include "pmem/pmem_table.h"

#include <gtest/gtest.h>

#include <random>

#include "format/keyset_block.h"
#include "tests/block_test_util.h"

namespace jigsaw::pmem {
namespace {

using test::TestEntry;

struct Fixture {
  std::vector<TestEntry> entries;
  test::AlignedBuffer buffer;
  size_t size = 0;
  std::unique_ptr<Table> table;
};

void MakeTable(uint64_t seed, Fixture* f, uint32_t keyset_version = keyset::kLatestVersion) {
  std::mt19937_64 rng(seed);
  f->entries = test::RandomEntries(&rng, 400, 6, 30);
  BlockBuilderOptions options;
  options.keyset_version = keyset_version;
  ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, f->entries, options, &f->buffer, &f->size).ok());
  std::unique_ptr<BlockReader> reader;
  ASSERT_TRUE(
      BlockReader::Open(BlockFormat::kKeySet, Slice(f->buffer.data(), f->size), BlockReadOptions(), &reader).ok());
  f->table = NewPmemTable(std::move(reader), Slice(f->buffer.data(), f->size));
}

void ExpectServesTheModel(const Table& table, const std::vector<TestEntry>& entries) {
  EXPECT_EQ(table.num_entries(), entries.size());
  EXPECT_TRUE(table.Validate().ok());
  std::vector<std::unique_ptr<InternalIterator>> iterators;
  iterators.push_back(table.NewIterator(ReadOptions()));
  iterators.push_back(table.NewScanIterator(nullptr));
  for (const auto& it : iterators) {
    size_t i = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
      ASSERT_LT(i, entries.size());
      EXPECT_EQ(it->user_key().ToString(), entries[i].user_key);
      EXPECT_EQ(it->sequence(), entries[i].sequence);
      EXPECT_EQ(it->value().ToString(), entries[i].value);
    }
    EXPECT_EQ(i, entries.size());
    EXPECT_TRUE(it->status().ok());
  }
  for (size_t i = 0; i < entries.size(); i += 7) {
    for (SequenceNumber snapshot : {entries[i].sequence, kMaxSequenceNumber}) {
      const TestEntry* want = test::ModelGet(entries, entries[i].user_key, snapshot);
      ValueType type;
      std::string value;
      const Status s = table.Get(ReadOptions(), entries[i].user_key, snapshot, &type, &value);
      ASSERT_EQ(s.ok(), want != nullptr) << s.ToString();
      if (want == nullptr) continue;
      EXPECT_EQ(type, want->type);
      if (type == ValueType::kValue) {
        EXPECT_EQ(value, want->value);
      }
    }
  }
}

TEST(PmemTableTest, ServesTheBlockLikeTheModel) {
  Fixture f;
  MakeTable(5, &f);
  ExpectServesTheModel(*f.table, f.entries);
}

// Pools written before format version 2 hold version 1 blocks: they are
// served the same way.
TEST(PmemTableTest, ServesAVersionOneBlockLikeTheModel) {
  Fixture f;
  MakeTable(5, &f, /*keyset_version=*/1);
  ExpectServesTheModel(*f.table, f.entries);
}

TEST(PmemTableTest, TimedTableServesTheSameEntries) {
  Fixture f;
  MakeTable(6, &f);
  NvmTiming timing(NvmTimingModel{});
  auto timed = NewNvmTimedTable(std::move(f.table), &timing, f.size);
  ExpectServesTheModel(*timed, f.entries);
}

TEST(PmemTableTest, TimedTableChargesOneRandomReadPerGetAndPerPositioning) {
  Fixture f;
  MakeTable(7, &f);
  NvmTiming timing(NvmTimingModel{});  // no latency: only the count matters here
  auto timed = NewNvmTimedTable(std::move(f.table), &timing, f.size);
  ValueType type;
  std::string value;
  (void)timed->Get(ReadOptions(), f.entries[0].user_key, kMaxSequenceNumber, &type, &value);
  (void)timed->Get(ReadOptions(), "absent", kMaxSequenceNumber, &type, &value);
  EXPECT_EQ(timing.random_reads_charged(), 2u);

  auto it = timed->NewIterator(ReadOptions());
  EXPECT_EQ(timing.random_reads_charged(), 2u);  // making an iterator reads nothing
  it->SeekToFirst();
  EXPECT_EQ(timing.random_reads_charged(), 3u);
  size_t n = 0;
  for (; it->Valid(); it->Next()) ++n;
  EXPECT_EQ(n, f.entries.size());
  EXPECT_EQ(timing.random_reads_charged(), 3u);  // steps are sequential reads
  it->SeekToLast();
  it->Prev();
  EXPECT_EQ(timing.random_reads_charged(), 4u);
  it->Seek(f.entries[10].user_key, kMaxSequenceNumber);
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->user_key().ToString(), f.entries[10].user_key);
  EXPECT_EQ(timing.random_reads_charged(), 5u);

  auto scan = timed->NewScanIterator(nullptr);
  for (scan->SeekToFirst(); scan->Valid(); scan->Next()) {
  }
  EXPECT_EQ(timing.random_reads_charged(), 6u);  // a scan positions once, then reads on
}

// Every entry an iterator lands on or steps over -- one by one or in runs --
// costs the block's average bytes per entry; a full pass reads the block.
TEST(PmemTableTest, TimedTableChargesTheBytesIteratorsStepOver) {
  Fixture f;
  MakeTable(8, &f);
  NvmTimingModel model;
  model.read_bandwidth_bytes_per_sec = 1e12;  // counted, nearly free
  NvmTiming timing(model);
  const uint64_t entries = f.entries.size();
  const uint64_t per_entry = (f.size + entries - 1) / entries;
  auto timed = NewNvmTimedTable(std::move(f.table), &timing, f.size);
  {
    auto it = timed->NewIterator(ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
    }
  }
  EXPECT_EQ(timing.sequential_read_bytes_charged(), entries * per_entry);
  EXPECT_GE(entries * per_entry, f.size);
  {
    // A compaction's read: runs where the block offers them.
    auto scan = timed->NewScanIterator(nullptr);
    uint64_t seen = 0;
    scan->SeekToFirst();
    while (scan->Valid()) {
      EntryRun run;
      const uint32_t n = scan->PeekRun(nullptr, 0, 64, &run);
      if (n > 1) {
        scan->SkipRun(n);
        seen += n;
      } else {
        scan->Next();
        ++seen;
      }
    }
    EXPECT_EQ(seen, entries);
  }
  EXPECT_EQ(timing.sequential_read_bytes_charged(), 2 * entries * per_entry);
  {
    auto it = timed->NewIterator(ReadOptions());
    it->Seek(f.entries[100].user_key, kMaxSequenceNumber);
    for (int i = 0; i < 10 && it->Valid(); ++i) it->Next();
  }
  EXPECT_EQ(timing.sequential_read_bytes_charged(), 2 * entries * per_entry + 11 * per_entry);
}

// A compaction's block scan: the one block, in place; none for a version 1
// block (the merge goes through iterators); under the timing model, one
// random read and the whole block's bytes.
TEST(PmemTableTest, BlockScanHandsOverTheBlockInPlace) {
  Fixture f;
  MakeTable(9, &f);
  auto scan = f.table->NewBlockScan(nullptr);
  ASSERT_NE(scan, nullptr);
  Slice block;
  ASSERT_TRUE(scan->NextBlock(&block));
  EXPECT_EQ(block.data(), f.buffer.data());
  EXPECT_EQ(block.size(), f.size);
  EXPECT_FALSE(scan->NextBlock(&block));
  EXPECT_TRUE(scan->status().ok());

  Fixture old;
  MakeTable(10, &old, /*keyset_version=*/1);
  EXPECT_EQ(old.table->NewBlockScan(nullptr), nullptr);

  NvmTimingModel model;
  model.read_bandwidth_bytes_per_sec = 1e12;  // counted, nearly free
  NvmTiming timing(model);
  auto timed = NewNvmTimedTable(std::move(f.table), &timing, f.size);
  scan = timed->NewBlockScan(nullptr);
  ASSERT_NE(scan, nullptr);
  ASSERT_TRUE(scan->NextBlock(&block));
  EXPECT_FALSE(scan->NextBlock(&block));
  EXPECT_EQ(timing.random_reads_charged(), 1u);
  EXPECT_EQ(timing.sequential_read_bytes_charged(), f.size);
}

}  // namespace
}  // namespace jigsaw::pmem
