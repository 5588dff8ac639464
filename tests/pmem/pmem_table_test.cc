// Pmem tables (pmem/pmem_table.h): a block served through the Table
// interface like the model; the NVM-timed decorator charging one random
// read per Get and per iterator positioning, and the block's bytes to the
// read bandwidth as iterators and scans step over its entries. And pmem
// tables opened from a pool object by their layout (version/version.h,
// OpenPmemTable): an SSD table image served in place like the model, and
// damage to one a Corruption at open. And media errors: pool memory that
// raises SIGBUS is a Corruption from every read, never a crash or a wrong
// answer.
#include "pmem/pmem_table.h"

#include <sys/mman.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "format/keyset_block.h"
#include "pmem/pool.h"
#include "ssd/table.h"
#include "tests/support/block_test_util.h"
#include "tests/support/db_test_util.h"
#include "util/coding.h"
#include "util/guarded_read.h"
#include "util/memory_file.h"
#include "version/version.h"

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
  f->table = NewPmemTable(std::move(reader), Slice(f->buffer.data(), f->size), 1, /*guard_reads=*/true);
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
      [[maybe_unused]] SequenceNumber found_sequence = 0;
      std::string value;
      const Status s = table.Get(ReadOptions(), entries[i].user_key, snapshot, &type, &value, &found_sequence);
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

// A block in a shared mapping of a memory file that a test can cut short
// beneath it: every page past the file's end then raises SIGBUS, as a
// poisoned line of persistent memory does.
class CuttableBlock {
 public:
  explicit CuttableBlock(const Fixture& f) : size_(f.size), bytes_((f.size + 4095) / 4096 * 4096) {
    fd_ = memfd_create("jigsaw-pmem-table-test", 0);
    EXPECT_GE(fd_, 0);
    EXPECT_EQ(ftruncate(fd_, static_cast<off_t>(bytes_)), 0);
    void* p = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    EXPECT_NE(p, MAP_FAILED);
    data_ = static_cast<char*>(p);
    std::memcpy(data_, f.buffer.data(), f.size);
  }
  ~CuttableBlock() {
    munmap(data_, bytes_);
    close(fd_);
  }
  Slice contents() const { return Slice(data_, size_); }
  // Pages from byte `at` (rounded down to a page) on raise SIGBUS.
  void CutAt(size_t at) { ASSERT_EQ(ftruncate(fd_, static_cast<off_t>(at / 4096 * 4096)), 0); }

 private:
  int fd_ = -1;
  const size_t size_;
  const size_t bytes_;
  char* data_ = nullptr;
};

