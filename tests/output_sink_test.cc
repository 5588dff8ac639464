// Output sinks (compaction/output_sink.h): entries added one by one or as
// runs become tables of the sink's tier that serve them in order; outputs
// end at the size the options give; Abandon releases what a sink made.
#include "compaction/output_sink.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/block_test_util.h"
#include "tests/db_test_util.h"
#include "version/version_set.h"

namespace jigsaw {
namespace {

using test::TestEntry;

std::vector<TestEntry> Entries(int n) {
  std::vector<TestEntry> entries;
  for (int i = 0; i < n; ++i) {
    char key[16];
    std::snprintf(key, sizeof(key), "key%07d", i);
    entries.push_back({key, 1, i % 11 == 0 ? ValueType::kDeletion : ValueType::kValue,
                       i % 11 == 0 ? "" : std::string(100, static_cast<char>('a' + i % 26))});
  }
  return entries;
}

struct Fixture {
  test::ScratchDir dir;
  Options options;
  VersionSet versions;
  std::unique_ptr<TableStore> store;

  explicit Fixture(bool with_pool) {
    options.block_size = 256 << 10;
    options.ssd_block_size = 4096;
    store = std::make_unique<TableStore>(options, dir.path(), &versions);
    std::string io;
    store->ChooseIo(&io);
    if (with_pool) {
      pmem::PoolOptions pool;
      pool.path = dir.path() + "/pool";
      pool.size = 64 << 20;
      pool.create_if_missing = true;
      pool.comparator_name = options.comparator->Name();
      EXPECT_TRUE(store->OpenPool(pool).ok());
    }
  }
};

// Feeds `entries` to `sink` the way MergeInto does: CloseIfFull before each
// new key; a run wherever the source block offers one when `runs`.
void Feed(const std::vector<TestEntry>& entries, bool runs, OutputSink* sink) {
  test::AlignedBuffer buffer;
  size_t size = 0;
  ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, entries, {}, &buffer, &size).ok());
  std::unique_ptr<BlockReader> reader;
  ASSERT_TRUE(BlockReader::Open(BlockFormat::kKeySet, Slice(buffer.data(), size), {}, &reader).ok());
  auto it = reader->NewIterator();
  for (it->SeekToFirst(); it->Valid();) {
    bool closed = false;
    ASSERT_TRUE(sink->CloseIfFull(it->user_key().size(), it->value().size(), &closed).ok());
    EntryRun run;
    if (runs && it->PeekRun(nullptr, 0, 5000, &run) > 1) {
      uint32_t taken = 0;
      ASSERT_TRUE(sink->AppendRun(run, &taken).ok());
      if (taken > 0) {
        it->SkipRun(taken);
        continue;
      }
    }
    ASSERT_TRUE(sink->Add(*it).ok());
    it->Next();
  }
  ASSERT_TRUE(sink->Finish().ok());
}

void ExpectOutputsServe(const std::vector<TableRef>& outputs, const std::vector<TestEntry>& entries) {
  size_t i = 0;
  for (const TableRef& t : outputs) {
    EXPECT_TRUE(t->table->Validate().ok());
    auto it = t->table->NewIterator(ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
      ASSERT_LT(i, entries.size());
      ASSERT_EQ(it->user_key().ToString(), entries[i].user_key);
      ASSERT_EQ(it->type(), entries[i].type);
      ASSERT_EQ(it->value().ToString(), entries[i].value);
    }
    EXPECT_TRUE(it->status().ok());
  }
  EXPECT_EQ(i, entries.size());
}

TEST(OutputSinkTest, PmemBlocksServeTheEntriesAndEndAtTheBlockSize) {
  for (bool runs : {false, true}) {
    Fixture f(/*with_pool=*/true);
    const auto entries = Entries(8000);  // ~1 MiB: several 256 KiB blocks
    PmemBlockSink sink(f.store.get(), /*may_use_standby=*/false, nullptr);
    Feed(entries, runs, &sink);
    ASSERT_GE(sink.outputs().size(), 4u);
    for (const TableRef& t : sink.outputs()) EXPECT_LE(t->size, f.options.block_size + 4096) << runs;
    ExpectOutputsServe(sink.outputs(), entries);
    EXPECT_EQ(sink.reservations().size(), sink.outputs().size());
    for (auto& r : sink.reservations()) f.store->pool()->Cancel(&r);
  }
}

// How many one-chunk objects the pool can still reserve (given back after).
size_t FreeChunks(pmem::Pool* pool) {
  std::vector<pmem::Reservation> taken;
  for (;;) {
    pmem::Reservation r;
    if (!pool->Reserve(pmem::ObjectType::kBlock, 100 << 10, false, &r).ok()) break;
    taken.push_back(r);
  }
  for (auto& r : taken) pool->Cancel(&r);
  return taken.size();
}

TEST(OutputSinkTest, AnAbandonedPmemSinkGivesItsSpaceBack) {
  Fixture f(/*with_pool=*/true);
  const size_t before = FreeChunks(f.store->pool());
  ASSERT_GT(before, 10u);
  {
    PmemBlockSink sink(f.store.get(), /*may_use_standby=*/false, nullptr);
    Feed(Entries(8000), /*runs=*/true, &sink);
    ASSERT_GE(sink.reservations().size(), 4u);
    EXPECT_LT(FreeChunks(f.store->pool()), before);
    sink.Abandon();
    EXPECT_TRUE(sink.outputs().empty());
    EXPECT_TRUE(sink.reservations().empty());
  }
  EXPECT_EQ(FreeChunks(f.store->pool()), before);
  EXPECT_TRUE(f.store->pool()->Objects(pmem::ObjectType::kBlock).empty());
}

TEST(OutputSinkTest, SsdTablesServeTheEntriesAndAbandonDeletesThem) {
  for (bool runs : {false, true}) {
    Fixture f(/*with_pool=*/false);
    const auto entries = Entries(8000);
    {
      SsdTableSink sink(f.store.get(), /*sync_each=*/true, nullptr);
      Feed(entries, runs, &sink);
      ASSERT_GE(sink.outputs().size(), 4u);
      for (const TableRef& t : sink.outputs()) EXPECT_LE(t->size, f.options.block_size + 8192) << runs;
      ExpectOutputsServe(sink.outputs(), entries);
      EXPECT_EQ(sink.entries_added(), entries.size());
      sink.Abandon();
      EXPECT_TRUE(sink.outputs().empty());
    }
    size_t tables = 0;
    for (const auto& file : std::filesystem::directory_iterator(f.dir.path())) {
      if (file.path().extension() == ".jst") ++tables;
    }
    EXPECT_EQ(tables, 0u) << runs;
  }
}

}  // namespace
}  // namespace jigsaw
