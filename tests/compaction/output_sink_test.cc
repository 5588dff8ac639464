// Output sinks (compaction/output_sink.h): entries added one by one or as
// runs become tables of the sink's tier that serve them in order; outputs
// end at the size the options give; Abandon releases what a sink made.
#include "compaction/output_sink.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/block_test_util.h"
#include "tests/support/db_test_util.h"
#include "pmem/pool_sizing.h"
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

  explicit Fixture(bool with_pool, TableFormat format = TableFormat::kKeySet) {
    options.table_size = 256 << 10;
    options.ssd_block_size = 4096;
    options.table_format = format;
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

// `entries` as one KeySet block, read through `source`.
struct SourceBlock {
  test::AlignedBuffer buffer;
  std::unique_ptr<BlockReader> reader;
};
void OpenSourceBlock(const std::vector<TestEntry>& entries, SourceBlock* source,
                     std::unique_ptr<InternalIterator>* it) {
  size_t size = 0;
  ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, entries, {}, &source->buffer, &size).ok());
  ASSERT_TRUE(
      BlockReader::Open(BlockFormat::kKeySet, Slice(source->buffer.data(), size), {}, &source->reader).ok());
  *it = source->reader->NewIterator();
}

// Feeds `entries` to `sink` the way MergeInto does: CloseIfFull before each
// new key; a run wherever the source block offers one when `runs`.
void Feed(const std::vector<TestEntry>& entries, bool runs, OutputSink* sink) {
  SourceBlock source;
  std::unique_ptr<InternalIterator> it;
  ASSERT_NO_FATAL_FAILURE(OpenSourceBlock(entries, &source, &it));
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
    for (const TableRef& t : sink.outputs()) EXPECT_LE(t->size, f.options.table_size + 4096) << runs;
    ExpectOutputsServe(sink.outputs(), entries);
    EXPECT_EQ(sink.reservations().size(), sink.outputs().size());
    for (auto& r : sink.reservations()) f.store->pool()->Cancel(&r);
  }
}

