// SSD tables (ssd/table.h): built through the file system, served through the
// block cache and through mmap, against a model; damaged files.
#include "ssd/table.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "format/keyset_entry.h"
#include "tests/support/block_test_util.h"
#include "util/checksum.h"
#include "util/profile_clock.h"
#include "tests/support/db_test_util.h"

namespace jigsaw::ssd {
namespace {

using test::TestEntry;

TableInfo BuildTable(const std::string& path, const std::vector<TestEntry>& entries, size_t block_size,
                     const BlockBuilderOptions& options = BlockBuilderOptions(),
                     BlockFormat format = BlockFormat::kKeySet) {
  std::unique_ptr<WritableFile> file;
  EXPECT_TRUE(FileSystem::Default()->NewWritableFile(path, &file).ok());
  TableBuilder builder(options, block_size, file.get(), format);
  for (const TestEntry& e : entries) EXPECT_TRUE(builder.Add(e.user_key, e.sequence, e.type, e.value).ok());
  TableInfo info;
  EXPECT_TRUE(builder.Finish(&info).ok());
  EXPECT_TRUE(file->Sync().ok());
  EXPECT_TRUE(file->Close().ok());
  return info;
}

Status OpenTable(const std::string& path, BlockCache* cache, bool mmap, std::unique_ptr<SsdTable>* table,
                 bool verify_checksums = true, bool mapped_gets = false) {
  std::unique_ptr<RandomAccessFile> file;
  Status s = FileSystem::Default()->NewRandomAccessFile(path, &file);
  if (!s.ok()) return s;
  SsdTableOptions options;
  options.cache = cache;
  options.use_mmap = mmap;
  options.verify_checksums = verify_checksums;
  options.mapped_gets = mapped_gets;
  return SsdTable::Open(options, std::move(file), 7, path, table);
}

// Iterates forward (every entry equal to the model's, in order) and back to
// the start; the iterator ends positioned before the first entry.
// One pass from SeekToFirst serves every entry of the model, in order.
void ExpectForwardPassLikeTheModel(InternalIterator* it, const std::vector<TestEntry>& entries) {
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
    ASSERT_LT(i, entries.size());
    ASSERT_EQ(it->user_key().ToString(), entries[i].user_key);
    ASSERT_EQ(it->sequence(), entries[i].sequence);
    ASSERT_EQ(it->value().ToString(), entries[i].value);
  }
  EXPECT_EQ(i, entries.size());
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
}

// Forwards as the model, then backwards over as many entries.
void ExpectIteratesLikeTheModel(InternalIterator* it, const std::vector<TestEntry>& entries) {
  ExpectForwardPassLikeTheModel(it, entries);
  size_t i = entries.size();
  for (it->SeekToLast(); it->Valid(); it->Prev()) --i;
  EXPECT_EQ(i, 0u);
}

// Gets of `entries` (present, absent, at snapshots) answer as the model.
void ExpectGetsLikeTheModel(const SsdTable& table, const std::vector<TestEntry>& entries, std::mt19937_64* rng) {
  for (int probe = 0; probe < 2000; ++probe) {
    const TestEntry& e = entries[(*rng)() % entries.size()];
    std::string key = e.user_key;
    if (probe % 3 == 0) key += "x";  // mostly absent
    const SequenceNumber snapshot = probe % 2 == 0 ? kMaxSequenceNumber : e.sequence;
    const TestEntry* expected = test::ModelGet(entries, key, snapshot);
    ValueType type;
    [[maybe_unused]] SequenceNumber found_sequence = 0;
    std::string value;
    const Status s = table.Get(ReadOptions(), key, snapshot, &type, &value, &found_sequence);
    if (expected == nullptr) {
      ASSERT_TRUE(s.IsNotFound()) << key << ": " << s.ToString();
    } else {
      ASSERT_TRUE(s.ok()) << s.ToString();
      ASSERT_EQ(type, expected->type);
      if (type == ValueType::kValue) {
        ASSERT_EQ(value, expected->value);
      }
    }
  }
}

class SsdTableTest : public ::testing::TestWithParam<bool> {  // param: mmap
 protected:
  test::ScratchDir dir_;
  BlockCache cache_{1 << 20};
};

TEST_P(SsdTableTest, ServesEveryEntryLikeTheModel) {
  std::mt19937_64 rng(42);
  const std::vector<TestEntry> entries = test::RandomEntries(&rng, 3000, 24, 600);
  const std::string path = dir_.path() + "/000007.jst";
  const TableInfo info = BuildTable(path, entries, 8 << 10);
  EXPECT_EQ(info.entries, entries.size());
  EXPECT_GT(info.blocks, 10u);
  EXPECT_EQ(info.smallest, entries.front().user_key);
  EXPECT_EQ(info.largest, entries.back().user_key);

  std::unique_ptr<SsdTable> table;
  ASSERT_TRUE(OpenTable(path, &cache_, GetParam(), &table).ok());
  EXPECT_EQ(table->num_entries(), entries.size());
  EXPECT_EQ(table->num_blocks(), info.blocks);
  EXPECT_TRUE(table->Validate().ok());

  auto it = table->NewIterator(ReadOptions());
  ExpectIteratesLikeTheModel(it.get(), entries);

  // Get and Seek at several snapshots, present and absent keys.
  ExpectGetsLikeTheModel(*table, entries, &rng);
  for (int probe = 0; probe < 2000; ++probe) {
    const TestEntry& e = entries[rng() % entries.size()];
    std::string key = e.user_key;
    if (probe % 3 == 0) key += "x";  // mostly absent
    const SequenceNumber snapshot = probe % 2 == 0 ? kMaxSequenceNumber : e.sequence;
    it->Seek(key, snapshot);
    auto first = std::find_if(entries.begin(), entries.end(), [&](const TestEntry& x) {
      return x.user_key > key || (x.user_key == key && x.sequence <= snapshot);
    });
    if (first == entries.end()) {
      EXPECT_FALSE(it->Valid());
    } else {
      ASSERT_TRUE(it->Valid());
      EXPECT_EQ(it->user_key().ToString(), first->user_key);
      EXPECT_EQ(it->sequence(), first->sequence);
    }
  }
}

// mapped_gets: Gets read the blocks in place from the mapping (the block
// cache sees none of them), KeySet and classic tables alike, large blocks
// too; when the file loses its pages behind the table (truncated here, as
// an I/O error would), a Get returns IOError naming the file and the
// process goes on; reads that verify checksums go through the cache.
TEST(SsdTableMappedGetsTest, GetsReadTheMappingAndReportALostPageAsIOError) {
  JIGSAW_SKIP_FAULTS_UNDER_TSAN();
  test::ScratchDir dir;
  std::mt19937_64 rng(44);
  const std::vector<TestEntry> entries = test::RandomEntries(&rng, 3000, 24, 600);
  for (const BlockFormat format : {BlockFormat::kKeySet, BlockFormat::kClassic}) {
    for (const size_t block_size : {size_t{8} << 10, size_t{1} << 20}) {  // 1 MiB: large blocks
      if (format == BlockFormat::kClassic && block_size > (8 << 10)) continue;
      SCOPED_TRACE(std::string(format == BlockFormat::kKeySet ? "keyset " : "classic ") + std::to_string(block_size));
      const std::string path = dir.path() + "/000007.jst";
      BuildTable(path, entries, block_size, BlockBuilderOptions(), format);
      BlockCache cache(1 << 20);
      std::unique_ptr<SsdTable> table;
      ASSERT_TRUE(OpenTable(path, &cache, /*mmap=*/false, &table, /*verify_checksums=*/false, /*mapped_gets=*/true)
                      .ok());
      ExpectGetsLikeTheModel(*table, entries, &rng);
      EXPECT_EQ(cache.hits() + cache.misses(), 0u);

      ReadOptions verify;
      verify.verify_checksums = true;
      ValueType type;
      [[maybe_unused]] SequenceNumber found_sequence = 0;
      std::string value;
      ASSERT_TRUE(table->Get(verify, entries[0].user_key, kMaxSequenceNumber, &type, &value, &found_sequence).ok());
      if (block_size <= kLargeBlockBytes) {
        EXPECT_EQ(cache.misses(), 1u);
      }

      ASSERT_EQ(::truncate(path.c_str(), 0), 0);
      int faults = 0;
      for (size_t i = 0; i < entries.size(); i += 97) {
        value = "before";
        const Status s = table->Get(ReadOptions(), entries[i].user_key, kMaxSequenceNumber, &type, &value, &found_sequence);
        if (s.IsNotFound()) continue;  // ruled out by the filter, which is in DRAM
        ASSERT_TRUE(s.IsIOError()) << s.ToString();
        EXPECT_NE(s.ToString().find(path), std::string::npos) << s.ToString();
        ++faults;
      }
      EXPECT_GT(faults, 20);
      table.reset();
      std::filesystem::remove(path);
    }
  }
}

// Tables written before format version 2 hold version 1 KeySet blocks: they
// are served the same way.
TEST_P(SsdTableTest, ServesATableOfVersionOneBlocks) {
  std::mt19937_64 rng(43);
  const std::vector<TestEntry> entries = test::RandomEntries(&rng, 2000, 24, 300);
  const std::string path = dir_.path() + "/000007.jst";
  BlockBuilderOptions options;
  options.keyset_version = 1;
  BuildTable(path, entries, 4096, options);
  std::unique_ptr<SsdTable> table;
  ASSERT_TRUE(OpenTable(path, &cache_, GetParam(), &table).ok());
  EXPECT_TRUE(table->Validate().ok());
  auto it = table->NewIterator(ReadOptions());
  ExpectIteratesLikeTheModel(it.get(), entries);
  for (size_t i = 0; i < entries.size(); i += 13) {
    const TestEntry* want = test::ModelGet(entries, entries[i].user_key, kMaxSequenceNumber);
    ValueType type;
    [[maybe_unused]] SequenceNumber found_sequence = 0;
    std::string value;
    ASSERT_TRUE(table->Get(ReadOptions(), entries[i].user_key, kMaxSequenceNumber, &type, &value, &found_sequence).ok());
    EXPECT_EQ(type, want->type);
    if (type == ValueType::kValue) {
      EXPECT_EQ(value, want->value);
    }
  }
}

// Runs of a KeySet v2 block appended as bytes make a table that serves
// them like added entries, its filter included.
TEST_P(SsdTableTest, RunsAppendedAsBytesServeLikeAddedEntries) {
  std::vector<TestEntry> entries;
  for (int i = 0; i < 3000; ++i) {
    char key[16];
    std::snprintf(key, sizeof(key), "run%06d", i);
    entries.push_back({key, 5, ValueType::kValue, std::string(20 + i % 50, static_cast<char>('a' + i % 26))});
  }
  test::AlignedBuffer block;
  size_t size = 0;
  ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, entries, {}, &block, &size).ok());
  std::unique_ptr<BlockReader> reader;
  ASSERT_TRUE(BlockReader::Open(BlockFormat::kKeySet, Slice(block.data(), size), {}, &reader).ok());

  const std::string path = dir_.path() + "/000007.jst";
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(FileSystem::Default()->NewWritableFile(path, &file).ok());
  TableBuilder builder(BlockBuilderOptions(), 4096, file.get());
  ASSERT_TRUE(builder.TakesRuns());
  auto it = reader->NewIterator();
  size_t done = 0;
  for (it->SeekToFirst(); it->Valid();) {
    if (done % 2 == 1) {  // every other step one entry added the usual way
      ASSERT_TRUE(builder.Add(it->user_key(), it->sequence(), it->type(), it->value()).ok());
      it->Next();
      ++done;
      continue;
    }
    EntryRun run;
    const uint32_t n = it->PeekRun(nullptr, 0, 1 + done % 200, &run);
    ASSERT_GT(n, 0u);
    uint32_t taken = 0;
    ASSERT_TRUE(builder.AppendRun(run, UINT64_MAX, &taken).ok());
    ASSERT_GT(taken, 0u);
    it->SkipRun(taken);
    done += taken;
  }
  EXPECT_EQ(done, entries.size());
  TableInfo info;
  ASSERT_TRUE(builder.Finish(&info).ok());
  EXPECT_GT(info.blocks, 10u);
  ASSERT_TRUE(file->Sync().ok());
  ASSERT_TRUE(file->Close().ok());
  std::unique_ptr<SsdTable> table;
  ASSERT_TRUE(OpenTable(path, &cache_, GetParam(), &table).ok());
  EXPECT_TRUE(table->Validate().ok());
  auto all = table->NewIterator(ReadOptions());
  ExpectIteratesLikeTheModel(all.get(), entries);
  for (size_t i = 0; i < entries.size(); i += 17) {
    ValueType type;
    [[maybe_unused]] SequenceNumber found_sequence = 0;
    std::string value;
    ASSERT_TRUE(table->Get(ReadOptions(), entries[i].user_key, kMaxSequenceNumber, &type, &value, &found_sequence).ok());
    EXPECT_EQ(value, entries[i].value);
  }
  ValueType type;
  [[maybe_unused]] SequenceNumber found_sequence = 0;
  std::string value;
  EXPECT_TRUE(table->Get(ReadOptions(), "run0000005x", kMaxSequenceNumber, &type, &value, &found_sequence).IsNotFound());
}

