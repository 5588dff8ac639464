// SSD tables with compressed blocks (docs/ssd_format.md, "Compressed
// blocks"): every read path serves them like the model, from fewer bytes;
// what is not worth compressing, or must be read in place, stays as it
// was; damage is Corruption.
#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "format/keyset_entry.h"
#include "ssd/table.h"
#include "tests/support/block_test_util.h"
#include "tests/support/db_test_util.h"
#include "util/coding.h"

namespace jigsaw::ssd {
namespace {

using test::TestEntry;

// Entries whose values are half random bytes, half a repeat of them (as
// db_bench's compressible values), or all random bytes.
std::vector<TestEntry> Entries(std::mt19937_64* rng, size_t count, bool compressible) {
  std::vector<TestEntry> entries = test::RandomEntries(rng, count, 24, 300);
  for (TestEntry& e : entries) {
    if (e.type != ValueType::kValue) continue;
    const size_t random_bytes = compressible ? (e.value.size() + 1) / 2 : e.value.size();
    for (size_t i = 0; i < e.value.size(); ++i) {
      e.value[i] = i < random_bytes ? static_cast<char>((*rng)()) : e.value[i - random_bytes];
    }
  }
  return entries;
}

TableInfo Build(const std::string& path, const std::vector<TestEntry>& entries, BlockFormat format,
                Compression compression) {
  std::unique_ptr<WritableFile> file;
  EXPECT_TRUE(FileSystem::Default()->NewWritableFile(path, &file).ok());
  TableBuilder builder(BlockBuilderOptions(), 4 << 10, file.get(), format);
  builder.set_compression(compression);
  for (const TestEntry& e : entries) EXPECT_TRUE(builder.Add(e.user_key, e.sequence, e.type, e.value).ok());
  TableInfo info;
  EXPECT_TRUE(builder.Finish(&info).ok());
  EXPECT_TRUE(file->Close().ok());
  return info;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

uint32_t FooterVersion(const std::string& path) {
  const std::string bytes = ReadFile(path);
  return TableFooter::DecodeFrom(bytes.data() + bytes.size() - kTableFooterSize).version;
}

// How a table is opened: through the cache, with use_mmap or mapped_gets
// asked for (a compressed table declines both), verifying checksums or not.
struct OpenMode {
  bool mmap, mapped_gets, verify;
};

Status Open(const std::string& path, BlockCache* cache, const OpenMode& mode, std::unique_ptr<SsdTable>* table) {
  std::unique_ptr<RandomAccessFile> file;
  Status s = FileSystem::Default()->NewRandomAccessFile(path, &file);
  if (!s.ok()) return s;
  SsdTableOptions options;
  options.cache = cache;
  options.use_mmap = mode.mmap;
  options.mapped_gets = mode.mapped_gets;
  options.verify_checksums = mode.verify;
  return SsdTable::Open(options, std::move(file), 7, path, table);
}

void ExpectServesTheModel(const SsdTable& table, const std::vector<TestEntry>& entries, std::mt19937_64* rng) {
  ASSERT_TRUE(table.Validate().ok()) << table.Validate().ToString();
  // Gets, present and absent, at snapshots.
  for (int probe = 0; probe < 1500; ++probe) {
    const TestEntry& e = entries[(*rng)() % entries.size()];
    const std::string key = probe % 3 == 0 ? e.user_key + "x" : e.user_key;
    const SequenceNumber snapshot = probe % 2 == 0 ? kMaxSequenceNumber : e.sequence;
    const TestEntry* expected = test::ModelGet(entries, key, snapshot);
    ValueType type;
    SequenceNumber sequence = 0;
    std::string value;
    const Status s = table.Get(ReadOptions(), key, snapshot, &type, &value, &sequence);
    if (expected == nullptr) {
      ASSERT_TRUE(s.IsNotFound()) << key << ": " << s.ToString();
      continue;
    }
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_EQ(type, expected->type);
    if (type == ValueType::kValue) {
      ASSERT_EQ(value, expected->value);
    }
  }
  // A user's iterator (forward, seeks), a sequential one and a scan.
  auto it = table.NewIterator(ReadOptions());
  for (int probe = 0; probe < 300; ++probe) {
    const TestEntry& e = entries[(*rng)() % entries.size()];
    it->Seek(e.user_key, e.sequence);
    const size_t at = test::ModelSeek(entries, e.user_key, e.sequence);
    ASSERT_TRUE(it->Valid());
    ASSERT_EQ(it->user_key().ToString(), entries[at].user_key);
    ASSERT_EQ(it->value().ToString(), entries[at].value);
  }
  for (int kind = 0; kind < 3; ++kind) {
    auto iterator = kind == 0   ? table.NewIterator(ReadOptions())
                    : kind == 1 ? table.NewSequentialIterator(ReadOptions())
                                : table.NewScanIterator(/*decode=*/nullptr);
    size_t i = 0;
    for (iterator->SeekToFirst(); iterator->Valid(); iterator->Next(), ++i) {
      ASSERT_LT(i, entries.size());
      ASSERT_EQ(iterator->user_key().ToString(), entries[i].user_key);
      ASSERT_EQ(iterator->sequence(), entries[i].sequence);
      ASSERT_EQ(iterator->value().ToString(), entries[i].value);
    }
    ASSERT_TRUE(iterator->status().ok()) << iterator->status().ToString();
    ASSERT_EQ(i, entries.size());
  }
  // A compaction's scan of KeySet blocks as bytes: the blocks decompressed.
  if (table.format() == BlockFormat::kKeySet) {
    auto scan = table.NewBlockScan(nullptr);
    size_t i = 0;
    Slice block;
    while (scan->NextBlock(&block)) {
      keyset::EntryCursor cursor;
      ASSERT_TRUE(cursor.Reset(block, BytewiseComparator()).ok());
      for (; cursor.Valid(); cursor.Next(), ++i) ASSERT_EQ(cursor.entry().value.ToString(), entries[i].value);
    }
    ASSERT_TRUE(scan->status().ok()) << scan->status().ToString();
    ASSERT_EQ(i, entries.size());
  }
}

class CompressedTableTest : public ::testing::TestWithParam<std::tuple<BlockFormat, Compression>> {
 protected:
  test::ScratchDir dir_;
};

TEST_P(CompressedTableTest, EveryReadPathServesTheModelFromFewerBytes) {
  const auto [format, compression] = GetParam();
  std::mt19937_64 rng(51);
  const std::vector<TestEntry> entries = Entries(&rng, 3000, /*compressible=*/true);
  const std::string plain = dir_.path() + "/000006.jst", packed = dir_.path() + "/000007.jst";
  const TableInfo plain_info = Build(plain, entries, format, Compression::kNone);
  const TableInfo info = Build(packed, entries, format, compression);
  EXPECT_EQ(info.blocks, plain_info.blocks);  // blocks end where they would uncompressed
  EXPECT_LT(info.file_size, plain_info.file_size * 8 / 10);
  EXPECT_EQ(FooterVersion(plain), kUncompressedTableVersion);
  // KeySet blocks are split with LZ4 (values in groups): version 3; other
  // blocks are compressed whole: version 2.
  const bool split = format == BlockFormat::kKeySet && compression == Compression::kLZ4;
  EXPECT_EQ(FooterVersion(packed), split ? kTableFormatVersion : 2u);
  for (const OpenMode& mode : {OpenMode{false, false, true}, OpenMode{false, false, false},
                               OpenMode{true, false, false}, OpenMode{false, true, false}}) {
    SCOPED_TRACE(testing::Message() << "mmap " << mode.mmap << " mapped_gets " << mode.mapped_gets << " verify "
                                    << mode.verify);
    BlockCache cache(256 << 10);  // smaller than the table: blocks are read again
    std::unique_ptr<SsdTable> table;
    ASSERT_TRUE(Open(packed, &cache, mode, &table).ok());
    ExpectServesTheModel(*table, entries, &rng);
    EXPECT_GT(cache.usage(), 0u);  // decompressed blocks are served from the cache
  }
}

TEST_P(CompressedTableTest, DamageInACompressedBlockIsCorruptionNamingTheTable) {
  const auto [format, compression] = GetParam();
  std::mt19937_64 rng(52);
  const std::vector<TestEntry> entries = Entries(&rng, 2000, /*compressible=*/true);
  const std::string path = dir_.path() + "/000007.jst";
  Build(path, entries, format, compression);
  test::FlipByte(path, 40);  // inside block 0's compressed bytes
  for (const OpenMode& mode : {OpenMode{false, false, true}, OpenMode{false, false, false},
                               OpenMode{false, true, true}, OpenMode{false, true, false}}) {
    const bool verify = mode.verify;
    BlockCache cache(1 << 20);
    std::unique_ptr<SsdTable> table;
    ASSERT_TRUE(Open(path, &cache, mode, &table).ok());
    const Status validated = table->Validate();
    EXPECT_TRUE(validated.IsCorruption() && validated.ToString().find(path) != std::string::npos)
        << validated.ToString();
    // A compaction's scan always verifies.
    auto scan = table->NewScanIterator(nullptr);
    for (scan->SeekToFirst(); scan->Valid(); scan->Next()) {
    }
    EXPECT_TRUE(scan->status().IsCorruption()) << scan->status().ToString();
    // A Get in the damaged block: Corruption when verifying; never a crash
    // or a read out of bounds when not.
    ValueType type;
    SequenceNumber sequence;
    std::string value;
    const Status s = table->Get(ReadOptions(), entries.front().user_key, kMaxSequenceNumber, &type, &value, &sequence);
    if (verify) {
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    }
  }
}

// KeySet tables whose blocks are split (LZ4).
class SplitTableTest : public ::testing::Test {
 protected:
  test::ScratchDir dir_;
};

// A split block (KeySet) damaged anywhere in its stored bytes -- head, key
// part, value groups: reading it whole is Corruption naming the table,
// unless the damage decompresses to the same bytes (a match offset changed
// to another copy of the same bytes: then every Get answers as before);
// Gets from its key part and value groups are Corruption, NotFound or a
// wrong value, never a crash or a read outside the buffers (ASan).
TEST_F(SplitTableTest, DamageAnywhereInASplitBlockIsCaught) {
  const BlockFormat format = BlockFormat::kKeySet;
  const Compression compression = Compression::kLZ4;
  std::mt19937_64 rng(55);
  const std::vector<TestEntry> entries = Entries(&rng, 400, /*compressible=*/true);
  const std::string path = dir_.path() + "/000007.jst";
  Build(path, entries, format, compression);
  const std::string intact = ReadFile(path);
  uint64_t first_stored = 0;
  {
    BlockCache cache(1 << 20);
    std::unique_ptr<SsdTable> table;
    ASSERT_TRUE(Open(path, &cache, OpenMode{false, true, false}, &table).ok());
    ASSERT_TRUE(IsSplitCodec(table->block_codec(0)));
    first_stored = table->block_stored_bytes(0);
  }
  int caught = 0, sweeps = 0;
  for (uint64_t at = 0; at < first_stored; at += 11, ++sweeps) {
    SCOPED_TRACE(testing::Message() << "byte " << at);
    std::string damaged = intact;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x5a);
    {
      std::ofstream out(path, std::ios::binary | std::ios::trunc);
      out << damaged;
    }
    for (const bool mapped_gets : {false, true}) {
      BlockCache cache(1 << 20);
      std::unique_ptr<SsdTable> table;
      ASSERT_TRUE(Open(path, &cache, OpenMode{false, mapped_gets, false}, &table).ok());
      bool answers_as_before = true;
      for (size_t k = 0; k < entries.size(); k += 7) {
        ValueType type;
        SequenceNumber sequence = 0;
        std::string value;
        const Status s = table->Get(ReadOptions(), entries[k].user_key, kMaxSequenceNumber, &type, &value, &sequence);
        EXPECT_TRUE(s.ok() || s.IsNotFound() || s.IsCorruption()) << s.ToString();
        const TestEntry* expected = test::ModelGet(entries, entries[k].user_key, kMaxSequenceNumber);
        answers_as_before = answers_as_before && s.ok() && type == expected->type &&
                            (type != ValueType::kValue || value == expected->value);
      }
      // A user's iterator through the key part and groups: entries or
      // Corruption, never a crash.
      auto it = table->NewIterator(ReadOptions());
      for (size_t k = 0; k < entries.size(); k += 29) {
        it->Seek(entries[k].user_key, kMaxSequenceNumber);
        for (int step = 0; step < 5 && it->Valid(); ++step) (step % 2 == 0 ? it->Next() : it->Prev());
        EXPECT_TRUE(it->status().ok() || it->status().IsCorruption()) << it->status().ToString();
      }
      const Status validated = table->Validate();
      if (validated.ok()) {
        EXPECT_TRUE(answers_as_before);
      } else {
        EXPECT_TRUE(validated.IsCorruption() && validated.ToString().find(path) != std::string::npos)
            << validated.ToString();
        ++caught;
      }
    }
  }
  EXPECT_GT(caught, 2 * sweeps * 9 / 10);  // most damage changes the bytes
}

// A Get from a split block's key part decompresses the value's groups
// only: the key part goes to the cache, not the whole block -- also in a
// table that verifies checksums, which checks the block whole first.
TEST_F(SplitTableTest, AGetFromASplitBlockCachesItsKeyPartAlone) {
  const BlockFormat format = BlockFormat::kKeySet;
  const Compression compression = Compression::kLZ4;
  std::mt19937_64 rng(56);
  const std::vector<TestEntry> entries = Entries(&rng, 2000, /*compressible=*/true);
  const std::string path = dir_.path() + "/000007.jst";
  Build(path, entries, format, compression);
  const TestEntry* found = nullptr;
  for (const TestEntry& e : entries) {
    const TestEntry* newest = test::ModelGet(entries, e.user_key, kMaxSequenceNumber);
    if (newest == &e && e.type == ValueType::kValue && !e.value.empty()) {
      found = &e;
      break;
    }
  }
  ASSERT_NE(found, nullptr);
  for (const bool verify : {false, true}) {
    BlockCache cache(64 << 20);
    std::unique_ptr<SsdTable> table;
    ASSERT_TRUE(Open(path, &cache, OpenMode{false, true, verify}, &table).ok());
    ValueType type;
    SequenceNumber sequence = 0;
    std::string value;
    ASSERT_TRUE(table->Get(ReadOptions(), found->user_key, kMaxSequenceNumber, &type, &value, &sequence).ok());
    EXPECT_EQ(value, found->value);
    EXPECT_EQ(sequence, found->sequence);
    EXPECT_GT(cache.usage(), 0u);
    EXPECT_LT(cache.usage(), 4u << 10);  // less than the block (4 KiB): its key part
  }
}

// A user's iterator seeks in a split block through its key part, shared
// with Gets in the cache, and decompresses only the groups its entries'
// values lie in; stepping both ways through every block reads what the
// model holds.
TEST_F(SplitTableTest, AnIteratorReadsASplitBlockThroughItsKeyPart) {
  std::mt19937_64 rng(57);
  const std::vector<TestEntry> entries = Entries(&rng, 2000, /*compressible=*/true);
  const std::string path = dir_.path() + "/000007.jst";
  Build(path, entries, BlockFormat::kKeySet, Compression::kLZ4);
  BlockCache cache(64 << 20);
  std::unique_ptr<SsdTable> table;
  ASSERT_TRUE(Open(path, &cache, OpenMode{false, true, false}, &table).ok());
  auto it = table->NewIterator(ReadOptions());
  const TestEntry& middle = entries[entries.size() / 2];
  it->Seek(middle.user_key, middle.sequence);
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), middle.value);
  EXPECT_GT(cache.usage(), 0u);
  EXPECT_LT(cache.usage(), 4u << 10);  // its block's key part, not the block (4 KiB)
  // Backward from the end, then forward from the start, each entry as the
  // model has it; a second pass finds the key parts in the cache.
  for (int pass = 0; pass < 2; ++pass) {
    size_t i = entries.size();
    for (it->SeekToLast(); it->Valid(); it->Prev()) {
      ASSERT_GT(i, 0u);
      --i;
      ASSERT_EQ(it->user_key().ToString(), entries[i].user_key);
      ASSERT_EQ(it->tag(), PackTag(entries[i].sequence, entries[i].type));
      ASSERT_EQ(it->value().ToString(), entries[i].value);
    }
    ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    ASSERT_EQ(i, 0u);
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
      ASSERT_LT(i, entries.size());
      ASSERT_EQ(it->user_key().ToString(), entries[i].user_key);
      ASSERT_EQ(it->value().ToString(), entries[i].value);
    }
    ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    ASSERT_EQ(i, entries.size());
  }
}

