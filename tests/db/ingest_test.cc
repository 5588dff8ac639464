// TableFileWriter and DB::IngestExternalFile in every storage mode: files
// ingested into an empty range go as they are to the last level, files
// over existing keys, snapshots or memtables take the ingest's sequence
// number in L0; bad input is refused with nothing ingested; a kill leaves
// each ingest whole or absent.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "jigsaw/db.h"
#include "jigsaw/table_file_writer.h"
#include "tests/support/db_test_util.h"

namespace jigsaw {
namespace {

using test::Contents;
using test::NumberedKey;

std::string Value(uint64_t i, const std::string& tag) { return tag + "-" + std::to_string(i) + std::string(80, 'i'); }

// Writes keys [first, first + n) with Value(i, tag) into a table file;
// every `delete_every`-th key (0: none) as a deletion instead.
ExternalFileInfo WriteFile(const std::string& path, uint64_t first, uint64_t n, const std::string& tag,
                           uint64_t delete_every = 0) {
  TableFileWriter writer(test::SmallOptions());
  EXPECT_TRUE(writer.Open(path).ok());
  for (uint64_t i = first; i < first + n; ++i) {
    Status s = delete_every != 0 && i % delete_every == 0 ? writer.Delete(NumberedKey(i))
                                                          : writer.Put(NumberedKey(i), Value(i, tag));
    EXPECT_TRUE(s.ok()) << s.ToString();
  }
  ExternalFileInfo info;
  Status s = writer.Finish(&info);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return info;
}

TEST(TableFileWriterTest, KeysMustIncreaseAndAFileMustHoldOne) {
  test::ScratchDir dir;
  TableFileWriter writer(test::SmallOptions());
  EXPECT_TRUE(writer.Put("a", "1").IsInvalidArgument());  // not open
  ASSERT_TRUE(writer.Open(dir.path() + "/t.jst").ok());
  EXPECT_TRUE(writer.Finish().IsInvalidArgument());  // empty
  ASSERT_TRUE(writer.Open(dir.path() + "/t.jst").ok());
  ASSERT_TRUE(writer.Put("b", "1").ok());
  EXPECT_TRUE(writer.Put("b", "2").IsInvalidArgument());
  EXPECT_TRUE(writer.Put("a", "2").IsInvalidArgument());
  ASSERT_TRUE(writer.Delete("c").ok());
  ExternalFileInfo info;
  ASSERT_TRUE(writer.Finish(&info).ok());
  EXPECT_EQ(info.smallest_key, "b");
  EXPECT_EQ(info.largest_key, "c");
  EXPECT_EQ(info.entries, 2u);
  EXPECT_EQ(info.file_size, std::filesystem::file_size(dir.path() + "/t.jst"));
}

class IngestTest : public ::testing::TestWithParam<StorageMode> {
 protected:
  Options DbOptions() const { return test::SmallModeOptions(GetParam()); }
  std::string FilePath(const std::string& name) const { return files_.path() + "/" + name; }
  // The table files in the database's directory.
  size_t TableFiles() const {
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(db_.path())) n += e.path().extension() == ".jst";
    return n;
  }

  test::ScratchDir db_;
  test::ScratchDir files_;
};

TEST_P(IngestTest, FilesIntoAnEmptyRangeGoToTheLastLevelAsTheyAre) {
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(DbOptions(), db_.path(), &db).ok());
  // Existing keys elsewhere: [100000, 100500).
  for (uint64_t i = 100000; i < 100500; ++i) ASSERT_TRUE(db->Put(WriteOptions(), NumberedKey(i), "old").ok());
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  std::map<std::string, std::string> model = Contents(db.get());
  WriteFile(FilePath("a.jst"), 0, 3000, "a");
  WriteFile(FilePath("b.jst"), 3000, 3000, "b");
  const uint64_t before = db->GetLatestSequenceNumber();
  Status s = db->IngestExternalFile({FilePath("b.jst"), FilePath("a.jst")}, IngestExternalFileOptions());
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(db->GetLatestSequenceNumber(), before + 1);
  for (uint64_t i = 0; i < 6000; ++i) model[NumberedKey(i)] = Value(i, i < 3000 ? "a" : "b");
  EXPECT_EQ(Contents(db.get()), model);
  std::string n;
  ASSERT_TRUE(db->GetProperty("jigsaw.num-tables-at-level6", &n));
  EXPECT_GT(std::stoi(n), 0);
  // Copied: the originals stay.
  EXPECT_TRUE(std::filesystem::exists(FilePath("a.jst")));
  // Whole after reopening, and through compactions.
  db.reset();
  ASSERT_TRUE(DB::Open(DbOptions(), db_.path(), &db).ok());
  EXPECT_EQ(Contents(db.get()), model);
  EXPECT_TRUE(db->VerifyIntegrity().ok());
  ASSERT_TRUE(db->Put(WriteOptions(), NumberedKey(10), "after").ok());
  model[NumberedKey(10)] = "after";
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(Contents(db.get()), model);
}

