// The SSD tier in the engine: NobLSM shadows and their recovery when a crash
// loses unsynced compaction outputs, a full disk, damaged table files (hybrid
// mode), disk-only mode losing its page cache, and a table write that never
// completes.
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "jigsaw/db.h"
#include "ssd/io_engine.h"
#include "ssd/posix_file_system.h"
#include "tests/support/db_test_util.h"
#include "tests/support/fault_injection_fs.h"
#include "tests/support/full_pipe.h"

namespace jigsaw {
namespace {

// One row of jigsaw.compaction-profile as numbers, into *fields.
void ParseProfileRow(const std::string& line, std::vector<double>* fields) {
  fields->clear();
  std::istringstream cells(line);
  std::string cell;
  while (std::getline(cells, cell, ',')) fields->push_back(std::stod(cell));
}

using test::FlipByte;

Options HybridOptions(FileSystem* fs) {
  Options options = test::SmallOptions();
  options.storage_mode = StorageMode::kHybrid;
  options.pmem_budget = 2 << 20;  // L1 and deeper on SSD
  options.file_system = fs;
  return options;
}

std::string Property(DB* db, const std::string& name) {
  std::string value;
  EXPECT_TRUE(db->GetProperty(name, &value)) << name;
  return value;
}

uint64_t Field(const std::string& stats, const std::string& field) {
  const size_t pos = stats.find(field + " ");
  return pos == std::string::npos ? 0 : std::stoull(stats.substr(pos + field.size() + 1));
}

// Waits (up to a minute: CI machines may be loaded) until no compaction is
// pending; returns as soon as none is.
void WaitForTracker(DB* db) {
  for (int i = 0; i < 6000 && Field(Property(db, "jigsaw.sync-stats"), "pending_compactions") != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Writes keys [begin, end) with sync=true; returns how many were acknowledged.
int WriteKeys(DB* db, int begin, int end, std::map<std::string, std::string>* model) {
  WriteOptions sync;
  sync.sync = true;
  for (int i = begin; i < end; ++i) {
    const std::string key = "key" + std::to_string(i % 9000);
    const std::string value = std::to_string(i) + std::string(120, 'v');
    if (!db->Put(sync, key, value).ok()) return i - begin;
    (*model)[key] = value;
  }
  return end - begin;
}

void ExpectContents(DB* db, const std::map<std::string, std::string>& model) {
  std::map<std::string, std::string> got;
  auto it = db->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) got[it->key().ToString()] = it->value().ToString();
  ASSERT_TRUE(it->status().ok()) << it->status().ToString();
  EXPECT_EQ(got.size(), model.size());
  EXPECT_TRUE(got == model);
  std::vector<std::string> names;
  for (int i = 0; i < 9000; i += 97) names.push_back("key" + std::to_string(i));
  names.push_back("key-never-written");
  std::vector<Slice> keys(names.begin(), names.end());
  std::vector<std::string> values;
  const std::vector<Status> statuses = db->MultiGet(ReadOptions(), keys, &values);
  ASSERT_EQ(statuses.size(), names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    std::string value;
    const Status s = db->Get(ReadOptions(), names[i], &value);
    auto m = model.find(names[i]);
    if (m == model.end()) {
      EXPECT_TRUE(s.IsNotFound()) << names[i];
      EXPECT_TRUE(statuses[i].IsNotFound()) << names[i];
    } else {
      EXPECT_EQ(value, m->second) << names[i];
      EXPECT_TRUE(statuses[i].ok()) << names[i] << ": " << statuses[i].ToString();
      EXPECT_EQ(values[i], m->second) << names[i];
    }
  }
}

TEST(SsdTierTest, CompactionOutputsAreSyncedOffTheCriticalPathAndShadowsReleased) {
  test::ScratchDir dir;
  test::FaultInjectionFileSystem fs;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(HybridOptions(&fs), dir.path(), &db).ok());
  std::map<std::string, std::string> model;
  ASSERT_EQ(WriteKeys(db.get(), 0, 40000, &model), 40000);
  WaitForTracker(db.get());
  const std::string stats = Property(db.get(), "jigsaw.sync-stats");
  EXPECT_GT(Field(stats, "syncs"), 0u) << stats;
  EXPECT_GT(Field(stats, "bytes_synced"), 0u) << stats;
  EXPECT_EQ(Field(stats, "pending_compactions"), 0u) << stats;
  EXPECT_GT(std::stoull(Property(db.get(), "jigsaw.ssd-bytes")), 0u);
  // Shadows are gone once their outputs are durable: only live tables remain.
  // (Reopened so that no compaction starts, which would create new files.)
  db.reset();
  Options quiet = HybridOptions(&fs);
  quiet.level0_compaction_trigger = quiet.level0_slowdown_trigger = quiet.level0_stop_trigger = 100;
  quiet.level1_size = uint64_t{256} << 20;
  ASSERT_TRUE(DB::Open(quiet, dir.path(), &db).ok());
  size_t tables = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) tables += entry.path().extension() == ".jst";
  const uint64_t ssd_bytes = std::stoull(Property(db.get(), "jigsaw.ssd-bytes"));
  uint64_t file_bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    if (entry.path().extension() == ".jst") file_bytes += entry.file_size();
  }
  EXPECT_GT(tables, 0u);
  EXPECT_EQ(file_bytes, ssd_bytes) << "table files that no level references were left behind";
  ExpectContents(db.get(), model);
}

