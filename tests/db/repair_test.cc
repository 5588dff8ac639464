// RepairDB (include/jigsaw/db.h): every damaged-database case -- a damaged
// MANIFEST, IDENTITY, table file, table block, WAL record or pool file --
// becomes a database that opens and holds every entry that was intact; the
// newest intact version of a key wins, deletions and range deletions are
// honoured while the manifest can be read; the damaged database is kept
// beside the repaired one; a repair interrupted during its final swap is
// finished by the next; a database in use is refused.
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "db/db_impl.h"
#include "jigsaw/db.h"
#include "tests/support/db_test_util.h"

namespace jigsaw {
namespace {

using test::Contents;
using test::NumberedKey;
using test::NumberedValue;

constexpr int kKeys = 3000;

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string bytes(n, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  return bytes;
}

class RepairTest : public ::testing::TestWithParam<StorageMode> {
 protected:
  std::string db() const { return dir_.path() + "/db"; }
  Options options() const { return test::SmallModeOptions(GetParam()); }

  // Keys [0, kKeys) written once each (in shuffled order), then every 10th
  // deleted and [1500, 1600) range-deleted, all compacted, then keys
  // [kKeys, kKeys + 100) written; the live pairs are model_.
  void Populate() {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options(), this->db(), &db).ok());
    std::vector<int> order(kKeys);
    for (int i = 0; i < kKeys; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), std::mt19937_64(5));
    for (int i : order) ASSERT_TRUE(db->Put(WriteOptions(), NumberedKey(i), NumberedValue(i)).ok());
    for (int i = 0; i < kKeys; i += 10) ASSERT_TRUE(db->Delete(WriteOptions(), NumberedKey(i)).ok());
    ASSERT_TRUE(db->DeleteRange(WriteOptions(), NumberedKey(1500), NumberedKey(1600)).ok());
    // Into the last level (SSD tables in hybrid mode), then more in the
    // memtable and its log.
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    for (int i = kKeys; i < kKeys + 100; ++i) ASSERT_TRUE(db->Put(WriteOptions(), NumberedKey(i), NumberedValue(i)).ok());
    model_ = Contents(db.get());
    ASSERT_EQ(model_.size(), size_t{kKeys - kKeys / 10 - 90 + 100});
  }

  // The key range of each SSD table, by file name, from the open database;
  // with `values`, the user keys of the values the SSD tables hold.
  std::map<std::string, std::pair<std::string, std::string>> SsdTableRanges(std::set<std::string>* values = nullptr) {
    std::map<std::string, std::pair<std::string, std::string>> ranges;
    std::unique_ptr<DB> db;
    EXPECT_TRUE(DB::Open(options(), this->db(), &db).ok());
    if (db == nullptr) return ranges;
    const auto version = static_cast<DBImpl*>(db.get())->CurrentVersion();
    for (const auto& level : version->levels) {
      for (const TableRef& t : level) {
        if (t->residence != Residence::kSsd) continue;
        char name[32];
        std::snprintf(name, sizeof(name), "/%06llu.jst", static_cast<unsigned long long>(t->number));
        ranges[this->db() + name] = {t->smallest, t->largest};
        if (values == nullptr) continue;
        std::unique_ptr<InternalIterator> it = t->table->NewIterator(ReadOptions());
        for (it->SeekToFirst(); it->Valid(); it->Next()) {
          if (it->type() == ValueType::kValue) values->insert(it->user_key().ToString());
        }
      }
    }
    return ranges;
  }

  // Repairs and opens; returns the repaired contents.
  std::map<std::string, std::string> RepairAndRead(RepairReport* report) {
    Status s = RepairDB(db(), options(), report);
    EXPECT_TRUE(s.ok()) << s.ToString() << "\n" << report->ToString();
    std::unique_ptr<DB> db;
    s = DB::Open(options(), this->db(), &db);
    EXPECT_TRUE(s.ok()) << s.ToString();
    if (!s.ok()) return {};
    EXPECT_TRUE(db->VerifyIntegrity().ok());
    return Contents(db.get());
  }

  // Every pair of `got` is the model's, and every model pair whose key
  // `lost` does not claim is in `got`.
  void ExpectIntactEntries(const std::map<std::string, std::string>& got,
                           const std::function<bool(const std::string&)>& lost) {
    for (const auto& [key, value] : got) {
      const auto it = model_.find(key);
      if (it != model_.end()) {
        EXPECT_EQ(value, it->second) << key;
      } else {
        EXPECT_TRUE(lost(key)) << key << " reappeared";
      }
    }
    for (const auto& [key, value] : model_) {
      if (!lost(key)) {
        EXPECT_EQ(got.count(key), 1u) << key << " was lost";
      }
    }
  }

  test::ScratchDir dir_;
  std::map<std::string, std::string> model_;
};