// A sink takes runs exactly when it says it does (TakesRuns and AppendRun
// ask the same builders), and the store's options make builders that do.
TEST(OutputSinkTest, SinksTakeRunsExactlyWhenTheySaySo) {
  const auto entries = Entries(100);
  SourceBlock source;
  std::unique_ptr<InternalIterator> it;
  ASSERT_NO_FATAL_FAILURE(OpenSourceBlock(entries, &source, &it));
  it->SeekToFirst();
  it->Next();  // past the deletion that starts no run
  EntryRun run;
  ASSERT_EQ(it->PeekRun(nullptr, 0, 5000, &run), 10u);

  Fixture f(/*with_pool=*/true);
  PmemBlockSink pmem(f.store.get(), /*may_use_standby=*/false, nullptr);
  SsdTableSink ssd(f.store.get(), /*sync_each=*/false, nullptr);
  for (OutputSink* sink : {static_cast<OutputSink*>(&pmem), static_cast<OutputSink*>(&ssd)}) {
    EXPECT_TRUE(sink->TakesRuns());
    uint32_t taken = 0;
    ASSERT_TRUE(sink->AppendRun(run, &taken).ok());
    EXPECT_EQ(taken, run.count);
    sink->Abandon();
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

// With table_format kClassic a pmem output is an SSD table image: the bytes
// of a table file of classic blocks (its footer at the end), read in place;
// images end at table_size, never past the pool chunks table_size fills.
TEST(OutputSinkTest, PmemTableImagesServeTheEntriesAndEndAtTheBlockSize) {
  for (bool runs : {false, true}) {
    Fixture f(/*with_pool=*/true, TableFormat::kClassic);
    const auto entries = Entries(8000);  // ~1 MiB: several 256 KiB images
    std::unique_ptr<PmemSink> sink = NewPmemSink(f.store.get(), /*may_use_standby=*/false, nullptr);
    ASSERT_NE(dynamic_cast<PmemTableImageSink*>(sink.get()), nullptr);
    EXPECT_FALSE(sink->TakesRuns());
    Feed(entries, runs, sink.get());
    const auto& outputs = sink->outputs();
    ASSERT_GE(outputs.size(), 4u);
    const uint64_t chunk_limit = OutputBlockChunks(f.options.table_size) * kPoolChunk - kPoolChunkHeader;
    for (size_t i = 0; i < outputs.size(); ++i) {
      const TableMeta& t = *outputs[i];
      EXPECT_EQ(t.residence, Residence::kPmem);
      EXPECT_EQ(t.pmem_layout, PmemLayout::kTableImage);
      EXPECT_LE(t.size, chunk_limit) << i;
      if (i + 1 < outputs.size()) {
        EXPECT_GE(t.size, f.options.table_size - 8192) << i;
      }
      EXPECT_EQ(std::string(f.store->pool()->Direct(t.offset) + t.size - ssd::kTableFooterSize, 8), "JGSWSST1");
      ValueType type;
      [[maybe_unused]] SequenceNumber found_sequence = 0;
      std::string value;
      ASSERT_TRUE(t.table->Get(ReadOptions(), t.largest, kMaxSequenceNumber, &type, &value, &found_sequence).ok()) << i;
    }
    ExpectOutputsServe(outputs, entries);
    EXPECT_EQ(static_cast<PmemTableImageSink*>(sink.get())->entries_added(), entries.size());
    EXPECT_EQ(sink->reservations().size(), outputs.size());
    for (auto& r : sink->reservations()) f.store->pool()->Cancel(&r);
  }
}

// The store's pmem_table_format picks the sink: KeySet blocks by default.
TEST(OutputSinkTest, TheTableFormatPicksThePmemSink) {
  Fixture keyset(/*with_pool=*/true);
  EXPECT_NE(dynamic_cast<PmemBlockSink*>(NewPmemSink(keyset.store.get(), false, nullptr).get()), nullptr);
  Fixture classic(/*with_pool=*/true, TableFormat::kClassic);
  EXPECT_NE(dynamic_cast<PmemTableImageSink*>(NewPmemSink(classic.store.get(), false, nullptr).get()), nullptr);
}

TEST(OutputSinkTest, AnAbandonedPmemSinkGivesItsSpaceBack) {
  for (TableFormat format : {TableFormat::kKeySet, TableFormat::kClassic}) {
    Fixture f(/*with_pool=*/true, format);
    const size_t before = FreeChunks(f.store->pool());
    ASSERT_GT(before, 10u);
    {
      std::unique_ptr<PmemSink> sink = NewPmemSink(f.store.get(), /*may_use_standby=*/false, nullptr);
      Feed(Entries(8000), /*runs=*/true, sink.get());
      ASSERT_GE(sink->reservations().size(), 4u);
      EXPECT_LT(FreeChunks(f.store->pool()), before);
      sink->Abandon();
      EXPECT_TRUE(sink->outputs().empty());
      EXPECT_TRUE(sink->reservations().empty());
    }
    EXPECT_EQ(FreeChunks(f.store->pool()), before);
    EXPECT_TRUE(f.store->pool()->Objects(pmem::ObjectType::kBlock).empty());
  }
}

// A pmem table image migrates to SSD as its bytes: the new table file is
// the image unchanged, and serves the entries.
TEST(OutputSinkTest, ATableImageBecomesATableFileAsItsBytes) {
  Fixture f(/*with_pool=*/true, TableFormat::kClassic);
  const auto entries = Entries(3000);
  PmemTableImageSink images(f.store.get(), /*may_use_standby=*/false, nullptr);
  Feed(entries, /*runs=*/false, &images);
  ASSERT_GE(images.outputs().size(), 1u);
  SsdTableSink ssd(f.store.get(), /*sync_each=*/true, nullptr);
  for (const TableRef& t : images.outputs()) {
    ASSERT_TRUE(ssd.AddTableImage(Slice(f.store->pool()->Direct(t->offset), t->size)).ok());
  }
  ASSERT_EQ(ssd.outputs().size(), images.outputs().size());
  EXPECT_EQ(ssd.entries_added(), entries.size());
  for (size_t i = 0; i < ssd.outputs().size(); ++i) {
    const TableMeta& image = *images.outputs()[i];
    const TableMeta& table = *ssd.outputs()[i];
    EXPECT_EQ(table.residence, Residence::kSsd);
    ASSERT_EQ(table.size, image.size);
    std::ifstream in(f.store->TablePath(table.number), std::ios::binary);
    std::string bytes(table.size, '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    EXPECT_EQ(bytes, std::string(f.store->pool()->Direct(image.offset), image.size)) << i;
    EXPECT_EQ(table.smallest, image.smallest);
    EXPECT_EQ(table.largest, image.largest);
  }
  ExpectOutputsServe(ssd.outputs(), entries);
  for (auto& r : images.reservations()) f.store->pool()->Cancel(&r);
  for (auto& file : ssd.files()) EXPECT_TRUE(file->Close().ok());
}

TEST(OutputSinkTest, SsdTablesServeTheEntriesAndAbandonDeletesThem) {
  for (bool runs : {false, true}) {
    Fixture f(/*with_pool=*/false);
    const auto entries = Entries(8000);
    {
      SsdTableSink sink(f.store.get(), /*sync_each=*/true, nullptr);
      Feed(entries, runs, &sink);
      ASSERT_GE(sink.outputs().size(), 4u);
      for (const TableRef& t : sink.outputs()) EXPECT_LE(t->size, f.options.table_size + 8192) << runs;
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

// After Abandon a sink is as new: fed again, its outputs are the second
// feed's alone (a merge that falls back from bytes to iterators reuses it).
TEST(OutputSinkTest, AnAbandonedSinkServesTheNextFeedAlone) {
  for (int kind : {0, 1, 2}) {  // SSD tables, pmem KeySet blocks, pmem table images
    const bool pmem = kind > 0;
    Fixture f(/*with_pool=*/pmem, kind == 2 ? TableFormat::kClassic : TableFormat::kKeySet);
    const auto first = Entries(6000);
    const auto second = Entries(3000);
    std::unique_ptr<OutputSink> sink;
    if (pmem) {
      sink = NewPmemSink(f.store.get(), /*may_use_standby=*/false, nullptr);
    } else {
      sink = std::make_unique<SsdTableSink>(f.store.get(), /*sync_each=*/true, nullptr);
    }
    Feed(first, /*runs=*/true, sink.get());
    sink->Abandon();
    Feed(second, /*runs=*/false, sink.get());
    ExpectOutputsServe(sink->outputs(), second);
    if (pmem) {
      auto* blocks = static_cast<PmemSink*>(sink.get());
      EXPECT_EQ(blocks->reservations().size(), blocks->outputs().size());
      for (auto& r : blocks->reservations()) f.store->pool()->Cancel(&r);
    } else {
      auto* tables = static_cast<SsdTableSink*>(sink.get());
      EXPECT_EQ(tables->files().size(), tables->outputs().size());
      EXPECT_EQ(tables->entries_added(), second.size());
    }
  }
}

}  // namespace
}  // namespace jigsaw