TEST(SsdTierTest, UnsyncedOutputsLostInACrashAreRedoneFromShadows) {
  test::ScratchDir dir;
  test::FaultInjectionFileSystem fs;
  std::map<std::string, std::string> model;
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(HybridOptions(&fs), dir.path(), &db).ok());
    ASSERT_EQ(WriteKeys(db.get(), 0, 20000, &model), 20000);
    WaitForTracker(db.get());
    // From here nothing on the SSD becomes durable: the tracker fails, the
    // outputs of the next compactions stay pending.
    fs.SetActive(false);
    WriteKeys(db.get(), 20000, 60000, &model);
    const std::string stats = Property(db.get(), "jigsaw.sync-stats");
    EXPECT_GT(Field(stats, "pending_compactions"), 0u) << stats;
  }
  fs.DropUnsyncedData();  // the power failure: unsynced tables vanish
  fs.SetActive(true);
  std::unique_ptr<DB> db;
  const Status s = DB::Open(HybridOptions(&fs), dir.path(), &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  const std::string stats = Property(db.get(), "jigsaw.sync-stats");
  EXPECT_GT(Field(stats, "redone_at_recovery"), 0u) << stats;
  EXPECT_TRUE(db->VerifyIntegrity().ok());
  ExpectContents(db.get(), model);
  // The redone outputs are what the new manifest names: a second open right
  // away must find them.
  db.reset();
  const Status again = DB::Open(HybridOptions(&fs), dir.path(), &db);
  ASSERT_TRUE(again.ok()) << again.ToString();
  EXPECT_TRUE(db->VerifyIntegrity().ok());
  ExpectContents(db.get(), model);
  // And the recovered store keeps working.
  ASSERT_EQ(WriteKeys(db.get(), 60000, 70000, &model), 10000);
  db.reset();
  ASSERT_TRUE(DB::Open(HybridOptions(&fs), dir.path(), &db).ok());
  ExpectContents(db.get(), model);
}

// Writes keys "seq%08d" [begin, end) in order (sync=false: the WAL is in
// pmem, which these tests do not fail) until a write fails; returns how
// many were acknowledged.
int WriteInOrder(DB* db, int begin, int end, std::map<std::string, std::string>* model) {
  char key[16];
  for (int i = begin; i < end; ++i) {
    std::snprintf(key, sizeof(key), "seq%08d", i);
    const std::string value = std::to_string(i) + std::string(100, 'm');
    if (!db->Put(WriteOptions(), key, value).ok()) return i - begin;
    (*model)[key] = value;
  }
  return end - begin;
}

// The size of the first block of table file `path`: a migrated pmem block is
// the whole of a memtable, a merged table's blocks are ssd_block_size.
uint64_t FirstBlockSize(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char header[24] = {};
  in.read(header, sizeof(header));
  if (std::memcmp(header, "JIGSAWKS", 8) != 0) return 0;
  uint64_t size = 0;
  std::memcpy(&size, header + 16, 8);  // little-endian hosts only run these tests
  return size;
}

size_t MigratedTableFiles(const std::string& dir) {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".jst" && FirstBlockSize(entry.path()) > (64 << 10)) ++n;
  }
  return n;
}

// Keys written in order fill pmem blocks that overlap nothing in the SSD
// level below: they migrate as their bytes (one write each, no merge), and
// the store serves them from SSD, reopened too.
// A hybrid database of 30000 keys written in order, their blocks synced.
void OpenWithKeysInOrder(const test::ScratchDir& dir, std::unique_ptr<DB>* db,
                         std::map<std::string, std::string>* model) {
  ASSERT_TRUE(DB::Open(HybridOptions(nullptr), dir.path(), db).ok());
  ASSERT_EQ(WriteInOrder(db->get(), 0, 30000, model), 30000);
  WaitForTracker(db->get());
}

TEST(SsdTierTest, PmemBlocksThatOverlapNothingMigrateToSsdAsTheirBytes) {
  test::ScratchDir dir;
  std::unique_ptr<DB> db;
  std::map<std::string, std::string> model;
  ASSERT_NO_FATAL_FAILURE(OpenWithKeysInOrder(dir, &db, &model));
  const std::string stats = Property(db.get(), "jigsaw.stats");
  const size_t at = stats.find("migrations: ");
  ASSERT_NE(at, std::string::npos) << stats;
  EXPECT_GT(std::stoull(stats.substr(at + std::strlen("migrations: "))), 0u) << stats;
  EXPECT_GT(MigratedTableFiles(dir.path()), 0u);
  // Overwrites and deletes on top, merged with the migrated tables later.
  for (int i = 0; i < 30000; i += 7) {
    char key[16];
    std::snprintf(key, sizeof(key), "seq%08d", i);
    if (i % 2 == 0) {
      ASSERT_TRUE(db->Delete(WriteOptions(), key).ok());
      model.erase(key);
    } else {
      ASSERT_TRUE(db->Put(WriteOptions(), key, "new").ok());
      model[key] = "new";
    }
  }
  auto check = [&](DB* d) {
    for (const auto& [key, value] : model) {
      std::string got;
      ASSERT_TRUE(d->Get(ReadOptions(), key, &got).ok()) << key;
      ASSERT_EQ(got, value) << key;
    }
    std::string got;
    EXPECT_TRUE(d->Get(ReadOptions(), "seq00000000", &got).IsNotFound());
    EXPECT_TRUE(d->Get(ReadOptions(), "seq99999999", &got).IsNotFound());
    std::map<std::string, std::string> scanned;
    auto it = d->NewIterator(ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next()) scanned[it->key().ToString()] = it->value().ToString();
    ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    EXPECT_TRUE(scanned == model);
    EXPECT_TRUE(d->VerifyIntegrity().ok());
  };
  check(db.get());
  db.reset();
  ASSERT_TRUE(DB::Open(HybridOptions(nullptr), dir.path(), &db).ok());
  check(db.get());
}