TEST(PmemTableTest, MediaErrorsAreCorruptionNeverACrashOrAWrongAnswer) {
  JIGSAW_SKIP_FAULTS_UNDER_TSAN();
  Fixture f;
  MakeTable(11, &f);
  CuttableBlock block(f);
  std::unique_ptr<BlockReader> reader;
  ASSERT_TRUE(BlockReader::Open(BlockFormat::kKeySet, block.contents(), BlockReadOptions(), &reader).ok());
  const std::unique_ptr<Table> table = NewPmemTable(std::move(reader), block.contents(), 42, /*guard_reads=*/true);
  ExpectServesTheModel(*table, f.entries);

  // Half of the block unreadable: each Get answers as the model does or is
  // a Corruption naming the block.
  block.CutAt(f.size / 2);
  size_t answered = 0, faulted = 0;
  for (const TestEntry& e : f.entries) {
    const TestEntry* want = test::ModelGet(f.entries, e.user_key, kMaxSequenceNumber);
    ValueType type;
    SequenceNumber sequence = 0;
    std::string value;
    const Status s = table->Get(ReadOptions(), e.user_key, kMaxSequenceNumber, &type, &value, &sequence);
    if (s.IsCorruption()) {
      EXPECT_NE(s.ToString().find("block 42"), std::string::npos) << s.ToString();
      ++faulted;
      continue;
    }
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_NE(want, nullptr);
    EXPECT_EQ(type, want->type);
    if (type == ValueType::kValue) {
      EXPECT_EQ(value, want->value);
    }
    ++answered;
  }
  EXPECT_GT(faulted, 0u);

  // A forward scan stops at the first unreadable entry, for good, with the
  // entries before it right.
  std::unique_ptr<InternalIterator> it = table->NewIterator(ReadOptions());
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
    ASSERT_LT(i, f.entries.size());
    EXPECT_EQ(it->user_key().ToString(), f.entries[i].user_key);
    EXPECT_EQ(it->value().ToString(), f.entries[i].value);
  }
  EXPECT_LT(i, f.entries.size());
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());

  // Flushes, compactions and migrations see a failed scan before reading.
  std::unique_ptr<InternalIterator> scan = table->NewScanIterator(nullptr);
  scan->SeekToFirst();
  EXPECT_FALSE(scan->Valid());
  EXPECT_TRUE(scan->status().IsCorruption()) << scan->status().ToString();
  std::unique_ptr<BlockScan> blocks = table->NewBlockScan(nullptr);
  ASSERT_NE(blocks, nullptr);
  Slice bytes;
  EXPECT_FALSE(blocks->NextBlock(&bytes));
  EXPECT_TRUE(blocks->status().IsCorruption()) << blocks->status().ToString();
  EXPECT_TRUE(table->Validate().IsCorruption());
  (void)table->ApproximatePosition(f.entries.back().user_key);  // an estimate: answers, does not fault

  // All of it unreadable: every read is a Corruption.
  block.CutAt(0);
  for (size_t k = 0; k < f.entries.size(); k += 13) {
    ValueType type;
    SequenceNumber sequence = 0;
    std::string value;
    EXPECT_TRUE(table->Get(ReadOptions(), f.entries[k].user_key, kMaxSequenceNumber, &type, &value, &sequence)
                    .IsCorruption());
  }
  it = table->NewIterator(ReadOptions());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
}

