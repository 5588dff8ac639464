// DB::GetLiveTablesMetaData, GetTableContents and VerifyTables in every
// storage mode and table format: the metadata agrees with the properties
// and the files, the contents are the stored bytes, and a damaged table is
// reported by name while the others pass.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "jigsaw/db.h"
#include "jigsaw/metadata.h"
#include "tests/support/db_test_util.h"

namespace jigsaw {
namespace {

using test::NumberedKey;

class TableMetadataTest : public ::testing::TestWithParam<StorageMode> {
 protected:
  // A database of `format` with tables in L0 and deeper levels; background
  // work finished (CompactRange waits for it, nothing is written after).
  void OpenWithTables(TableFormat format) {
    Options options = test::SmallModeOptions(GetParam());
    options.table_format = format;
    options.read_triggered_compactions = false;
    ASSERT_TRUE(DB::Open(options, dir_.path(), &db_).ok());
    for (int i = 0; i < 6000; ++i) {
      ASSERT_TRUE(db_->Put(WriteOptions(), NumberedKey(i), std::string(150, static_cast<char>('a' + i % 26))).ok());
    }
    ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  }

  static std::string ReadFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  // Where a table's byte `offset` is stored on the file system: its table
  // file, or the pool file (a pool object's offset is its file offset).
  std::string StoredIn(const LiveTableMetaData& t) const {
    return t.storage == TableStorage::kSsdTable ? t.file_name : dir_.path() + "/pool";
  }
  static uint64_t FileOffset(const LiveTableMetaData& t, uint64_t offset) {
    return t.storage == TableStorage::kSsdTable ? offset : t.pool_offset + offset;
  }