// A table that migrated from pmem is one large block: approximate sizes of
// ranges ending inside it follow its keys, not its first byte.
// With table_format kClassic a pmem table is an SSD table image: keys
// written in order migrate as those bytes, unchanged (nothing encoded: the
// profile's migration rows charge only the write), into classic SSD tables
// that serve the keys, reopened too. Flushes into pmem build images
// (encode) and copy them into the pool (write).
TEST(SsdTierTest, ClassicPmemTablesMigrateToSsdAsTheirBytes) {
  test::ScratchDir dir;
  Options options = HybridOptions(nullptr);
  options.table_format = TableFormat::kClassic;
  options.profile_compactions = true;
  std::unique_ptr<DB> db;
  std::map<std::string, std::string> model;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  ASSERT_EQ(WriteInOrder(db.get(), 0, 30000, &model), 30000);
  WaitForTracker(db.get());
  const std::string stats = Property(db.get(), "jigsaw.stats");
  const size_t at = stats.find("migrations: ");
  ASSERT_NE(at, std::string::npos) << stats;
  EXPECT_GT(std::stoull(stats.substr(at + std::strlen("migrations: "))), 0u) << stats;
  const std::string formats = Property(db.get(), "jigsaw.table-formats");
  EXPECT_NE(formats.find("pmem 0 KeySet blocks"), std::string::npos) << formats;
  EXPECT_NE(formats.find("ssd 0 tables of KeySet blocks"), std::string::npos) << formats;
  std::istringstream rows(Property(db.get(), "jigsaw.compaction-profile"));
  std::string line;
  std::getline(rows, line);  // the header
  int migrations = 0, pmem_flushes = 0;
  std::vector<double> f;
  while (std::getline(rows, line)) {
    ParseProfileRow(line, &f);
    ASSERT_EQ(f.size(), 20u) << line;
    if (f[16] > 0) {  // entries_migrated
      ++migrations;
      EXPECT_EQ(f[6], 0) << line;  // encode
      EXPECT_GT(f[11], 0) << line;  // bytes_out
    } else if (f[1] < 0) {  // a flush, into pmem
      ++pmem_flushes;
      EXPECT_EQ(f[2], 0) << line;
      EXPECT_GT(f[6], 0) << line;
      EXPECT_GT(f[11], 0) << line;
      EXPECT_GT(f[12], 0) << line;
    }
  }
  EXPECT_GT(migrations, 0);
  EXPECT_GT(pmem_flushes, 0);
  ExpectContents(db.get(), model);
  EXPECT_TRUE(db->VerifyIntegrity().ok());
  db.reset();
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  ExpectContents(db.get(), model);
  EXPECT_TRUE(db->VerifyIntegrity().ok());
}

TEST(SsdTierTest, ApproximateSizesReachInsideMigratedTables) {
  test::ScratchDir dir;
  std::unique_ptr<DB> db;
  std::map<std::string, std::string> model;
  ASSERT_NO_FATAL_FAILURE(OpenWithKeysInOrder(dir, &db, &model));
  ASSERT_GT(MigratedTableFiles(dir.path()), 0u);
  const Range ranges[] = {{"seq00000000", "seq00030000"},   // every key
                          {"seq00000000", "seq00015000"},   // the first half
                          {"seq00007500", "seq00022500"}};  // the middle half
  uint64_t sizes[3];
  db->GetApproximateSizes(ranges, 3, sizes);
  ASSERT_GT(sizes[0], 0u);
  for (int half : {1, 2}) {
    EXPECT_GT(sizes[half], sizes[0] / 4) << half;
    EXPECT_LT(sizes[half], sizes[0] * 3 / 4) << half;
  }
  // Short ranges, most of them inside one table, are not empty (the last
  // keys, still in memtables and L0, are left out: sizes count tables).
  for (int start = 0; start < 24000; start += 1000) {
    char begin[16], end[16];
    std::snprintf(begin, sizeof(begin), "seq%08d", start);
    std::snprintf(end, sizeof(end), "seq%08d", start + 300);
    const Range range(begin, end);
    uint64_t size = 0;
    db->GetApproximateSizes(&range, 1, &size);
    EXPECT_GT(size, sizes[0] / 30000 * 30) << begin;
  }
}

// A migration's table files are synced off the critical path like any
// compaction output: lost in a power failure before that, the migration
// is redone from the pmem blocks it left as shadows.
TEST(SsdTierTest, MigratedTablesLostInACrashAreRedoneFromTheirPmemBlocks) {
  test::ScratchDir dir;
  test::FaultInjectionFileSystem fs;
  std::map<std::string, std::string> model;
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(HybridOptions(&fs), dir.path(), &db).ok());
    ASSERT_EQ(WriteInOrder(db.get(), 0, 10000, &model), 10000);
    // Quiet: everything at the bottom and durable, so that the next
    // compaction is the migration of the next L0 tables (keys beyond all).
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    WaitForTracker(db.get());
    // From here no table file becomes durable: the tracker fails (and the
    // store stops taking writes), migrations stay pending.
    fs.SetActive(false);
    const size_t before = MigratedTableFiles(dir.path());
    WriteInOrder(db.get(), 10000, 40000, &model);
    EXPECT_GT(MigratedTableFiles(dir.path()), before);
    const std::string stats = Property(db.get(), "jigsaw.sync-stats");
    EXPECT_GT(Field(stats, "pending_compactions"), 0u) << stats;
  }
  fs.DropUnsyncedData();
  fs.SetActive(true);
  std::unique_ptr<DB> db;
  const Status s = DB::Open(HybridOptions(&fs), dir.path(), &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_GT(Field(Property(db.get(), "jigsaw.sync-stats"), "redone_at_recovery"), 0u);
  EXPECT_TRUE(db->VerifyIntegrity().ok());
  std::map<std::string, std::string> got;
  auto it = db->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) got[it->key().ToString()] = it->value().ToString();
  EXPECT_TRUE(got == model);
  for (const auto& [key, value] : model) {
    std::string got_value;
    ASSERT_TRUE(db->Get(ReadOptions(), key, &got_value).ok()) << key;
    ASSERT_EQ(got_value, value);
  }
}