// A file whose every append takes 2 ms (and keeps nothing).
class SlowFile final : public WritableFile {
 public:
  Status Append(const Slice& data) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    size_ += data.size();
    ++appends;
    return Status::OK();
  }
  Status Sync() override { return Status::OK(); }
  Status Close() override { return Status::OK(); }
  uint64_t Size() const override { return size_; }
  int appends = 0;

 private:
  uint64_t size_ = 0;
};

// The profile's encode phase is the block format's work: blocks a run fills
// and ends are written inside AppendRun, and that write time is the write
// phase's (write_nanos), not encode's.
// A table holding one large KeySet block as its bytes (a block migrated
// from pmem): served like the model through point lookups in pieces,
// without filling the cache, and by iterators reading the block whole.
TEST_P(SsdTableTest, AWholeLargeBlockServesLikeTheModelWithoutTheCache) {
  std::mt19937_64 rng(44);
  const std::vector<TestEntry> entries = test::RandomEntries(&rng, 4000, 24, 300);
  test::AlignedBuffer block_buffer;
  size_t block_size = 0;
  ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, entries, BlockBuilderOptions(), &block_buffer, &block_size).ok());
  ASSERT_GT(block_size, kLargeBlockBytes);
  const Slice block(block_buffer.data(), block_size);

  const std::string path = dir_.path() + "/000007.jst";
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(FileSystem::Default()->NewWritableFile(path, &file).ok());
  TableBuilder builder(BlockBuilderOptions(), 8 << 10, file.get());
  ASSERT_TRUE(builder.AddWholeBlock(block, entries.front().user_key, entries.back().user_key).ok());
  TableInfo info;
  ASSERT_TRUE(builder.Finish(&info).ok());
  ASSERT_TRUE(file->Close().ok());
  EXPECT_EQ(info.entries, entries.size());
  EXPECT_EQ(info.blocks, 1u);
  // The block is in the file byte for byte.
  std::ifstream in(path, std::ios::binary);
  const std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GE(contents.size(), block_size);
  EXPECT_EQ(contents.compare(0, block_size, block.data(), block_size), 0);

  std::unique_ptr<SsdTable> table;
  ASSERT_TRUE(OpenTable(path, &cache_, GetParam(), &table, /*verify_checksums=*/false).ok());
  EXPECT_EQ(table->num_entries(), entries.size());
  EXPECT_TRUE(table->Validate().ok());
  auto it = table->NewIterator(ReadOptions());
  ExpectIteratesLikeTheModel(it.get(), entries);
  it.reset();
  // Positions inside the one block follow the keys' ranks.
  double last_position = 0;
  for (size_t rank = 0; rank < entries.size(); rank += 97) {
    const double position = table->ApproximatePosition(entries[rank].user_key);
    EXPECT_GE(position, last_position) << rank;
    EXPECT_NEAR(position, static_cast<double>(rank) / static_cast<double>(entries.size()), 0.1) << rank;
    last_position = position;
  }
  for (int probe = 0; probe < 3000; ++probe) {
    const TestEntry& e = entries[rng() % entries.size()];
    std::string key = e.user_key;
    if (probe % 3 == 0) key += "x";
    const SequenceNumber snapshot = probe % 2 == 0 ? kMaxSequenceNumber : e.sequence;
    const TestEntry* expected = test::ModelGet(entries, key, snapshot);
    ReadOptions read_options;
    read_options.verify_checksums = probe % 5 == 0;  // reads the block whole
    ValueType type;
    [[maybe_unused]] SequenceNumber found_sequence = 0;
    std::string value;
    const Status s = table->Get(read_options, key, snapshot, &type, &value, &found_sequence);
    if (expected == nullptr) {
      ASSERT_TRUE(s.IsNotFound()) << key << " " << s.ToString();
      continue;
    }
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(type, expected->type);
    if (type == ValueType::kValue) {
      ASSERT_EQ(value, expected->value);
    }
  }
  EXPECT_EQ(cache_.usage(), 0u);
  std::vector<BlockFetch> fetches;
  table->PlanGet(entries[7].user_key, &fetches);
  EXPECT_TRUE(fetches.empty());  // no batched read of a large block
}