TEST(PmemTableTest, DescribeUnreadableNamesTheCutPages) {
  JIGSAW_SKIP_FAULTS_UNDER_TSAN();
  Fixture f;
  MakeTable(12, &f);
  CuttableBlock block(f);
  EXPECT_EQ(DescribeUnreadable(block.contents().data(), f.size), "");
  block.CutAt(8192);
  EXPECT_EQ(DescribeUnreadable(block.contents().data(), f.size), "[8192, " + std::to_string(f.size) + ")");
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
  [[maybe_unused]] SequenceNumber found_sequence = 0;
  std::string value;
  (void)timed->Get(ReadOptions(), f.entries[0].user_key, kMaxSequenceNumber, &type, &value, &found_sequence);
  (void)timed->Get(ReadOptions(), "absent", kMaxSequenceNumber, &type, &value, &found_sequence);
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

// A pool with one reserved object holding `bytes`.
struct PoolObject {
  test::ScratchDir dir;
  std::unique_ptr<Pool> pool;
  Reservation object;
  uint64_t size = 0;  // of the bytes

  explicit PoolObject(const std::string& bytes, bool timed = false) : size(bytes.size()) {
    PoolOptions options;
    options.path = dir.path() + "/pool";
    options.size = 32 << 20;
    options.create_if_missing = true;
    options.comparator_name = BytewiseComparator()->Name();
    if (timed) options.timing = NvmTimingModel::Optane();
    EXPECT_TRUE(Pool::Open(options, &pool).ok());
    EXPECT_TRUE(pool->Reserve(ObjectType::kBlock, bytes.size(), /*zero=*/false, &object).ok());
    std::memcpy(object.data, bytes.data(), bytes.size());
  }
  ~PoolObject() { pool->Cancel(&object); }
  Status Open(PmemLayout layout, bool verify, TableRef* table) const {
    return OpenPmemTable(pool.get(), BytewiseComparator(), 7, layout, object.offset, size, verify,
                         /*hash_index=*/true, /*guard_reads=*/true, table);
  }
};

// `entries` as an SSD table file of classic blocks (inner blocks of 1 KiB).
std::string TableImage(const std::vector<TestEntry>& entries) {
  std::string image;
  StringWritableFile file(&image);
  ssd::TableBuilder builder(BlockBuilderOptions(), 1024, &file, BlockFormat::kClassic);
  for (const TestEntry& e : entries) EXPECT_TRUE(builder.Add(e.user_key, e.sequence, e.type, e.value).ok());
  ssd::TableInfo info;
  EXPECT_TRUE(builder.Finish(&info).ok());
  EXPECT_EQ(info.file_size, image.size());
  return image;
}

TEST(PmemTableImageTest, ServesTheImageInPlaceLikeTheModel) {
  std::mt19937_64 rng(11);
  const auto entries = test::RandomEntries(&rng, 2000, 8, 60);
  for (bool timed : {false, true}) {
    PoolObject object(TableImage(entries), timed);
    TableRef table;
    ASSERT_TRUE(object.Open(PmemLayout::kTableImage, /*verify=*/true, &table).ok());
    EXPECT_EQ(table->pmem_layout, PmemLayout::kTableImage);
    EXPECT_EQ(table->entries, entries.size());
    EXPECT_EQ(table->smallest, entries.front().user_key);
    EXPECT_EQ(table->largest, entries.back().user_key);
    ExpectServesTheModel(*table->table, entries);
    if (timed) {
      // Wrapped in the NVM-timed decorator, as a KeySet block is.
      EXPECT_GT(object.pool->timing()->random_reads_charged(), 0u);
    }
  }
}

// A damaged image -- its footer, its index or a block's bytes -- is a
// Corruption naming the table when it is opened with verification (as
// recovery opens every table), never a crash; footer and index damage is
// caught without.
TEST(PmemTableImageTest, DamageIsCorruptionAtOpen) {
  std::mt19937_64 rng(12);
  const auto entries = test::RandomEntries(&rng, 600, 8, 60);
  const std::string image = TableImage(entries);
  PoolObject object(image);
  const uint64_t index_offset = DecodeFixed64(image.data() + image.size() - ssd::kTableFooterSize + 16);
  std::vector<uint64_t> spots;
  for (uint64_t at = image.size() - ssd::kTableFooterSize; at < image.size(); ++at) spots.push_back(at);
  for (uint64_t at = index_offset; at < image.size() - ssd::kTableFooterSize; at += 5) spots.push_back(at);
  for (uint64_t at = 0; at < 64; at += 3) spots.push_back(at);  // the first block's entries (no padding before it)
  for (const uint64_t at : spots) {
    object.object.data[at] ^= 0x5a;
    TableRef table;
    const Status s = object.Open(PmemLayout::kTableImage, /*verify=*/true, &table);
    EXPECT_TRUE(s.IsCorruption()) << "byte " << at << ": " << s.ToString();
    EXPECT_NE(s.ToString().find("pmem table image 7"), std::string::npos) << s.ToString();
    if (at >= index_offset) {
      EXPECT_TRUE(object.Open(PmemLayout::kTableImage, /*verify=*/false, &table).IsCorruption()) << at;
    }
    object.object.data[at] ^= 0x5a;
  }
  TableRef table;
  ASSERT_TRUE(object.Open(PmemLayout::kTableImage, /*verify=*/true, &table).ok());
}

// The layout recorded for an object is the one it is read by: an image is
// not a KeySet block, nor a KeySet block an image.
TEST(PmemTableImageTest, AnObjectOpenedByTheWrongLayoutIsCorruption) {
  std::mt19937_64 rng(13);
  const auto entries = test::RandomEntries(&rng, 300, 8, 60);
  TableRef table;
  PoolObject image(TableImage(entries));
  EXPECT_TRUE(image.Open(PmemLayout::kKeySetBlock, /*verify=*/true, &table).IsCorruption());
  Fixture block;
  MakeTable(14, &block);
  PoolObject keyset(std::string(block.buffer.data(), block.size));
  EXPECT_TRUE(keyset.Open(PmemLayout::kTableImage, /*verify=*/true, &table).IsCorruption());
  ASSERT_TRUE(keyset.Open(PmemLayout::kKeySetBlock, /*verify=*/true, &table).ok());
  EXPECT_EQ(table->entries, block.entries.size());
}

}  // namespace
}  // namespace jigsaw::pmem