TEST(SsdTierTest, FullDiskIsNoSpaceAndTheStoreStaysReadable) {
  test::ScratchDir dir;
  test::FaultInjectionFileSystem fs;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(HybridOptions(&fs), dir.path(), &db).ok());
  std::map<std::string, std::string> model;
  ASSERT_EQ(WriteKeys(db.get(), 0, 20000, &model), 20000);
  WaitForTracker(db.get());
  fs.SetSpaceLeft(0);
  const int written = WriteKeys(db.get(), 20000, 200000, &model);
  EXPECT_LT(written, 180000) << "writes never noticed the full disk";
  WriteOptions sync;
  sync.sync = true;
  const Status s = db->Put(sync, "one-more", "value");
  EXPECT_TRUE(s.IsNoSpace()) << s.ToString();
  ExpectContents(db.get(), model);
  // Space comes back: compaction resumes and writes succeed again.
  fs.SetSpaceLeft(-1);
  Status again;
  for (int i = 0; i < 1200; ++i) {  // up to a minute
    again = db->Put(sync, "one-more", "value");
    if (again.ok()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(again.ok()) << again.ToString();
  model["one-more"] = "value";
  db.reset();
  ASSERT_TRUE(DB::Open(HybridOptions(&fs), dir.path(), &db).ok());
  ExpectContents(db.get(), model);
}

TEST(SsdTierTest, DamagedTableIsCorruptionNamingTheFile) {
  test::ScratchDir dir;
  std::map<std::string, std::string> model;
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(HybridOptions(nullptr), dir.path(), &db).ok());
    ASSERT_EQ(WriteKeys(db.get(), 0, 30000, &model), 30000);
  }
  std::string victim;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    if (entry.path().extension() == ".jst") victim = entry.path().string();
  }
  ASSERT_FALSE(victim.empty());
  std::filesystem::resize_file(victim, std::filesystem::file_size(victim) / 2);
  std::unique_ptr<DB> db;
  const Status s = DB::Open(HybridOptions(nullptr), dir.path(), &db);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(victim), std::string::npos) << s.ToString();
}

// Writes keys 0..30000 into a new database in `dir`, compacts them all into
// SSD tables and closes it; returns the paths of its table files (in
// directory order).
std::vector<std::string> WriteCompactedStore(const std::string& dir, const Options& options,
                                             std::map<std::string, std::string>* model) {
  {
    std::unique_ptr<DB> db;
    EXPECT_TRUE(DB::Open(options, dir, &db).ok());
    if (db == nullptr) return {};
    EXPECT_EQ(WriteKeys(db.get(), 0, 30000, model), 30000);
    EXPECT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  }
  std::vector<std::string> tables;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".jst") tables.push_back(entry.path().string());
  }
  return tables;
}

// A damaged block inside a table (index intact): with paranoid checks the
// lookups that need it, single or batched, get Corruption naming the file;
// every other key is still served.
TEST(SsdTierTest, DamagedBlockFailsOnlyTheLookupsThatNeedIt) {
  test::ScratchDir dir;
  std::map<std::string, std::string> model;
  Options options = HybridOptions(nullptr);
  options.paranoid_checks = true;
  options.ssd_io = SsdIo::kUring;  // MultiGet batches its block reads (pread if io_uring is unavailable)
  const std::vector<std::string> tables = WriteCompactedStore(dir.path(), options, &model);
  ASSERT_FALSE(tables.empty());
  const std::string victim = tables.back();
  FlipByte(victim, 200);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  std::vector<std::string> names;
  for (int i = 0; i < 9000; ++i) names.push_back("key" + std::to_string(i));
  std::vector<Slice> keys(names.begin(), names.end());
  std::vector<std::string> values;
  const std::vector<Status> statuses = db->MultiGet(ReadOptions(), keys, &values);
  int damaged = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    std::string value;
    const Status single = db->Get(ReadOptions(), names[i], &value);
    if (statuses[i].IsCorruption()) {
      ++damaged;
      EXPECT_NE(statuses[i].ToString().find(victim), std::string::npos) << statuses[i].ToString();
      EXPECT_TRUE(single.IsCorruption()) << names[i] << ": " << single.ToString();
      continue;
    }
    ASSERT_TRUE(statuses[i].ok()) << names[i] << ": " << statuses[i].ToString();
    EXPECT_EQ(values[i], model.at(names[i]));
    EXPECT_TRUE(single.ok()) << names[i] << ": " << single.ToString();
  }
  EXPECT_GT(damaged, 0);
  EXPECT_LT(damaged, 1000);  // one block's keys, not the table's
}

// Gets read SSD tables through a guarded mapping (Options::ssd_mapped_gets,
// the default): a table that loses its pages behind the engine -- truncated
// here, as an I/O error would take them -- makes the Gets that need it return
// IOError naming the file, and every other Get answers as before; the
// process goes on and the database closes.
TEST(SsdTierTest, ATableThatLosesItsPagesFailsOnlyTheGetsThatNeedItWithIOError) {
  JIGSAW_SKIP_FAULTS_UNDER_TSAN();
  test::ScratchDir dir;
  std::map<std::string, std::string> model;
  Options options = HybridOptions(nullptr);
  ASSERT_TRUE(options.ssd_mapped_gets);
  const std::vector<std::string> tables = WriteCompactedStore(dir.path(), options, &model);
  ASSERT_GT(tables.size(), 1u);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  const std::string victim = tables.front();
  std::filesystem::resize_file(victim, 0);
  int faults = 0, served = 0;
  for (const auto& [key, expected] : model) {
    std::string value;
    const Status s = db->Get(ReadOptions(), key, &value);
    if (s.IsIOError()) {
      EXPECT_NE(s.ToString().find(victim), std::string::npos) << s.ToString();
      ++faults;
      continue;
    }
    ASSERT_TRUE(s.ok()) << key << ": " << s.ToString();
    EXPECT_EQ(value, expected);
    ++served;
  }
  EXPECT_GT(faults, 0);
  EXPECT_GT(served, faults);  // one table's keys, not the store's
  db.reset();  // closes cleanly
}

// With paranoid checks off a damaged block may be served to a Get, but a
// compaction never rewrites one as if intact: it verifies what it reads,
// fails with Corruption naming the file and commits nothing.
// Both read paths: blocks read by pread, and blocks served from a mapping.
class DamagedBlockTest : public ::testing::TestWithParam<bool> {};