TEST_P(RepairTest, AnUndamagedDatabaseKeepsExactlyItsContents) {
  Populate();
  RepairReport report;
  const auto got = RepairAndRead(&report);
  EXPECT_EQ(got, model_);
  EXPECT_TRUE(report.manifest_read);
  EXPECT_TRUE(report.losses.empty()) << report.ToString();
  EXPECT_EQ(report.entries_kept, model_.size());
  EXPECT_TRUE(std::filesystem::exists(report.kept_at)) << report.kept_at;
  EXPECT_FALSE(std::filesystem::exists(db() + ".repair"));
}

TEST_P(RepairTest, ADatabaseInUseIsRefused) {
  Populate();
  std::unique_ptr<DB> open;
  ASSERT_TRUE(DB::Open(options(), db(), &open).ok());
  RepairReport report;
  EXPECT_TRUE(RepairDB(db(), options(), &report).IsIOError());
  EXPECT_EQ(Contents(open.get()), model_);
}

TEST_P(RepairTest, AnInterruptedSwapIsFinishedByTheNextRepair) {
  Populate();
  RepairReport report;
  ASSERT_TRUE(RepairDB(db(), options(), &report).ok()) << report.ToString();
  // The state a crash leaves after the new database is whole, before the
  // swap: the old database in place, the new one beside it, marked.
  std::filesystem::rename(db(), db() + ".repair");
  WriteFile(db() + ".repair/REPAIRED", "");
  std::filesystem::rename(report.kept_at, db());
  RepairReport resumed;
  const auto got = RepairAndRead(&resumed);
  EXPECT_TRUE(resumed.resumed);
  EXPECT_EQ(got, model_);
}

TEST_P(RepairTest, ADamagedIdentityIsRepaired) {
  Populate();
  WriteFile(db() + "/IDENTITY", "not an identity\n");
  std::unique_ptr<DB> open;
  ASSERT_FALSE(DB::Open(options(), db(), &open).ok());
  RepairReport report;
  EXPECT_EQ(RepairAndRead(&report), model_);
}

TEST_P(RepairTest, ADamagedPoolOrManifestKeepsEveryIntactEntry) {
  Populate();
  std::set<std::string> ssd_values;
  if (GetParam() != StorageMode::kDisk) SsdTableRanges(&ssd_values);
  // Disk mode: the MANIFEST; pool modes: the pool (its manifest, blocks and
  // WAL segments are in it).
  const std::string victim = GetParam() == StorageMode::kDisk ? db() + "/MANIFEST" : db() + "/pool";
  const uintmax_t size = std::filesystem::file_size(victim);
  WriteFile(victim, RandomBytes(size, 9));
  std::unique_ptr<DB> open;
  ASSERT_FALSE(DB::Open(options(), db(), &open).ok());
  RepairReport report;
  const auto got = RepairAndRead(&report);
  EXPECT_FALSE(report.manifest_read);
  if (GetParam() == StorageMode::kDisk) {
    // Every table and log was read: every live key is there; deleted ones
    // may be back (their tombstones' sequence order is intact, but the
    // range deletion lived in the manifest).
    for (const auto& [key, value] : model_) {
      ASSERT_EQ(got.count(key), 1u) << key;
      EXPECT_EQ(got.at(key), value);
    }
  } else {
    // What was in the pool is gone; the live keys whose values are in SSD
    // tables of hybrid mode are there (keys are written once).
    EXPECT_FALSE(report.losses.empty());
    size_t in_ssd = 0;
    for (const auto& [key, value] : model_) {
      if (ssd_values.count(key) == 0) continue;
      ++in_ssd;
      ASSERT_EQ(got.count(key), 1u) << key;
      EXPECT_EQ(got.at(key), value);
    }
    if (GetParam() == StorageMode::kHybrid) {
      EXPECT_GT(in_ssd, 0u);
    }
  }
}