// A file that counts the bytes read through Read (not through its mapping).
// `populates`: whether PopulateMapping reaches the real file (or fails, as
// on a kernel without MADV_POPULATE_READ).
class CountingFile final : public RandomAccessFile {
 public:
  explicit CountingFile(std::unique_ptr<RandomAccessFile> base, bool populates = true)
      : base_(std::move(base)), populates_(populates) {}
  Status Read(uint64_t offset, size_t n, char* scratch, Slice* result) const override {
    read_bytes_ += n;
    return base_->Read(offset, n, scratch, result);
  }
  uint64_t Size() const override { return base_->Size(); }
  const char* Mapping() override { return base_->Mapping(); }
  bool PopulateMapping() override { return populates_ && base_->PopulateMapping(); }
  int fd() const override { return base_->fd(); }
  uint64_t read_bytes() const { return read_bytes_; }

 private:
  std::unique_ptr<RandomAccessFile> base_;
  const bool populates_;
  mutable std::atomic<uint64_t> read_bytes_{0};
};

// Opens the table at `path` mapped for Gets, without checksums, through a
// CountingFile (*file, owned by the table).
void OpenCountedTable(const std::string& path, uint64_t number, BlockCache* cache, bool populates,
                      CountingFile** file, std::unique_ptr<SsdTable>* table) {
  std::unique_ptr<RandomAccessFile> base;
  ASSERT_TRUE(FileSystem::Default()->NewRandomAccessFile(path, &base).ok());
  auto counting = std::make_unique<CountingFile>(std::move(base), populates);
  *file = counting.get();
  SsdTableOptions options;
  options.cache = cache;
  options.verify_checksums = false;
  options.mapped_gets = true;
  ASSERT_TRUE(SsdTable::Open(options, std::move(counting), number, path, table).ok());
}