TEST_P(DamagedBlockTest, CompactionRefusesToRewriteIt) {
  test::ScratchDir dir;
  std::map<std::string, std::string> model;
  Options options = HybridOptions(nullptr);
  options.ssd_use_mmap = GetParam();
  options.paranoid_checks = false;
  const std::vector<std::string> tables = WriteCompactedStore(dir.path(), options, &model);
  ASSERT_FALSE(tables.empty());
  const std::string victim = tables.front();
  FlipByte(victim, 200);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  // New versions across the whole key range: the next full compaction must
  // merge them with every table, the damaged one included.
  for (int i = 0; i < 9000; i += 10) {
    const std::string key = "key" + std::to_string(i);
    ASSERT_TRUE(db->Put(WriteOptions(), key, "new").ok());
    model[key] = "new";
  }
  const Status s = db->CompactRange(nullptr, nullptr);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(victim), std::string::npos) << s.ToString();
  EXPECT_TRUE(std::filesystem::exists(victim));  // still the live table
  int served = 0;
  for (int i = 0; i < 9000; ++i) {
    const std::string key = "key" + std::to_string(i);
    std::string value;
    if (db->Get(ReadOptions(), key, &value).ok() && value == model.at(key)) ++served;
  }
  EXPECT_GT(served, 8000);  // all but the damaged block's keys
}

// With paranoid checks off a damaged value byte goes unseen by a plain
// iterator or Get; with ReadOptions::verify_checksums every SSD block read
// is checked: the iterator stops with Corruption naming the file, and a Get
// of a key in the damaged block returns Corruption.
TEST_P(DamagedBlockTest, IteratorWithVerifyChecksumsFindsIt) {
  test::ScratchDir dir;
  std::map<std::string, std::string> model;
  Options options = HybridOptions(nullptr);
  options.ssd_use_mmap = GetParam();
  options.paranoid_checks = false;
  const std::vector<std::string> tables = WriteCompactedStore(dir.path(), options, &model);
  ASSERT_FALSE(tables.empty());
  const std::string victim = tables.back();
  std::string bytes;
  {
    std::ifstream in(victim, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const size_t value = bytes.find(std::string(120, 'v'), bytes.size() / 3);  // a value in a middle block
  ASSERT_NE(value, std::string::npos);
  FlipByte(victim, static_cast<std::streamoff>(value + 60));
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());

  auto plain = db->NewIterator(ReadOptions());
  size_t n = 0;
  for (plain->SeekToFirst(); plain->Valid(); plain->Next()) ++n;
  EXPECT_TRUE(plain->status().ok()) << plain->status().ToString();
  EXPECT_EQ(n, model.size());
  ReadOptions verify;
  verify.verify_checksums = true;
  auto checked = db->NewIterator(verify);
  n = 0;
  for (checked->SeekToFirst(); checked->Valid(); checked->Next()) ++n;
  EXPECT_TRUE(checked->status().IsCorruption()) << checked->status().ToString();
  EXPECT_NE(checked->status().ToString().find(victim), std::string::npos) << checked->status().ToString();
  EXPECT_LT(n, model.size());
  // Get: the keys of the damaged block read without error unless verified.
  size_t plain_errors = 0, verified_errors = 0;
  std::string got;
  for (const auto& [key, expected] : model) {
    if (!db->Get(ReadOptions(), key, &got).ok()) ++plain_errors;
    Status s = db->Get(verify, key, &got);
    if (!s.ok()) {
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
      ++verified_errors;
    }
  }
  EXPECT_EQ(plain_errors, 0u);
  EXPECT_GT(verified_errors, 0u);
}

INSTANTIATE_TEST_SUITE_P(ReadPaths, DamagedBlockTest, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "Mmap" : "Pread"; });

// Under default options (paranoid_checks) a damaged SSD block is never
// served as data: every Get, MultiGet and iterator either returns the
// written value or ends with Corruption, on each read path -- Gets through
// the guarded mapping (the default), through the block cache, from a table
// mapped whole, and from a large (migrated) block read in pieces.
enum class ReadPath { kMappedGets, kCache, kMmap, kPieces };

class DamagedBlockByDefaultTest : public ::testing::TestWithParam<ReadPath> {};

TEST_P(DamagedBlockByDefaultTest, IsCorruptionNeverData) {
  test::ScratchDir dir;
  std::map<std::string, std::string> model;
  Options options = HybridOptions(nullptr);
  ASSERT_TRUE(options.paranoid_checks);
  options.ssd_mapped_gets = GetParam() == ReadPath::kMappedGets;
  options.ssd_use_mmap = GetParam() == ReadPath::kMmap;
  std::string victim;
  if (GetParam() == ReadPath::kPieces) {
    std::unique_ptr<DB> db;
    ASSERT_NO_FATAL_FAILURE(OpenWithKeysInOrder(dir, &db, &model));
    db.reset();
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
      if (entry.path().extension() == ".jst" && FirstBlockSize(entry.path()) > (64 << 10)) victim = entry.path();
    }
  } else {
    const std::vector<std::string> tables = WriteCompactedStore(dir.path(), options, &model);
    ASSERT_FALSE(tables.empty());
    victim = tables.back();
  }
  ASSERT_FALSE(victim.empty());
  // A byte of a value in the middle of the file: its block's structure
  // stays sound, only its CRC tells.
  std::string bytes;
  {
    std::ifstream in(victim, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string run = GetParam() == ReadPath::kPieces ? std::string(100, 'm') : std::string(120, 'v');
  const size_t value = bytes.find(run, bytes.size() / 3);
  ASSERT_NE(value, std::string::npos);
  FlipByte(victim, static_cast<std::streamoff>(value + 50));
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());

  size_t corrupt = 0;
  std::vector<std::string> names;
  for (const auto& [key, expected] : model) {
    std::string got;
    const Status s = db->Get(ReadOptions(), key, &got);
    names.push_back(key);
    if (s.ok()) {
      ASSERT_EQ(got, expected) << key;
      continue;
    }
    ASSERT_TRUE(s.IsCorruption()) << key << ": " << s.ToString();
    EXPECT_NE(s.ToString().find(victim), std::string::npos) << s.ToString();
    ++corrupt;
  }
  EXPECT_GT(corrupt, 0u);
  EXPECT_LT(corrupt, model.size() / 2);  // the damaged block's keys, not the store's
  const std::vector<Slice> keys(names.begin(), names.end());
  std::vector<std::string> values;
  const std::vector<Status> statuses = db->MultiGet(ReadOptions(), keys, &values);
  size_t multi_corrupt = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    if (statuses[i].ok()) {
      ASSERT_EQ(values[i], model.at(names[i])) << names[i];
    } else {
      ASSERT_TRUE(statuses[i].IsCorruption()) << names[i] << ": " << statuses[i].ToString();
      ++multi_corrupt;
    }
  }
  EXPECT_EQ(multi_corrupt, corrupt);
  // An iterator yields only written entries, and stops at the damage.
  auto it = db->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const auto found = model.find(it->key().ToString());
    ASSERT_NE(found, model.end()) << it->key().ToString();
    ASSERT_EQ(it->value().ToString(), found->second) << found->first;
  }
  EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
}