TEST_P(IngestTest, FilesOverExistingKeysAreNewerThanThemAndSnapshotsDoNotSeeThem) {
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(DbOptions(), db_.path(), &db).ok());
  for (uint64_t i = 0; i < 4000; ++i) ASSERT_TRUE(db->Put(WriteOptions(), NumberedKey(i), Value(i, "old")).ok());
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  // Some still in the memtable: they must be flushed before the ingest.
  for (uint64_t i = 4000; i < 4100; ++i) ASSERT_TRUE(db->Put(WriteOptions(), NumberedKey(i), Value(i, "mem")).ok());
  const Snapshot* snapshot = db->GetSnapshot();
  std::map<std::string, std::string> before = Contents(db.get());
  // Every third key of [1000, 4100) deleted, the rest new.
  WriteFile(FilePath("new.jst"), 1000, 3100, "new", 3);
  Status s = db->IngestExternalFile({FilePath("new.jst")}, IngestExternalFileOptions());
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::map<std::string, std::string> model = before;
  for (uint64_t i = 1000; i < 4100; ++i) {
    if (i % 3 == 0) {
      model.erase(NumberedKey(i));
    } else {
      model[NumberedKey(i)] = Value(i, "new");
    }
  }
  EXPECT_EQ(Contents(db.get()), model);
  std::string value;
  EXPECT_TRUE(db->Get(ReadOptions(), NumberedKey(3), &value).ok());  // out of the file's range
  EXPECT_TRUE(db->Get(ReadOptions(), NumberedKey(3000), &value).IsNotFound());
  ASSERT_TRUE(db->Get(ReadOptions(), NumberedKey(4001), &value).ok());
  EXPECT_EQ(value, Value(4001, "new"));
  // The snapshot taken before sees what was there then.
  ReadOptions at_snapshot;
  at_snapshot.snapshot = snapshot;
  ASSERT_TRUE(db->Get(at_snapshot, NumberedKey(2000), &value).ok());
  EXPECT_EQ(value, Value(2000, "old"));
  ASSERT_TRUE(db->Get(at_snapshot, NumberedKey(4001), &value).ok());
  EXPECT_EQ(value, Value(4001, "mem"));
  db->ReleaseSnapshot(snapshot);
  // Later writes are newer than the ingest.
  ASSERT_TRUE(db->Put(WriteOptions(), NumberedKey(2000), "later").ok());
  model[NumberedKey(2000)] = "later";
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(Contents(db.get()), model);
  db.reset();
  ASSERT_TRUE(DB::Open(DbOptions(), db_.path(), &db).ok());
  EXPECT_EQ(Contents(db.get()), model);
}

// An ingested entry has sequence 0, the oldest possible version: a scan
// that skips a key's many newer versions by seeking past them must step
// past it too.
TEST_P(IngestTest, AKeyUpdatedManyTimesSinceItsIngestIsScannedOnce) {
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(DbOptions(), db_.path(), &db).ok());
  WriteFile(FilePath("a.jst"), 0, 3, "a");
  ASSERT_TRUE(db->IngestExternalFile({FilePath("a.jst")}, {}).ok());
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(db->Put(WriteOptions(), NumberedKey(1), std::to_string(i)).ok());
  std::map<std::string, std::string> expected = {
      {NumberedKey(0), Value(0, "a")}, {NumberedKey(1), "199"}, {NumberedKey(2), Value(2, "a")}};
  EXPECT_EQ(Contents(db.get()), expected);
  ASSERT_TRUE(db->Delete(WriteOptions(), NumberedKey(1)).ok());
  expected.erase(NumberedKey(1));
  EXPECT_EQ(Contents(db.get()), expected);
}