// A user's iterator over a table mapped for Gets reads a block that is not
// in the cache in place, copying out each entry it lands on: a seek reads
// nothing through the file (it read the block before -- megabytes for a
// large block -- on every seek), and every move answers as the model.
// Stepping on in one block it reads the block whole, once: a small block
// copied from the mapping into the cache, a large one read from the file.
// A page the mapping cannot supply is an IOError.
TEST(SsdTableMappedIteratorTest, SeeksReadOnlyWhatTheyTouch) {
  JIGSAW_SKIP_FAULTS_UNDER_TSAN();
  std::mt19937_64 rng(45);
  const std::vector<TestEntry> entries = test::RandomEntries(&rng, 6000, 24, 300);
  ASSERT_GT(entries.size(), size_t{kLargeBlockStepsBeforeWholeRead} + 100);
  for (const int kind : {0, 1, 2}) {  // 8 KiB KeySet blocks, 8 KiB classic blocks, one large KeySet block
    const bool large = kind == 2;
    SCOPED_TRACE(kind == 0 ? "8 KiB KeySet blocks" : kind == 1 ? "8 KiB classic blocks" : "one large block");
    test::ScratchDir dir;
    const std::string path = dir.path() + "/000007.jst";
    size_t block_size = 0;
    if (large) {
      test::AlignedBuffer block_buffer;
      ASSERT_TRUE(
          test::BuildBlock(BlockFormat::kKeySet, entries, BlockBuilderOptions(), &block_buffer, &block_size).ok());
      ASSERT_GT(block_size, kLargeBlockBytes);
      std::unique_ptr<WritableFile> file;
      ASSERT_TRUE(FileSystem::Default()->NewWritableFile(path, &file).ok());
      TableBuilder builder(BlockBuilderOptions(), 8 << 10, file.get());
      ASSERT_TRUE(builder
                      .AddWholeBlock(Slice(block_buffer.data(), block_size), entries.front().user_key,
                                     entries.back().user_key)
                      .ok());
      TableInfo info;
      ASSERT_TRUE(builder.Finish(&info).ok());
      ASSERT_TRUE(file->Close().ok());
    } else {
      BuildTable(path, entries, 8 << 10, BlockBuilderOptions(), kind == 1 ? BlockFormat::kClassic : BlockFormat::kKeySet);
    }
    BlockCache cache(64 << 20);
    CountingFile* file = nullptr;
    std::unique_ptr<SsdTable> table;
    ASSERT_NO_FATAL_FAILURE(OpenCountedTable(path, 7, &cache, /*populates=*/true, &file, &table));
    const uint64_t read_at_open = file->read_bytes();

    for (int probe = 0; probe < 300; ++probe) {
      std::string key = entries[rng() % entries.size()].user_key;
      if (probe % 3 == 0) key += "x";  // between two keys
      // The model's answer: the first entry whose user key is >= key.
      size_t at = 0;
      while (at < entries.size() && entries[at].user_key < key) ++at;
      auto it = table->NewIterator(ReadOptions());
      it->Seek(key, kMaxSequenceNumber);
      for (size_t step = 0; step < 5 && at + step < entries.size(); ++step) {
        ASSERT_TRUE(it->Valid()) << key;
        ASSERT_EQ(it->user_key().ToString(), entries[at + step].user_key);
        ASSERT_EQ(it->sequence(), entries[at + step].sequence);
        ASSERT_EQ(it->value().ToString(), entries[at + step].value);
        it->Next();
      }
      if (at > 0 && at + 5 < entries.size()) {
        it->Prev();
        ASSERT_TRUE(it->Valid());
        ASSERT_EQ(it->user_key().ToString(), entries[at + 4].user_key);
      }
      ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    }
    EXPECT_EQ(file->read_bytes(), read_at_open);  // nothing read through the file
    EXPECT_EQ(cache.usage(), 0u);                 // nor put in the cache

    // Whole passes, forwards and back, answer as the model. The large block
    // is read whole once; small blocks stepped through are copied from the
    // mapping into the cache, until the iterator scans (read windows).
    auto it = table->NewIterator(ReadOptions());
    ExpectIteratesLikeTheModel(it.get(), entries);
    size_t back = entries.size();
    for (it->SeekToLast(); it->Valid(); it->Prev()) {
      ASSERT_GT(back, 0u);
      --back;
      ASSERT_EQ(it->user_key().ToString(), entries[back].user_key);
      ASSERT_EQ(it->sequence(), entries[back].sequence);
      ASSERT_EQ(it->value().ToString(), entries[back].value);
    }
    EXPECT_EQ(back, 0u);
    ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    if (large) {
      EXPECT_EQ(file->read_bytes(), read_at_open + block_size);
      EXPECT_EQ(cache.usage(), 0u);
    } else {
      EXPECT_GT(cache.usage(), 0u);
    }
    it.reset();

    ASSERT_EQ(::truncate(path.c_str(), 0), 0);
    cache.EraseTable(7, table->num_blocks());
    auto cut = table->NewIterator(ReadOptions());
    cut->Seek(entries[entries.size() / 2].user_key, kMaxSequenceNumber);
    EXPECT_FALSE(cut->Valid());
    EXPECT_TRUE(cut->status().IsIOError()) << cut->status().ToString();
    EXPECT_NE(cut->status().ToString().find(path), std::string::npos) << cut->status().ToString();
  }
}

TEST(SsdTableWholeBlockTest, AWholeBlockMustBeTheOnlyBlockOfAKeySetTable) {
  test::ScratchDir dir;
  std::mt19937_64 rng(45);
  const std::vector<TestEntry> entries = test::RandomEntries(&rng, 100, 16, 50);
  test::AlignedBuffer block_buffer;
  size_t block_size = 0;
  ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, entries, BlockBuilderOptions(), &block_buffer, &block_size).ok());
  const Slice block(block_buffer.data(), block_size);
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(FileSystem::Default()->NewWritableFile(dir.path() + "/1.jst", &file).ok());
  {
    TableBuilder builder(BlockBuilderOptions(), 8 << 10, file.get());
    ASSERT_TRUE(builder.Add("a", 1, ValueType::kValue, "v").ok());
    EXPECT_TRUE(builder.AddWholeBlock(block, "b", "c").IsInvalidArgument());
  }
  {
    TableBuilder builder(BlockBuilderOptions(), 8 << 10, file.get(), BlockFormat::kClassic);
    EXPECT_TRUE(builder.AddWholeBlock(block, "b", "c").IsInvalidArgument());
  }
  {
    TableBuilder builder(BlockBuilderOptions(), 8 << 10, file.get());
    std::string garbage(block.data(), block.size());
    garbage[0] ^= 1;  // the magic
    EXPECT_TRUE(builder.AddWholeBlock(garbage, "b", "c").IsCorruption());
  }
  (void)file->Close();
}

TEST(SsdTableWholeBlockTest, DamageInALargeBlockIsFoundByChecksummedReadsAndValidate) {
  test::ScratchDir dir;
  BlockCache cache(1 << 20);
  std::mt19937_64 rng(46);
  const std::vector<TestEntry> entries = test::RandomEntries(&rng, 3000, 24, 200);
  test::AlignedBuffer block_buffer;
  size_t block_size = 0;
  ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, entries, BlockBuilderOptions(), &block_buffer, &block_size).ok());
  const std::string path = dir.path() + "/000008.jst";
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(FileSystem::Default()->NewWritableFile(path, &file).ok());
  TableBuilder builder(BlockBuilderOptions(), 8 << 10, file.get());
  ASSERT_TRUE(
      builder.AddWholeBlock(Slice(block_buffer.data(), block_size), entries.front().user_key, entries.back().user_key)
          .ok());
  TableInfo info;
  ASSERT_TRUE(builder.Finish(&info).ok());
  ASSERT_TRUE(file->Close().ok());
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(200);  // inside the value buffer
    char c = 0;
    f.read(&c, 1);
    c ^= 0x40;
    f.seekp(200);
    f.write(&c, 1);
  }
  std::unique_ptr<SsdTable> table;
  ASSERT_TRUE(OpenTable(path, &cache, false, &table, /*verify_checksums=*/false).ok());
  EXPECT_TRUE(table->Validate().IsCorruption());
  ReadOptions verify;
  verify.verify_checksums = true;
  ValueType type;
  [[maybe_unused]] SequenceNumber found_sequence = 0;
  std::string value;
  const Status s = table->Get(verify, entries[5].user_key, kMaxSequenceNumber, &type, &value, &found_sequence);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(path), std::string::npos) << s.ToString();
}