INSTANTIATE_TEST_SUITE_P(ReadPaths, DamagedBlockByDefaultTest,
                         ::testing::Values(ReadPath::kMappedGets, ReadPath::kCache, ReadPath::kMmap, ReadPath::kPieces),
                         [](const ::testing::TestParamInfo<ReadPath>& info) {
                           switch (info.param) {
                             case ReadPath::kMappedGets:
                               return std::string("MappedGets");
                             case ReadPath::kCache:
                               return std::string("Cache");
                             case ReadPath::kMmap:
                               return std::string("Mmap");
                             default:
                               return std::string("Pieces");
                           }
                         });

// Disk-only mode: a power failure (every unsynced byte dropped) at a random
// moment keeps every write acknowledged with sync=true and a prefix of the
// rest.
TEST(SsdTierTest, DiskOnlyModeKeepsAcknowledgedWritesWhenThePageCacheIsLost) {
  for (int round = 0; round < 3; ++round) {
    test::ScratchDir dir;
    test::FaultInjectionFileSystem fs;
    Options options = test::SmallOptions();
    options.storage_mode = StorageMode::kDisk;
    options.file_system = &fs;
    std::mt19937_64 rng(round);
    const int crash_at = 3000 + static_cast<int>(rng() % 20000);
    int acked = 0;  // writes [0, acked) are promised durable
    int written = 0;
    {
      std::unique_ptr<DB> db;
      ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
      for (int i = 0; i < 30000; ++i) {
        if (i == crash_at) fs.SetActive(false);  // nothing reaches the disk from here
        WriteOptions wo;
        wo.sync = i % 10 == 0;
        char key[32];
        std::snprintf(key, sizeof(key), "key%08d", i);
        if (!db->Put(wo, key, std::string(100, 'a' + i % 26)).ok()) break;
        written = i + 1;
        if (wo.sync && i < crash_at) acked = i + 1;
      }
    }
    fs.DropUnsyncedData();
    fs.SetActive(true);
    std::unique_ptr<DB> db;
    const Status s = DB::Open(options, dir.path(), &db);
    ASSERT_TRUE(s.ok()) << "round " << round << ": " << s.ToString();
    ASSERT_TRUE(db->VerifyIntegrity().ok());
    // The contents are keys [0, n) for some acked <= n <= written.
    int n = 0;
    auto it = db->NewIterator(ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++n) {
      char key[32];
      std::snprintf(key, sizeof(key), "key%08d", n);
      ASSERT_EQ(it->key().ToString(), key) << "round " << round << ": a write is missing before later ones";
      ASSERT_EQ(it->value().ToString(), std::string(100, 'a' + n % 26));
    }
    std::printf("round %d: crash at %d, acknowledged %d, written %d, recovered %d\n", round, crash_at, acked, written, n);
    EXPECT_GE(n, acked) << "round " << round << ": acknowledged writes lost";
    EXPECT_LE(n, written);
  }
}

// On a disk filesystem (the working directory) the automatic choice is
// io_uring where the kernel allows it; scans read ahead through it.
TEST(SsdTierTest, DiskModeOnADiskFilesystemReadsAheadThroughIoUring) {
  const std::string dir = (std::filesystem::current_path() / ("ssd-tier-" + std::to_string(::getpid()))).string();
  std::filesystem::remove_all(dir);
  Options options = test::SmallOptions();
  options.storage_mode = StorageMode::kDisk;
  options.block_cache_capacity = 1 << 20;  // small: the scan must read from the files
  std::map<std::string, std::string> model;
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir, &db).ok());
    ASSERT_EQ(WriteKeys(db.get(), 0, 20000, &model), 20000);
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    std::string why;
    const bool uring = ssd::NewUringEngine(4, &why) != nullptr;
    const std::string io = Property(db.get(), "jigsaw.io");
    EXPECT_EQ(io.rfind(uring ? "io_uring" : "pread", 0), 0u) << io;
    ExpectContents(db.get(), model);
    EXPECT_TRUE(db->VerifyIntegrity().ok());
  }
  ASSERT_TRUE(DestroyDB(dir, options).ok());
  EXPECT_FALSE(std::filesystem::exists(dir)) << "DestroyDB left files behind";
  std::filesystem::remove_all(dir);
}