TEST_P(IngestTest, BadInputIsRefusedAndNothingIsIngested) {
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(DbOptions(), db_.path(), &db).ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "k", "v").ok());
  const size_t tables_before = TableFiles();
  const std::map<std::string, std::string> before = Contents(db.get());
  WriteFile(FilePath("a.jst"), 0, 100, "a");
  WriteFile(FilePath("b.jst"), 50, 100, "b");
  EXPECT_TRUE(db->IngestExternalFile({FilePath("a.jst"), FilePath("b.jst")}, {}).IsInvalidArgument());
  EXPECT_TRUE(db->IngestExternalFile({}, {}).IsInvalidArgument());
  EXPECT_FALSE(db->IngestExternalFile({FilePath("missing.jst")}, {}).ok());
  {
    std::ofstream junk(FilePath("junk.jst"));
    junk << "not a table";
  }
  EXPECT_TRUE(db->IngestExternalFile({FilePath("junk.jst")}, {}).IsCorruption());
  // A damaged block.
  WriteFile(FilePath("c.jst"), 200, 2000, "c");
  test::FlipByte(FilePath("c.jst"), 100);
  Status s = db->IngestExternalFile({FilePath("c.jst")}, {});
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  // A table of the engine's own, with sequence numbers: not a writer's.
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  test::ScratchDir other;
  {
    Options disk = test::SmallModeOptions(StorageMode::kDisk);
    std::unique_ptr<DB> source;
    ASSERT_TRUE(DB::Open(disk, other.path(), &source).ok());
    for (int i = 0; i < 100; ++i) ASSERT_TRUE(source->Put(WriteOptions(), "z" + std::to_string(i), "v").ok());
    ASSERT_TRUE(source->CompactRange(nullptr, nullptr).ok());
  }
  std::string engine_table;
  for (const auto& e : std::filesystem::directory_iterator(other.path())) {
    if (e.path().extension() == ".jst") engine_table = e.path().string();
  }
  ASSERT_FALSE(engine_table.empty());
  s = db->IngestExternalFile({engine_table}, {});
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_EQ(Contents(db.get()), before);
  EXPECT_LE(TableFiles(), tables_before + 1);  // the compaction's own output at most
  db.reset();
  ASSERT_TRUE(DB::Open(DbOptions(), db_.path(), &db).ok());
  EXPECT_EQ(Contents(db.get()), before);
}

TEST_P(IngestTest, MovedFilesLeaveTheirOriginalPlace) {
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(DbOptions(), db_.path(), &db).ok());
  WriteFile(FilePath("a.jst"), 0, 1000, "a");
  IngestExternalFileOptions move;
  move.move_files = true;
  ASSERT_TRUE(db->IngestExternalFile({FilePath("a.jst")}, move).ok());
  EXPECT_FALSE(std::filesystem::exists(FilePath("a.jst")));
  std::string value;
  ASSERT_TRUE(db->Get(ReadOptions(), NumberedKey(999), &value).ok());
  EXPECT_EQ(value, Value(999, "a"));
}