TEST(SsdTableProfileTest, AppendRunChargesFileWritesToWriteNotEncode) {
  std::vector<TestEntry> entries;
  for (int i = 0; i < 2000; ++i) {
    char key[16];
    std::snprintf(key, sizeof(key), "run%06d", i);
    entries.push_back({key, 5, ValueType::kValue, std::string(100, 'v')});
  }
  test::AlignedBuffer block;
  size_t size = 0;
  ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, entries, {}, &block, &size).ok());
  std::unique_ptr<BlockReader> reader;
  ASSERT_TRUE(BlockReader::Open(BlockFormat::kKeySet, Slice(block.data(), size), {}, &reader).ok());
  SlowFile file;
  SampledPhase encode;
  TableBuilder builder(BlockBuilderOptions(), 4096, &file);
  builder.set_profile(&encode);
  auto it = reader->NewIterator();
  it->SeekToFirst();
  while (it->Valid()) {
    EntryRun run;
    const uint32_t n = it->PeekRun(nullptr, 0, 500, &run);
    ASSERT_GT(n, 0u);
    uint32_t taken = 0;
    ASSERT_TRUE(builder.AppendRun(run, UINT64_MAX, &taken).ok());
    ASSERT_GT(taken, 0u);
    it->SkipRun(taken);
  }
  const int appends_in_runs = file.appends;
  ASSERT_GT(appends_in_runs, 20);  // ~60 blocks of 4 KiB were written inside AppendRun
  const uint64_t slept_ns = uint64_t{2'000'000} * static_cast<uint64_t>(appends_in_runs);
  EXPECT_GE(builder.write_nanos(), slept_ns);
  EXPECT_LT(encode.EstimatedNanos(), slept_ns / 2);
}

TEST_P(SsdTableTest, KeyVersionsLargerThanABlockSpanBlocks) {
  // One key with many large versions: they cannot fit one block.
  std::vector<TestEntry> entries;
  for (int v = 200; v >= 1; --v) entries.push_back({"hot", static_cast<SequenceNumber>(v), ValueType::kValue, std::string(500, 'a' + v % 26)});
  entries.push_back({"later", 5, ValueType::kValue, "x"});
  const std::string path = dir_.path() + "/000008.jst";
  const TableInfo info = BuildTable(path, entries, 4 << 10);
  EXPECT_GT(info.blocks, 2u);
  std::unique_ptr<SsdTable> table;
  ASSERT_TRUE(OpenTable(path, &cache_, GetParam(), &table).ok());
  for (SequenceNumber snapshot : {SequenceNumber{200}, SequenceNumber{100}, SequenceNumber{3}, SequenceNumber{1}}) {
    ValueType type;
    [[maybe_unused]] SequenceNumber found_sequence = 0;
    std::string value;
    ASSERT_TRUE(table->Get(ReadOptions(), "hot", snapshot, &type, &value, &found_sequence).ok());
    EXPECT_EQ(value, std::string(500, 'a' + snapshot % 26));
    auto it = table->NewIterator(ReadOptions());
    it->Seek("hot", snapshot);
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->sequence(), snapshot);
  }
  ValueType type;
  [[maybe_unused]] SequenceNumber found_sequence = 0;
  std::string value;
  EXPECT_TRUE(table->Get(ReadOptions(), "hot", 0, &type, &value, &found_sequence).IsNotFound());
}

// Through the block cache, whose counters show every block a Get looks at.
// A scan iterator (compaction inputs) reads windows of adjacent blocks past
// the block cache: same entries, nothing cached; Seek and Prev still work; a
// file cut short after it was opened is Corruption naming it.
TEST(SsdTableScanTest, ScanIteratorReadsWindowsWithoutFillingTheCache) {
  test::ScratchDir dir;
  BlockCache cache(8 << 20);
  std::mt19937_64 rng(5);
  const std::vector<TestEntry> entries = test::RandomEntries(&rng, 4000, 24, 600);
  const std::string path = dir.path() + "/000007.jst";
  const TableInfo info = BuildTable(path, entries, 8 << 10);
  ASSERT_GT(info.file_size, 3 * kScanWindowBytes);  // several windows
  std::unique_ptr<SsdTable> table;
  ASSERT_TRUE(OpenTable(path, &cache, /*mmap=*/false, &table).ok());
  auto it = table->NewScanIterator(/*decode=*/nullptr);
  ExpectIteratesLikeTheModel(it.get(), entries);
  EXPECT_EQ(cache.usage(), 0u);
  const TestEntry& middle = entries[entries.size() / 2];
  it->Seek(middle.user_key, kMaxSequenceNumber);
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->user_key().ToString(), middle.user_key);
  EXPECT_EQ(cache.usage(), 0u);

  std::filesystem::resize_file(path, info.file_size / 2);
  auto cut = table->NewScanIterator(/*decode=*/nullptr);
  size_t read = 0;
  for (cut->SeekToFirst(); cut->Valid(); cut->Next()) ++read;
  EXPECT_LT(read, entries.size());
  EXPECT_TRUE(cut->status().IsCorruption()) << cut->status().ToString();
  EXPECT_NE(cut->status().ToString().find(path), std::string::npos) << cut->status().ToString();
}

// A user's iterator reads through the block cache until it has stepped
// forward into kReadAheadBlocks blocks in a row; then it reads windows,
// filling the cache no more. Seeks and steps back read through the cache
// again, and every entry is served right throughout.
TEST(SsdTableScanTest, AUserIteratorReadingOnSwitchesToWindows) {
  test::ScratchDir dir;
  BlockCache cache(64 << 20);
  std::mt19937_64 rng(6);
  const std::vector<TestEntry> entries = test::RandomEntries(&rng, 4000, 24, 600);
  const std::string path = dir.path() + "/000008.jst";
  const TableInfo info = BuildTable(path, entries, 4 << 10);
  ASSERT_GT(info.blocks, 4 * kReadAheadBlocks);
  std::unique_ptr<SsdTable> table;
  ASSERT_TRUE(OpenTable(path, &cache, /*mmap=*/false, &table).ok());
  auto it = table->NewIterator(ReadOptions());
  ExpectIteratesLikeTheModel(it.get(), entries);  // forwards, then backwards
  // Backwards, every block went through the cache.
  EXPECT_GT(cache.usage(), 0u);
  // Forwards only: the first blocks (and their read-ahead) go through the
  // cache, the rest through windows.
  BlockCache fresh_cache(64 << 20);
  std::unique_ptr<SsdTable> fresh;
  ASSERT_TRUE(OpenTable(path, &fresh_cache, /*mmap=*/false, &fresh).ok());
  auto scan = fresh->NewIterator(ReadOptions());
  ASSERT_NO_FATAL_FAILURE(ExpectForwardPassLikeTheModel(scan.get(), entries));
  EXPECT_LE(fresh_cache.usage(), uint64_t{3 * kReadAheadBlocks} * (8 << 10));  // not the whole table
  // A seek into the middle and steps both ways from there still serve the
  // model.
  const size_t middle = entries.size() / 2;
  scan->Seek(entries[middle].user_key, entries[middle].sequence);
  for (size_t k = middle; k < middle + 300 && k < entries.size(); ++k, scan->Next()) {
    ASSERT_TRUE(scan->Valid());
    ASSERT_EQ(scan->user_key().ToString(), entries[k].user_key);
  }
  for (size_t k = 0; k < 200; ++k) scan->Prev();
  ASSERT_TRUE(scan->Valid());
  EXPECT_EQ(scan->user_key().ToString(), entries[middle + 100].user_key);
}