TEST_P(RepairTest, AManifestDamagedInThePoolKeepsEveryLiveKey) {
  if (GetParam() == StorageMode::kDisk) GTEST_SKIP() << "no pool";
  Populate();
  // Every manifest record the pool file holds (the current one among them,
  // docs/manifest.md: magic "JGSWMANF"), damaged past its magic.
  const std::string pool = db() + "/pool";
  std::string bytes;
  {
    std::ifstream in(pool, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  int damaged = 0;
  for (size_t at = bytes.find("JGSWMANF"); at != std::string::npos; at = bytes.find("JGSWMANF", at + 8)) {
    test::FlipByte(pool, static_cast<std::streamoff>(at + 24));
    ++damaged;
  }
  ASSERT_GT(damaged, 0);
  std::unique_ptr<DB> open;
  ASSERT_FALSE(DB::Open(options(), db(), &open).ok());
  RepairReport report;
  const auto got = RepairAndRead(&report);
  EXPECT_FALSE(report.manifest_read);
  for (const auto& [key, value] : model_) {
    ASSERT_EQ(got.count(key), 1u) << key << "\n" << report.ToString();
    EXPECT_EQ(got.at(key), value);
  }
}

// Options::best_efforts_recovery: a table that cannot be opened is set
// aside, its bytes kept in <db>/lost/; the rest of the database opens.
TEST_P(RepairTest, BestEffortsRecoverySetsADamagedTableAside) {
  Populate();
  std::string victim_range_first, victim_range_last, lost_file;
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options(), this->db(), &db).ok());
    auto* impl = static_cast<DBImpl*>(db.get());
    const auto version = impl->CurrentVersion();
    const TableMeta* victim = nullptr;
    for (const auto& level : version->levels) {
      for (const TableRef& t : level) {
        if (victim == nullptr) victim = t.get();
      }
    }
    ASSERT_NE(victim, nullptr);
    victim_range_first = victim->smallest;
    victim_range_last = victim->largest;
    if (victim->residence == Residence::kSsd) {
      char name[32];
      std::snprintf(name, sizeof(name), "%06llu.jst", static_cast<unsigned long long>(victim->number));
      lost_file = name;
      db.reset();
      WriteFile(this->db() + "/" + name, "not a table");
    } else {
      lost_file = std::to_string(victim->number) + ".block";
      const uint64_t offset = victim->offset;  // pool offset = file offset
      db.reset();
      for (uint64_t at = 512; at < 528; ++at) test::FlipByte(this->db() + "/pool", static_cast<std::streamoff>(offset + at));
    }
  }
  std::unique_ptr<DB> db;
  Status s = DB::Open(options(), this->db(), &db);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  Options best = options();
  best.best_efforts_recovery = true;
  s = DB::Open(best, this->db(), &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::string set_aside;
  ASSERT_TRUE(db->GetProperty("jigsaw.set-aside-tables", &set_aside));
  EXPECT_NE(set_aside.find("lost/" + lost_file), std::string::npos) << set_aside;
  EXPECT_TRUE(std::filesystem::exists(this->db() + "/lost/" + lost_file));
  const auto inside = [&](const std::string& key) { return key >= victim_range_first && key <= victim_range_last; };
  ExpectIntactEntries(Contents(db.get()), inside);
  db.reset();
  // The manifest no longer names it: the next open needs no best efforts.
  ASSERT_TRUE(DB::Open(options(), this->db(), &db).ok());
  ASSERT_TRUE(db->GetProperty("jigsaw.set-aside-tables", &set_aside));
  EXPECT_EQ(set_aside, "");
  ExpectIntactEntries(Contents(db.get()), inside);
}