// Ingests while a writer writes keys of its own and a reader scans: every
// ingest and every write is there in the end, and each scan sees each
// ingested file whole or not at all.
TEST_P(IngestTest, IngestsBesideAWriterAndAReader) {
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(DbOptions(), db_.path(), &db).ok());
  constexpr int kFiles = 8;
  for (int f = 0; f < kFiles; ++f) WriteFile(FilePath(std::to_string(f) + ".jst"), 1000 * f, 1000, "f");
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> written{0};
  std::thread writer([&] {
    for (uint64_t i = 0; !stop.load(); ++i) {
      if (!db->Put(WriteOptions(), "w" + NumberedKey(i % 3000), std::to_string(i)).ok()) return;
      written = i + 1;
    }
  });
  std::atomic<int> bad_scans{0};
  std::thread reader([&] {
    while (!stop.load()) {
      std::map<int, int> per_file;
      std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
      for (it->Seek(NumberedKey(0)); it->Valid() && it->key().starts_with("key"); it->Next()) {
        ++per_file[std::stoi(it->key().ToString().substr(3)) / 1000];
      }
      for (const auto& [file, n] : per_file) bad_scans += n != 1000;
      if (!it->status().ok()) ++bad_scans;
    }
  });
  for (int f = 0; f < kFiles; ++f) {
    Status s = db->IngestExternalFile({FilePath(std::to_string(f) + ".jst")}, {});
    EXPECT_TRUE(s.ok()) << s.ToString();
    // Over the file before: rewritten into L0 this time.
    if (f > 0) {
      EXPECT_TRUE(db->IngestExternalFile({FilePath(std::to_string(f - 1) + ".jst")}, {}).ok());
    }
  }
  while (written.load() < 2000) std::this_thread::yield();
  stop = true;
  writer.join();
  reader.join();
  EXPECT_EQ(bad_scans.load(), 0);
  std::map<std::string, std::string> contents = Contents(db.get());
  for (uint64_t i = 0; i < 1000 * kFiles; ++i) EXPECT_EQ(contents[NumberedKey(i)], Value(i, "f"));
  for (uint64_t i = 0; i < std::min<uint64_t>(written.load(), 3000); ++i) {
    EXPECT_EQ(contents.count("w" + NumberedKey(i)), 1u);
  }
}

// A process that ingests files of 1000 keys each (new ones, and over its
// own earlier ones) over and over while another thread writes is killed at
// random instants: after reopening, each range of a file's keys holds one
// file's values whole, or nothing.
TEST_P(IngestTest, AKillLeavesEachIngestWholeOrAbsent) {
  std::mt19937_64 rng(11);
  for (int kill = 0; kill < 4; ++kill) {
    test::ScratchDir db_dir, file_dir;
    for (int f = 0; f < 30; ++f) {
      // File f writes keys [1000 * (f % 20), +1000) tagged with f.
      WriteFile(file_dir.path() + "/" + std::to_string(f) + ".jst", 1000 * (f % 20), 1000, "f" + std::to_string(f));
    }
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::unique_ptr<DB> db;
      if (!DB::Open(DbOptions(), db_dir.path(), &db).ok()) _exit(2);
      std::thread writer([&] {
        for (uint64_t i = 0;; ++i) {
          if (!db->Put(WriteOptions(), "w" + std::to_string(i % 5000), std::string(100, 'w')).ok()) return;
        }
      });
      // Round and round until killed (the files are copied in, so each may
      // be ingested again).
      for (int f = 0;; f = (f + 1) % 30) {
        if (!db->IngestExternalFile({file_dir.path() + "/" + std::to_string(f) + ".jst"}, {}).ok()) _exit(3);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 300));
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child exited with " << WEXITSTATUS(status);
    std::unique_ptr<DB> db;
    Status s = DB::Open(DbOptions(), db_dir.path(), &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(db->VerifyIntegrity().ok());
    // Each range of 1000 keys holds one file's values whole, or nothing.
    std::map<std::string, std::string> contents = Contents(db.get());
    for (uint64_t range = 0; range < 20; ++range) {
      std::string tag;
      uint64_t found = 0;
      for (uint64_t i = 1000 * range; i < 1000 * (range + 1); ++i) {
        auto it = contents.find(NumberedKey(i));
        if (it == contents.end()) continue;
        ++found;
        const std::string t = it->second.substr(0, it->second.find('-'));
        if (tag.empty()) tag = t;
        ASSERT_EQ(t, tag) << "range " << range << " mixes two ingests (kill " << kill << ")";
      }
      EXPECT_TRUE(found == 0 || found == 1000) << "range " << range << ": " << found << " keys";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, IngestTest,
                         ::testing::Values(StorageMode::kPmem, StorageMode::kHybrid, StorageMode::kDisk),
                         test::ModeName);

}  // namespace
}  // namespace jigsaw