// A sequential iterator (the level stepped into this table after reading
// the one before it whole) reads windows from its first block on: a pass
// leaves the block cache untouched. Seeks and steps back still use it.
TEST(SsdTableScanTest, ASequentialIteratorReadsWindowsFromTheFirstBlock) {
  test::ScratchDir dir;
  std::mt19937_64 rng(7);
  const std::vector<TestEntry> entries = test::RandomEntries(&rng, 3000, 24, 600);
  const std::string path = dir.path() + "/000009.jst";
  const TableInfo info = BuildTable(path, entries, 4 << 10);
  ASSERT_GT(info.blocks, 4 * kReadAheadBlocks);
  BlockCache cache(64 << 20);
  std::unique_ptr<SsdTable> table;
  ASSERT_TRUE(OpenTable(path, &cache, /*mmap=*/false, &table).ok());
  auto it = table->NewSequentialIterator(ReadOptions());
  ASSERT_NO_FATAL_FAILURE(ExpectForwardPassLikeTheModel(it.get(), entries));
  EXPECT_EQ(cache.usage(), 0u);
  EXPECT_EQ(cache.hits() + cache.misses(), 0u);
  ExpectIteratesLikeTheModel(it.get(), entries);  // and the rest works as NewIterator's
  EXPECT_GT(cache.usage(), 0u);
}

// Gets each entry whose index is in [from, to) at its own sequence, so that
// the blocks holding them have been read through the table's mapping.
void GetEntries(const SsdTable& table, const std::vector<TestEntry>& entries, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    ValueType type;
    [[maybe_unused]] SequenceNumber found_sequence = 0;
    std::string value;
    ASSERT_TRUE(table.Get(ReadOptions(), entries[i].user_key, entries[i].sequence, &type, &value, &found_sequence).ok());
    ASSERT_EQ(type, entries[i].type);
  }
}

// With Gets mapped, a scan copies a window from the mapping when Gets have
// read every block in it, and reads it from the file otherwise: passes over
// a cold, a half-warm and a warm table serve the model alike.
TEST(SsdTableScanTest, ScansServeTheModelWhicheverWayTheirWindowsAreFilled) {
  test::ScratchDir dir;
  std::mt19937_64 rng(8);
  const std::vector<TestEntry> entries = test::RandomEntries(&rng, 4000, 24, 600);
  const std::string path = dir.path() + "/000010.jst";
  const TableInfo info = BuildTable(path, entries, 8 << 10);
  ASSERT_GT(info.file_size, 3 * kScanWindowBytes);
  BlockCache cache(64 << 20);
  std::unique_ptr<SsdTable> table;
  ASSERT_TRUE(OpenTable(path, &cache, /*mmap=*/false, &table, /*verify_checksums=*/false, /*mapped_gets=*/true).ok());
  for (size_t warm_to : {size_t{0}, entries.size() / 2, entries.size()}) {
    SCOPED_TRACE("Gets of the first " + std::to_string(warm_to) + " entries");
    ASSERT_NO_FATAL_FAILURE(GetEntries(*table, entries, 0, warm_to));
    auto sequential = table->NewSequentialIterator(ReadOptions());
    ASSERT_NO_FATAL_FAILURE(ExpectForwardPassLikeTheModel(sequential.get(), entries));
    auto user = table->NewIterator(ReadOptions());  // switches to windows after a few blocks
    ASSERT_NO_FATAL_FAILURE(ExpectForwardPassLikeTheModel(user.get(), entries));
    auto scan = table->NewScanIterator(/*decode=*/nullptr);
    ASSERT_NO_FATAL_FAILURE(ExpectForwardPassLikeTheModel(scan.get(), entries));
  }
}

// Which way a window was filled shows when the file loses its bytes: a
// window read from the file comes back short (Corruption), a window copied
// from the mapping faults under the guard (IOError). Either names the file.
TEST(SsdTableScanTest, AWarmTableCopiesItsWindowsFromTheMapping) {
  JIGSAW_SKIP_FAULTS_UNDER_TSAN();
  test::ScratchDir dir;
  std::mt19937_64 rng(9);
  const std::vector<TestEntry> entries = test::RandomEntries(&rng, 4000, 24, 600);
  const std::string path = dir.path() + "/000011.jst";
  BuildTable(path, entries, 8 << 10);
  BlockCache cache(64 << 20);
  std::unique_ptr<SsdTable> cold, warm;
  ASSERT_TRUE(OpenTable(path, &cache, /*mmap=*/false, &cold, /*verify_checksums=*/false, /*mapped_gets=*/true).ok());
  ASSERT_TRUE(OpenTable(path, &cache, /*mmap=*/false, &warm, /*verify_checksums=*/false, /*mapped_gets=*/true).ok());
  ASSERT_NO_FATAL_FAILURE(GetEntries(*warm, entries, 0, entries.size()));

  ASSERT_EQ(::truncate(path.c_str(), 0), 0);
  for (const bool is_warm : {false, true}) {
    SCOPED_TRACE(is_warm ? "warm" : "cold");
    const SsdTable& table = is_warm ? *warm : *cold;
    for (int kind = 0; kind < 2; ++kind) {
      auto it = kind == 0 ? table.NewSequentialIterator(ReadOptions()) : table.NewScanIterator(/*decode=*/nullptr);
      it->SeekToFirst();
      EXPECT_FALSE(it->Valid());
      const Status s = it->status();
      EXPECT_TRUE(is_warm ? s.IsIOError() : s.IsCorruption()) << s.ToString();
      EXPECT_NE(s.ToString().find(path), std::string::npos) << s.ToString();
    }
  }
}

// The second user's scan to enter a table mapped for Gets maps the whole
// table at once, and from then on windows are copied from the mapping:
// nothing is read through the file, even in a table no Get has touched. The
// first user's scan, a compaction's scan of an untouched table, and every
// scan where the mapping cannot be populated read windows from the file.
// Every pass serves the model.
TEST(SsdTableScanTest, AUserScanPopulatesTheMappingOnceAndCopiesFromIt) {
  test::ScratchDir dir;
  std::mt19937_64 rng(12);
  const std::vector<TestEntry> entries = test::RandomEntries(&rng, 4000, 24, 600);
  const std::string path = dir.path() + "/000012.jst";
  const TableInfo info = BuildTable(path, entries, 8 << 10);
  ASSERT_GT(info.file_size, 3 * kScanWindowBytes);
  for (const bool populates : {true, false}) {
    SCOPED_TRACE(populates ? "the mapping populates" : "the mapping cannot be populated");
    BlockCache cache(64 << 20);
    CountingFile* file = nullptr;
    std::unique_ptr<SsdTable> table;
    ASSERT_NO_FATAL_FAILURE(OpenCountedTable(path, 12, &cache, populates, &file, &table));
    uint64_t before = file->read_bytes();
    auto scan = table->NewScanIterator(/*decode=*/nullptr);
    ASSERT_NO_FATAL_FAILURE(ExpectForwardPassLikeTheModel(scan.get(), entries));
    EXPECT_GE(file->read_bytes() - before, info.file_size / 2);
    for (int pass = 0; pass < 3; ++pass) {
      before = file->read_bytes();
      auto sequential = table->NewSequentialIterator(ReadOptions());
      ASSERT_NO_FATAL_FAILURE(ExpectForwardPassLikeTheModel(sequential.get(), entries));
      if (populates && pass > 0) {
        EXPECT_EQ(file->read_bytes(), before);
      } else {
        EXPECT_GE(file->read_bytes() - before, info.file_size / 2);
      }
    }
    EXPECT_EQ(cache.usage(), 0u);
  }
}