INSTANTIATE_TEST_SUITE_P(FormatsAndCodecs, CompressedTableTest,
                         ::testing::Combine(::testing::Values(BlockFormat::kKeySet, BlockFormat::kClassic),
                                            ::testing::Values(Compression::kLZ4, Compression::kZstd)));

TEST(CompressedTableBuildTest, IncompressibleBlocksLeaveTheTableAsItWasUncompressed) {
  test::ScratchDir dir;
  std::mt19937_64 rng(53);
  // Values of random bytes that dwarf their keys: no block would save an eighth.
  std::vector<TestEntry> entries = Entries(&rng, 500, /*compressible=*/false);
  for (TestEntry& e : entries) {
    if (e.type != ValueType::kValue) continue;
    e.value.resize(2000);
    for (char& c : e.value) c = static_cast<char>(rng());
  }
  Build(dir.path() + "/1.jst", entries, BlockFormat::kKeySet, Compression::kNone);
  Build(dir.path() + "/2.jst", entries, BlockFormat::kKeySet, Compression::kZstd);
  EXPECT_TRUE(ReadFile(dir.path() + "/1.jst") == ReadFile(dir.path() + "/2.jst"));
  EXPECT_EQ(FooterVersion(dir.path() + "/2.jst"), kUncompressedTableVersion);
}

TEST(CompressedTableBuildTest, AWholeBlockKeepsItsBytes) {
  test::ScratchDir dir;
  std::mt19937_64 rng(54);
  const std::vector<TestEntry> entries = Entries(&rng, 2000, /*compressible=*/true);
  test::AlignedBuffer block;
  size_t block_size = 0;
  BlockBuilderOptions options;
  options.bloom_bits_per_key = 10;
  ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, entries, options, &block, &block_size).ok());
  const std::string path = dir.path() + "/1.jst";
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(FileSystem::Default()->NewWritableFile(path, &file).ok());
  TableBuilder builder(BlockBuilderOptions(), 4 << 10, file.get());
  builder.set_compression(Compression::kLZ4);
  ASSERT_TRUE(builder.AddWholeBlock(Slice(block.data(), block_size), entries.front().user_key,
                                    entries.back().user_key).ok());
  TableInfo info;
  ASSERT_TRUE(builder.Finish(&info).ok());
  ASSERT_TRUE(file->Close().ok());
  EXPECT_EQ(FooterVersion(path), kUncompressedTableVersion);
  EXPECT_EQ(ReadFile(path).substr(0, block_size), std::string(block.data(), block_size));
}

}  // namespace
}  // namespace jigsaw::ssd