TEST_P(RepairTest, ADamagedBlockLosesOnlyItsOwnEntries) {
  if (GetParam() == StorageMode::kPmem) GTEST_SKIP() << "no table files";
  Populate();
  const auto ranges = SsdTableRanges();
  ASSERT_FALSE(ranges.empty());
  const std::string victim = ranges.begin()->first;
  const std::pair<std::string, std::string> range = ranges.begin()->second;
  // A run of bytes in the middle of the table: inside one block.
  const uintmax_t size = std::filesystem::file_size(victim);
  for (uintmax_t at = size / 3; at < size / 3 + 16; ++at) test::FlipByte(victim, static_cast<std::streamoff>(at));
  RepairReport report;
  const auto got = RepairAndRead(&report);
  EXPECT_TRUE(report.manifest_read);
  EXPECT_GE(report.blocks_lost + report.tables_lost, 1u) << report.ToString();
  const auto inside = [&](const std::string& key) { return key >= range.first && key <= range.second; };
  ExpectIntactEntries(got, inside);
  // The table's other blocks were salvaged: most of its keys are there.
  size_t in_range = 0, kept = 0;
  for (const auto& [key, value] : model_) {
    if (!inside(key)) continue;
    ++in_range;
    kept += got.count(key);
  }
  EXPECT_GT(kept, 0u) << report.ToString();
  EXPECT_LT(kept, in_range) << report.ToString();
}

TEST_P(RepairTest, ADamagedTableFileKeepsEveryOtherTablesEntries) {
  if (GetParam() == StorageMode::kPmem) GTEST_SKIP() << "no table files";
  Populate();
  const auto ranges = SsdTableRanges();
  ASSERT_FALSE(ranges.empty());
  const std::string victim = ranges.begin()->first;
  const std::pair<std::string, std::string> range = ranges.begin()->second;
  WriteFile(victim, "a user's notes, not a table\n");
  RepairReport report;
  const auto got = RepairAndRead(&report);
  EXPECT_EQ(report.tables_lost, 1u) << report.ToString();
  ExpectIntactEntries(got, [&](const std::string& key) { return key >= range.first && key <= range.second; });
}

INSTANTIATE_TEST_SUITE_P(Modes, RepairTest,
                         ::testing::Values(StorageMode::kPmem, StorageMode::kHybrid, StorageMode::kDisk),
                         test::ModeName);

// A damaged WAL record: the records around it are kept.
TEST(RepairWalTest, ADamagedLogRecordLosesOnlyThatRecord) {
  test::ScratchDir dir;
  const std::string db = dir.path() + "/db";
  Options options = test::SmallModeOptions(StorageMode::kDisk);
  constexpr int kRecords = 300;
  {
    std::unique_ptr<DB> open;
    ASSERT_TRUE(DB::Open(options, db, &open).ok());
    for (int i = 0; i < kRecords; ++i) ASSERT_TRUE(open->Put(WriteOptions(), NumberedKey(i), "v" + std::to_string(i)).ok());
  }
  std::string log;
  for (const auto& entry : std::filesystem::directory_iterator(db)) {
    if (entry.path().extension() == ".log" && std::filesystem::file_size(entry.path()) > 4096) log = entry.path();
  }
  ASSERT_FALSE(log.empty());
  test::FlipByte(log, static_cast<std::streamoff>(std::filesystem::file_size(log) / 2));
  std::unique_ptr<DB> open;
  ASSERT_FALSE(DB::Open(options, db, &open).ok());
  RepairReport report;
  ASSERT_TRUE(RepairDB(db, options, &report).ok()) << report.ToString();
  EXPECT_FALSE(report.losses.empty());
  ASSERT_TRUE(DB::Open(options, db, &open).ok());
  const auto got = Contents(open.get());
  EXPECT_GE(got.size(), size_t{kRecords - 1}) << report.ToString();
  EXPECT_LT(got.size(), size_t{kRecords});
  for (const auto& [key, value] : got) EXPECT_EQ(value, "v" + std::to_string(std::stoi(key.substr(3))));
}

}  // namespace
}  // namespace jigsaw