TEST(SsdTableFilterTest, TableFilterSkipsBlockReadsForAbsentKeys) {
  test::ScratchDir dir;
  BlockCache cache(1 << 20);
  std::mt19937_64 rng(5);
  const std::vector<TestEntry> entries = test::RandomEntries(&rng, 2000, 24, 100);
  const std::string path = dir.path() + "/000010.jst";
  BuildTable(path, entries, 4 << 10);
  std::unique_ptr<SsdTable> table;
  ASSERT_TRUE(OpenTable(path, &cache, false, &table).ok());
  const uint64_t misses = cache.misses() + cache.hits();
  int false_positives = 0;
  for (int i = 0; i < 1000; ++i) {
    ValueType type;
    [[maybe_unused]] SequenceNumber found_sequence = 0;
    std::string value;
    ASSERT_TRUE(
        table->Get(ReadOptions(), "absent-" + std::to_string(i), kMaxSequenceNumber, &type, &value, &found_sequence).IsNotFound());
    false_positives = static_cast<int>(cache.misses() + cache.hits() - misses);
  }
  // Only the filter's false positives (about 1% at 10 bits per key) look at a block.
  EXPECT_LT(false_positives, 50);
}

TEST(SsdTableDamageTest, MalformedFilesAreCorruptionNamingTheFile) {
  test::ScratchDir dir;
  std::mt19937_64 rng(1);
  const std::vector<TestEntry> entries = test::RandomEntries(&rng, 500, 16, 100);
  const std::string path = dir.path() + "/000009.jst";
  const TableInfo info = BuildTable(path, entries, 4 << 10);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_EQ(bytes.size(), info.file_size);
  auto write = [&](const std::string& b) { std::ofstream(path, std::ios::binary | std::ios::trunc) << b; };
  BlockCache cache(1 << 20);
  std::unique_ptr<SsdTable> table;

  // Every truncation is refused at open.
  for (size_t keep : {size_t{0}, size_t{10}, bytes.size() / 2, bytes.size() - 1}) {
    write(bytes.substr(0, keep));
    const Status s = OpenTable(path, &cache, false, &table);
    EXPECT_TRUE(s.IsCorruption()) << keep << ": " << s.ToString();
    EXPECT_NE(s.ToString().find(path), std::string::npos);
  }
  // A flipped byte in the footer or index is refused at open.
  for (size_t pos : {bytes.size() - 1, bytes.size() - 30, bytes.size() - kTableFooterSize - 5}) {
    std::string damaged = bytes;
    damaged[pos] ^= 0x20;
    write(damaged);
    EXPECT_TRUE(OpenTable(path, &cache, false, &table).IsCorruption()) << pos;
  }
  // A flipped byte inside a block is found when the block is read (checksum).
  std::string damaged = bytes;
  damaged[100] ^= 0x01;
  write(damaged);
  ASSERT_TRUE(OpenTable(path, &cache, false, &table).ok());
  auto it = table->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
  }
  EXPECT_TRUE(it->status().IsCorruption());
  EXPECT_TRUE(table->Validate().IsCorruption());
  // Without checksum verification the damage may go unseen by reads, but
  // the reader stays in bounds and Validate still finds it.
  BlockCache fresh(1 << 20);
  ASSERT_TRUE(OpenTable(path, &fresh, false, &table, /*verify_checksums=*/false).ok());
  it = table->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
  }
  EXPECT_TRUE(table->Validate().IsCorruption());
  // A newer format version is NotSupported.
  std::string newer = bytes;
  const size_t footer = bytes.size() - kTableFooterSize;
  newer[footer + 8] = static_cast<char>(kTableFormatVersion + 1);
  const uint32_t crc = crc32c::Value(newer.data() + footer, 44);
  std::memcpy(newer.data() + footer + 44, &crc, 4);
  write(newer);
  EXPECT_TRUE(OpenTable(path, &cache, false, &table).IsNotSupported());
}

// A table opened without checksum verification, one value byte damaged:
// plain reads serve the damaged value; reads with
// ReadOptions::verify_checksums get Corruption naming the file for the
// damaged block -- also when it was cached (or mapped) by a plain read
// first -- and the intact blocks as usual.
TEST_P(SsdTableTest, ReadOptionVerifyChecksumsChecksEveryBlockItUses) {
  std::vector<TestEntry> entries;
  for (int i = 0; i < 1000; ++i) {
    char key[16];
    std::snprintf(key, sizeof(key), "key%04d", i);
    entries.push_back({key, 1, ValueType::kValue, std::string("value of ") + key});
  }
  const std::string path = dir_.path() + "/000011.jst";
  const TableInfo info = BuildTable(path, entries, 4 << 10);
  ASSERT_GT(info.blocks, 4u);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t pos = bytes.find("value of key0500");
  ASSERT_NE(pos, std::string::npos);
  bytes[pos] = 'V';
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
  std::unique_ptr<SsdTable> table;
  ASSERT_TRUE(OpenTable(path, &cache_, GetParam(), &table, /*verify_checksums=*/false).ok());
  ReadOptions verify;
  verify.verify_checksums = true;
  ValueType type;
  [[maybe_unused]] SequenceNumber found_sequence = 0;
  std::string value;

  ASSERT_TRUE(table->Get(ReadOptions(), "key0500", kMaxSequenceNumber, &type, &value, &found_sequence).ok());
  EXPECT_EQ(value, "Value of key0500");  // the damage unseen; the block now cached
  Status s = table->Get(verify, "key0500", kMaxSequenceNumber, &type, &value, &found_sequence);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(path), std::string::npos) << s.ToString();
  ASSERT_TRUE(table->Get(verify, "key0010", kMaxSequenceNumber, &type, &value, &found_sequence).ok());
  EXPECT_EQ(value, "value of key0010");
  ASSERT_TRUE(table->Get(verify, "key0990", kMaxSequenceNumber, &type, &value, &found_sequence).ok());  // not cached yet
  EXPECT_EQ(value, "value of key0990");

  auto plain = table->NewIterator(ReadOptions());
  size_t n = 0;
  for (plain->SeekToFirst(); plain->Valid(); plain->Next()) ++n;
  EXPECT_EQ(n, entries.size());
  EXPECT_TRUE(plain->status().ok()) << plain->status().ToString();
  auto checked = table->NewIterator(verify);
  n = 0;
  for (checked->SeekToFirst(); checked->Valid(); checked->Next()) ++n;
  EXPECT_GT(n, 0u);    // the intact blocks before the damaged one
  EXPECT_LT(n, 500u);  // and not the damaged one
  EXPECT_TRUE(checked->status().IsCorruption()) << checked->status().ToString();
  checked = table->NewIterator(verify);
  checked->Seek("key0700", kMaxSequenceNumber);  // past the damaged block
  ASSERT_TRUE(checked->Valid());
  EXPECT_EQ(checked->user_key().ToString(), "key0700");
}