  test::ScratchDir dir_;
  std::unique_ptr<DB> db_;
};

TEST_P(TableMetadataTest, DescribesEveryLiveTable) {
  for (TableFormat format : {TableFormat::kKeySet, TableFormat::kClassic}) {
    SCOPED_TRACE(format == TableFormat::kKeySet ? "KeySet" : "classic");
    db_.reset();
    ASSERT_TRUE(DestroyDB(dir_.path(), test::SmallModeOptions(GetParam())).ok());
    OpenWithTables(format);
    std::vector<LiveTableMetaData> tables;
    db_->GetLiveTablesMetaData(&tables);
    ASSERT_FALSE(tables.empty());

    std::vector<uint64_t> per_level(kNumLevels, 0);
    uint64_t pmem_bytes = 0, ssd_bytes = 0, entries = 0;
    std::set<uint64_t> numbers;
    for (size_t i = 0; i < tables.size(); ++i) {
      const LiveTableMetaData& t = tables[i];
      ASSERT_GE(t.level, 0);
      ASSERT_LT(t.level, kNumLevels);
      EXPECT_TRUE(numbers.insert(t.number).second) << "table " << t.number << " listed twice";
      EXPECT_GT(t.entries, 0u);
      EXPECT_LE(t.smallest_key, t.largest_key);
      EXPECT_GT(t.format_version, 0u);
      if (i > 0) {
        EXPECT_LE(tables[i - 1].level, t.level) << "listed level by level";
        if (t.level > 0 && tables[i - 1].level == t.level) {
          EXPECT_LE(tables[i - 1].largest_key, t.smallest_key);
        }
      }
      ++per_level[t.level];
      entries += t.entries;
      switch (t.storage) {
        case TableStorage::kSsdTable:
          EXPECT_NE(GetParam(), StorageMode::kPmem);
          EXPECT_EQ(t.pool_offset, 0u);
          EXPECT_EQ(std::filesystem::file_size(t.file_name), t.size) << t.file_name;
          EXPECT_EQ(t.block_format, format);
          ssd_bytes += t.size;
          break;
        case TableStorage::kPmemBlock:
          EXPECT_NE(GetParam(), StorageMode::kDisk);
          EXPECT_EQ(format, TableFormat::kKeySet) << "a classic database keeps table images in pmem";
          EXPECT_EQ(t.block_format, TableFormat::kKeySet);
          EXPECT_TRUE(t.file_name.empty());
          pmem_bytes += t.size;
          break;
        case TableStorage::kPmemTableImage:
          EXPECT_NE(GetParam(), StorageMode::kDisk);
          EXPECT_EQ(t.block_format, TableFormat::kClassic);
          pmem_bytes += t.size;
          break;
      }
    }
    EXPECT_GE(entries, 6000u);
    for (int level = 0; level < kNumLevels; ++level) {
      std::string value;
      ASSERT_TRUE(db_->GetProperty("jigsaw.num-tables-at-level" + std::to_string(level), &value));
      EXPECT_EQ(value, std::to_string(per_level[level])) << "level " << level;
    }
    std::string value;
    ASSERT_TRUE(db_->GetProperty("jigsaw.pmem-bytes", &value));
    EXPECT_EQ(value, std::to_string(pmem_bytes));
    ASSERT_TRUE(db_->GetProperty("jigsaw.ssd-bytes", &value));
    EXPECT_EQ(value, std::to_string(ssd_bytes));
  }
}

TEST_P(TableMetadataTest, ContentsAreTheStoredBytes) {
  OpenWithTables(TableFormat::kKeySet);
  std::vector<LiveTableMetaData> tables;
  db_->GetLiveTablesMetaData(&tables);
  ASSERT_FALSE(tables.empty());
  uint64_t largest = 0;
  std::map<std::string, std::string> files;  // path -> bytes, each file read once
  for (const LiveTableMetaData& t : tables) {
    std::string contents;
    ASSERT_TRUE(db_->GetTableContents(t.number, &contents).ok()) << t.number;
    ASSERT_EQ(contents.size(), t.size);
    auto [file, added] = files.try_emplace(StoredIn(t));
    if (added) file->second = ReadFile(file->first);
    const std::string& stored = file->second;
    ASSERT_GE(stored.size(), FileOffset(t, t.size));
    EXPECT_TRUE(stored.compare(FileOffset(t, 0), t.size, contents) == 0) << "table " << t.number;
    largest = std::max(largest, t.number);
  }
  std::string contents = "left over";
  EXPECT_TRUE(db_->GetTableContents(largest + 1000, &contents).IsNotFound());
  EXPECT_TRUE(contents.empty());
}

TEST_P(TableMetadataTest, VerifyTablesNamesTheDamagedTableAndPassesTheRest) {
  OpenWithTables(TableFormat::kKeySet);
  std::vector<TableCheck> checks;
  ASSERT_TRUE(db_->VerifyTables(&checks).ok());
  std::vector<LiveTableMetaData> tables;
  db_->GetLiveTablesMetaData(&tables);
  ASSERT_EQ(checks.size(), tables.size());
  for (size_t i = 0; i < checks.size(); ++i) {
    EXPECT_TRUE(checks[i].status.ok()) << checks[i].status.ToString();
    EXPECT_EQ(checks[i].table.number, tables[i].number);
  }

  // One byte in the middle of the deepest table: inside a block, under a
  // checksum.
  const LiveTableMetaData victim = tables.back();
  test::FlipByte(StoredIn(victim), static_cast<std::streamoff>(FileOffset(victim, victim.size / 2)));

  const Status s = db_->VerifyTables(&checks);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("table " + std::to_string(victim.number)), std::string::npos) << s.ToString();
  ASSERT_EQ(checks.size(), tables.size());
  for (const TableCheck& check : checks) {
    if (check.table.number == victim.number) {
      EXPECT_TRUE(check.status.IsCorruption()) << check.status.ToString();
    } else {
      EXPECT_TRUE(check.status.ok()) << "table " << check.table.number << ": " << check.status.ToString();
    }
  }
  const Status integrity = db_->VerifyIntegrity();
  EXPECT_TRUE(integrity.IsCorruption()) << integrity.ToString();
  EXPECT_NE(integrity.ToString().find("table " + std::to_string(victim.number)), std::string::npos);

  // Put the byte back: the database is whole again.
  test::FlipByte(StoredIn(victim), static_cast<std::streamoff>(FileOffset(victim, victim.size / 2)));
  EXPECT_TRUE(db_->VerifyTables(nullptr).ok());
}

INSTANTIATE_TEST_SUITE_P(Modes, TableMetadataTest,
                         ::testing::Values(StorageMode::kPmem, StorageMode::kHybrid, StorageMode::kDisk),
                         test::ModeName);

}  // namespace
}  // namespace jigsaw