// The classic (LevelDB-style) table format works end to end, and the
// compaction profile accounts every phase.
TEST(SsdTierTest, ClassicTablesAndTheCompactionProfile) {
  for (TableFormat format : {TableFormat::kKeySet, TableFormat::kClassic}) {
    test::ScratchDir dir;
    Options options = test::SmallOptions();
    options.storage_mode = StorageMode::kDisk;
    options.table_format = format;
    options.profile_compactions = true;
    std::map<std::string, std::string> model;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    ASSERT_EQ(WriteKeys(db.get(), 0, 25000, &model), 25000);
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    ExpectContents(db.get(), model);
    EXPECT_TRUE(db->VerifyIntegrity().ok());
    WaitForTracker(db.get());
    const std::string csv = Property(db.get(), "jigsaw.compaction-profile");
    std::istringstream rows(csv);
    std::string line;
    std::getline(rows, line);
    EXPECT_EQ(line.rfind("start_s,level,", 0), 0u) << line;
    int flushes = 0, compactions = 0;
    double encode = 0, decode = 0, copy = 0, filter_checksum = 0, decode_convert = 0;
    std::vector<double> f;
    while (std::getline(rows, line)) {
      ParseProfileRow(line, &f);
      ASSERT_EQ(f.size(), 20u) << line;
      EXPECT_LE(f[15], f[12]) << line;  // spliced entries are among those read
      if (f[14] > 0) {  // a trivial move: tables moved by reference, nothing read or written
        EXPECT_GE(f[1], 0) << line;
        EXPECT_EQ(f[11], 0) << line;
        EXPECT_EQ(f[12], 0) << line;
        continue;
      }
      const double parts = f[3] + f[4] + f[5] + f[6] + f[7];  // read..write, within the loop
      for (int i = 3; i <= 9; ++i) EXPECT_GE(f[i], 0) << line;
      EXPECT_LE(parts, f[9] * 1.01 + 1e-6) << line;  // phases never exceed the total
      EXPECT_GT(f[11], 0) << line;
      EXPECT_GT(f[12], 0) << line;  // entries
      EXPECT_GE(f[13], 0) << line;  // the profile's own clock cost
      (f[1] < 0 ? flushes : compactions)++;
      encode += f[6];
      decode += f[4];
      copy += f[17];
      filter_checksum += f[18];
      decode_convert += f[19];
    }
    EXPECT_GT(flushes, 0);
    EXPECT_GT(compactions, 0);
    EXPECT_GT(encode, 0);
    EXPECT_GT(decode, 0);
    // The parts of encode and decode are estimated from other sampled calls
    // than their totals, so no order between them is certain: only that
    // each was measured.
    EXPECT_GT(copy, 0);
    EXPECT_GT(filter_checksum, 0);
    // Only the classic reader converts as it steps: a KeySet block is read
    // in place.
    if (format == TableFormat::kClassic) {
      EXPECT_GT(decode_convert, 0);
    } else {
      EXPECT_EQ(decode_convert, 0);
    }
    db.reset();
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    ExpectContents(db.get(), model);
  }
}

// A power failure before any sync write of a fresh log leaves an empty log
// (its header is synced when it is created), not an unopenable database.
TEST(SsdTierTest, DiskOnlyModeOpensAfterAPowerFailureWithOnlyUnsyncedWrites) {
  test::ScratchDir dir;
  test::FaultInjectionFileSystem fs;
  Options options = test::SmallOptions();
  options.storage_mode = StorageMode::kDisk;
  options.file_system = &fs;
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    fs.SetActive(false);  // from here on nothing reaches the disk
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(db->Put(WriteOptions(), "k" + std::to_string(i), "v").ok());
  }
  fs.DropUnsyncedData();
  fs.SetActive(true);
  std::unique_ptr<DB> db;
  const Status s = DB::Open(options, dir.path(), &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(db->VerifyIntegrity().ok());
}

// SSD files belong to one open database at a time.
TEST(SsdTierTest, ASecondOpenOfTheSameDirectoryIsRefused) {
  for (StorageMode mode : {StorageMode::kHybrid, StorageMode::kDisk}) {
    test::ScratchDir dir;
    Options options = HybridOptions(nullptr);
    options.storage_mode = mode;
    std::unique_ptr<DB> first, second;
    ASSERT_TRUE(DB::Open(options, dir.path(), &first).ok());
    const Status s = DB::Open(options, dir.path(), &second);
    EXPECT_FALSE(s.ok());
    EXPECT_NE(s.ToString().find("LOCK"), std::string::npos) << s.ToString();
    first.reset();
    EXPECT_TRUE(DB::Open(options, dir.path(), &second).ok());
  }
}

// A sync that fails for lack of space leaves the compaction pending and is
// retried: once space returns the outputs become durable and nothing is lost.
TEST(SsdTierTest, TrackerRetriesSyncsThatHitAFullDevice) {
  test::ScratchDir dir;
  test::FaultInjectionFileSystem fs;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(HybridOptions(&fs), dir.path(), &db).ok());
  std::map<std::string, std::string> model;
  ASSERT_EQ(WriteKeys(db.get(), 0, 15000, &model), 15000);
  WaitForTracker(db.get());
  fs.SetSyncNoSpace(true);
  WriteKeys(db.get(), 15000, 40000, &model);  // may end early with NoSpace
  // A compaction into SSD tables completes and stays pending: its syncs fail.
  for (int i = 0; i < 6000 && Field(Property(db.get(), "jigsaw.sync-stats"), "pending_compactions") == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_GT(Field(Property(db.get(), "jigsaw.sync-stats"), "pending_compactions"), 0u);
  fs.SetSyncNoSpace(false);
  WaitForTracker(db.get());
  EXPECT_EQ(Field(Property(db.get(), "jigsaw.sync-stats"), "pending_compactions"), 0u);
  ExpectContents(db.get(), model);
  WriteOptions sync;
  sync.sync = true;
  Status s;
  for (int i = 0; i < 1200 && !(s = db->Put(sync, "after", "space")).ok(); ++i) {  // up to a minute
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(s.ok()) << s.ToString();
  model["after"] = "space";
  db.reset();
  fs.DropUnsyncedData();  // everything that matters was synced
  ASSERT_TRUE(DB::Open(HybridOptions(&fs), dir.path(), &db).ok());
  ExpectContents(db.get(), model);
}

// A table write through io_uring that never completes (from some point the
// file system's rings write to a full pipe nobody reads): the compaction
// gives the ring up after the bound, writes its table with pwrite and
// finishes; "jigsaw.io" counts the stall, later tables skip io_uring, and
// the data survive a reopen.
TEST(SsdTierTest, ACompactionFinishesWhenATableWriteNeverCompletes) {
  std::string why;
  if (ssd::NewUringEngine(4, &why) == nullptr) GTEST_SKIP() << "io_uring unavailable here: " << why;
  test::ScratchDir dir;
  test::FullPipe pipe;  // outlives the file system
  std::atomic<bool> stall{false};
  std::atomic<int> stalled_rings{0};
  ssd::PosixFileSystemOptions fs_options;
  fs_options.uring_wait_bound = std::chrono::milliseconds(50);
  fs_options.ring_target_for_test = [&](const std::string&) {
    if (!stall) return -1;
    ++stalled_rings;
    return pipe.write_fd();
  };
  std::unique_ptr<FileSystem> fs = ssd::NewPosixFileSystem(std::move(fs_options));
  Options options = test::SmallOptions();
  options.storage_mode = StorageMode::kDisk;
  options.file_system = fs.get();
  options.ssd_io = SsdIo::kUring;  // table writes through io_uring
  std::map<std::string, std::string> model;
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
    ASSERT_EQ(WriteKeys(db.get(), 0, 20000, &model), 20000);
  }
  // Reopened, the log's entries are in an L0 table and the memtable is
  // empty: every table written from here on is a compaction's.
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  const uint64_t flushes = std::stoull(Property(db.get(), "jigsaw.flushes"));
  const uint64_t compactions = std::stoull(Property(db.get(), "jigsaw.compactions"));
  const uint64_t stalls = ssd::UringStalls().table_writes;
  stall = true;
  const Status s = db->CompactRange(nullptr, nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_GT(std::stoull(Property(db.get(), "jigsaw.compactions")), compactions);
  EXPECT_EQ(std::stoull(Property(db.get(), "jigsaw.flushes")), flushes);
  EXPECT_EQ(stalled_rings.load(), 1);  // the tables after the stalled one skip io_uring
  EXPECT_EQ(ssd::UringStalls().table_writes, stalls + 1);
  const std::string io = Property(db.get(), "jigsaw.io");
  EXPECT_NE(io.find("table writes " + std::to_string(stalls + 1)), std::string::npos) << io;
  ExpectContents(db.get(), model);
  EXPECT_TRUE(db->VerifyIntegrity().ok());
  WaitForTracker(db.get());
  db.reset();
  options.file_system = nullptr;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  ExpectContents(db.get(), model);
  EXPECT_TRUE(db->VerifyIntegrity().ok());
}

// Bytes of the SSD table files (*.jst) in `dir`.
uint64_t TableFileBytes(const std::string& dir) {
  uint64_t bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".jst") bytes += entry.file_size();
  }
  return bytes;
}