// A compaction's block scan: every block, in order, as bytes an entry
// cursor walks like the model; a damaged block stops it with Corruption
// naming the file; classic tables have none.
TEST_P(SsdTableTest, BlockScanHandsOverEveryBlockAsVerifiedBytes) {
  std::mt19937_64 rng(44);
  const std::vector<TestEntry> entries = test::RandomEntries(&rng, 3000, 24, 300);
  const std::string path = dir_.path() + "/000007.jst";
  const TableInfo info = BuildTable(path, entries, 4 << 10);
  std::unique_ptr<SsdTable> table;
  ASSERT_TRUE(OpenTable(path, &cache_, GetParam(), &table).ok());
  auto scan = table->NewBlockScan(nullptr);
  ASSERT_NE(scan, nullptr);
  size_t blocks = 0, i = 0;
  Slice block;
  while (scan->NextBlock(&block)) {
    ++blocks;
    keyset::EntryCursor cursor;
    ASSERT_TRUE(cursor.Reset(block, BytewiseComparator()).ok());
    for (; cursor.Valid(); cursor.Next(), ++i) {
      ASSERT_LT(i, entries.size());
      ASSERT_EQ(cursor.entry().key.ToString(), entries[i].user_key);
      ASSERT_EQ(TagSequence(cursor.entry().tag), entries[i].sequence);
      ASSERT_EQ(cursor.entry().value.ToString(), entries[i].value);
    }
    ASSERT_TRUE(cursor.status().ok());
  }
  EXPECT_TRUE(scan->status().ok()) << scan->status().ToString();
  EXPECT_EQ(blocks, info.blocks);
  EXPECT_EQ(i, entries.size());

  // A byte in the middle of the data: the scan reports its block.
  table.reset();
  test::FlipByte(path, static_cast<std::streamoff>(info.file_size / 2));
  ASSERT_TRUE(OpenTable(path, &cache_, GetParam(), &table).ok());
  scan = table->NewBlockScan(nullptr);
  while (scan->NextBlock(&block)) {
  }
  EXPECT_TRUE(scan->status().IsCorruption()) << scan->status().ToString();
  EXPECT_NE(scan->status().ToString().find(path), std::string::npos) << scan->status().ToString();

  const std::string classic_path = dir_.path() + "/000008.jst";
  {
    std::unique_ptr<WritableFile> file;
    ASSERT_TRUE(FileSystem::Default()->NewWritableFile(classic_path, &file).ok());
    TableBuilder builder(BlockBuilderOptions(), 4 << 10, file.get(), BlockFormat::kClassic);
    for (const TestEntry& e : entries) ASSERT_TRUE(builder.Add(e.user_key, e.sequence, e.type, e.value).ok());
    TableInfo classic_info;
    ASSERT_TRUE(builder.Finish(&classic_info).ok());
    ASSERT_TRUE(file->Close().ok());
  }
  std::unique_ptr<SsdTable> classic;
  ASSERT_TRUE(OpenTable(classic_path, &cache_, GetParam(), &classic).ok());
  EXPECT_EQ(classic->NewBlockScan(nullptr), nullptr);
}

INSTANTIATE_TEST_SUITE_P(CacheAndMmap, SsdTableTest, ::testing::Values(false, true));

TEST(BlockCacheTest, EvictsOldestUnreadBeyondCapacity) {
  BlockCache cache(16 * 4096);  // 4096 bytes per shard
  auto block = [](size_t size) {
    auto b = std::make_shared<CachedBlock>();
    b->size = size;
    return b;
  };
  for (uint32_t i = 0; i < 200; ++i) cache.Insert(1, i, block(1000));
  EXPECT_LE(cache.usage(), cache.capacity());
  EXPECT_GT(cache.usage(), cache.capacity() / 2);
  EXPECT_NE(cache.Lookup(1, 199), nullptr);  // recent ones stay
  EXPECT_EQ(cache.Lookup(1, 0), nullptr);    // old ones went
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.misses(), 1u);
  // An entry held by a reader outlives its eviction.
  CachedBlockRef held = cache.Lookup(1, 199);
  cache.EraseTable(1, 200);
  EXPECT_EQ(cache.usage(), 0u);
  EXPECT_EQ(held->size, 1000u);
  EXPECT_EQ(cache.Lookup(1, 199), nullptr);
  // Blocks larger than a shard are not kept.
  cache.Insert(2, 0, block(1 << 20));
  EXPECT_EQ(cache.Lookup(2, 0), nullptr);
}

// CLOCK order: an entry read since the hand last passed survives the sweep
// that evicts the unread entries inserted with it.
TEST(BlockCacheTest, AnEntryReadAgainOutlivesUnreadOnes) {
  BlockCache cache(16 * 4096);
  auto block = [](size_t size) {
    auto b = std::make_shared<CachedBlock>();
    b->size = size;
    return b;
  };
  // Tables 1..: only the entries of one shard matter; insert plenty.
  for (uint32_t i = 0; i < 64; ++i) cache.Insert(7, i, block(1000));
  std::vector<uint32_t> present;
  for (uint32_t i = 0; i < 64; ++i) {
    if (cache.Contains(7, i)) present.push_back(i);
  }
  ASSERT_FALSE(present.empty());
  for (uint32_t i : present) ASSERT_NE(cache.Lookup(7, i), nullptr);  // all read again
  for (uint32_t i = 64; i < 64 + 16 * 3; ++i) cache.Insert(7, i, block(1000));
  size_t kept = 0;
  for (uint32_t i : present) kept += cache.Contains(7, i);
  EXPECT_GT(kept, present.size() / 2) << "read entries were evicted before unread ones";
  EXPECT_LE(cache.usage(), cache.capacity());
}

// The index against a model: random inserts, replacements, erasures and
// lookups of keys that collide in the index; with room for everything
// the cache holds exactly the model's keys, each with its own block.
TEST(BlockCacheTest, HoldsExactlyWhatWasInsertedAndNotErased) {
  BlockCache cache(size_t{1} << 30);
  std::map<std::pair<uint64_t, uint32_t>, size_t> model;  // key -> block size
  std::mt19937_64 rng(11);
  for (int step = 0; step < 200000; ++step) {
    const uint64_t table = 1 + rng() % 40;
    const uint32_t b = static_cast<uint32_t>(rng() % 300);
    const int op = static_cast<int>(rng() % 10);
    if (op < 5) {
      auto value = std::make_shared<CachedBlock>();
      value->size = 1 + rng() % 5000;
      model[{table, b}] = value->size;
      cache.Insert(table, b, value);
    } else if (op < 6) {
      const uint32_t blocks = static_cast<uint32_t>(rng() % 300);
      cache.EraseTable(table, blocks);
      for (uint32_t i = 0; i < blocks; ++i) model.erase({table, i});
    } else {
      CachedBlockRef got = cache.Lookup(table, b);
      auto it = model.find({table, b});
      ASSERT_EQ(got != nullptr, it != model.end()) << "step " << step;
      if (got != nullptr) {
        ASSERT_EQ(got->size, it->second) << "step " << step;
      }
    }
  }
  size_t total = 0;
  for (const auto& [key, size] : model) {
    ASSERT_TRUE(cache.Contains(key.first, key.second));
    total += size;
  }
  EXPECT_EQ(cache.usage(), total);
}

}  // namespace
}  // namespace jigsaw::ssd