// Options::compression: a database whose SSD tables are compressed serves
// Get, MultiGet and iterators like the model, from fewer bytes on disk, and
// reopens under every other setting -- tables of both kinds, mixed, read as
// one.
class CompressedTablesTest : public ::testing::TestWithParam<StorageMode> {};

TEST_P(CompressedTablesTest, ServeTheModelFromFewerBytesAndReopenUnderAnySetting) {
  std::map<std::string, std::string> model;
  std::mt19937_64 rng(61);
  auto write = [&](DB* db, int round) {
    for (int i = 0; i < 6000; ++i) {
      const std::string key = "key" + std::to_string(rng() % 20000);
      if (i % 13 == 0) {
        ASSERT_TRUE(db->Delete(WriteOptions(), key).ok());
        model.erase(key);
        continue;
      }
      std::string value(100 + rng() % 200, '\0');  // half random, half a repeat of it
      for (size_t b = 0; b < value.size(); ++b) {
        value[b] = b < value.size() / 2 ? static_cast<char>('a' + rng() % 26) : value[b - value.size() / 2];
      }
      value += std::to_string(round);
      ASSERT_TRUE(db->Put(WriteOptions(), key, value).ok());
      model[key] = value;
    }
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  };
  auto expect_model = [&](DB* db) {
    auto it = db->NewIterator(ReadOptions());
    auto m = model.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
      ASSERT_NE(m, model.end());
      ASSERT_EQ(it->key().ToString(), m->first);
      ASSERT_EQ(it->value().ToString(), m->second);
    }
    ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    ASSERT_EQ(m, model.end());
    std::vector<Slice> keys;
    std::vector<std::string> names;
    for (int i = 0; i < 400; ++i) names.push_back("key" + std::to_string(rng() % 20000));
    for (const std::string& k : names) keys.push_back(k);
    std::vector<std::string> values;
    const std::vector<Status> got = db->MultiGet(ReadOptions(), keys, &values);
    for (size_t i = 0; i < names.size(); ++i) {
      std::string value;
      const Status s = db->Get(ReadOptions(), names[i], &value);
      const auto want = model.find(names[i]);
      if (want == model.end()) {
        ASSERT_TRUE(s.IsNotFound() && got[i].IsNotFound()) << s.ToString() << " " << got[i].ToString();
      } else {
        ASSERT_TRUE(s.ok() && got[i].ok()) << s.ToString() << " " << got[i].ToString();
        ASSERT_EQ(value, want->second);
        ASSERT_EQ(values[i], want->second);
      }
    }
    ASSERT_TRUE(db->VerifyIntegrity().ok());
  };

  uint64_t table_bytes[2] = {};
  for (const Compression compression : {Compression::kNone, Compression::kLZ4}) {
    test::ScratchDir dir;
    Options options = test::SmallModeOptions(GetParam());
    options.compression = compression;
    model.clear();
    rng.seed(61);
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path() + "/db", &db).ok());
    write(db.get(), 0);
    expect_model(db.get());
    table_bytes[compression == Compression::kNone ? 0 : 1] = TableFileBytes(dir.path() + "/db");
    if (compression == Compression::kNone) continue;
    // Reopened under every other setting, written and compacted again.
    for (const Compression next : {Compression::kZstd, Compression::kNone, Compression::kLZ4}) {
      db.reset();
      options.compression = next;
      ASSERT_TRUE(DB::Open(options, dir.path() + "/db", &db).ok());
      expect_model(db.get());
      write(db.get(), static_cast<int>(next) + 1);
      expect_model(db.get());
    }
  }
  ASSERT_GT(table_bytes[0], 0u);
  EXPECT_LT(table_bytes[1], table_bytes[0] * 8 / 10) << table_bytes[1] << " vs " << table_bytes[0];
}

INSTANTIATE_TEST_SUITE_P(DiskAndHybrid, CompressedTablesTest,
                         ::testing::Values(StorageMode::kDisk, StorageMode::kHybrid));

}  // namespace
}  // namespace jigsaw
