// DB::CreateCheckpoint in every storage mode: a checkpoint holds exactly the
// writes up to its sequence, opens as a disk-mode database, is made while
// writers run, is copied where files cannot be linked, and after a kill at
// any instant is either absent or complete.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>

#include "jigsaw/db.h"
#include "tests/support/db_test_util.h"
#include "tests/support/forwarding_fs.h"

namespace jigsaw {
namespace {

using test::Contents;
using test::NumberedKey;
using test::NumberedValue;

Options CheckpointOpenOptions() {
  Options options = test::SmallOptions();
  options.storage_mode = StorageMode::kDisk;
  options.create_if_missing = false;
  return options;
}

class CheckpointTest : public ::testing::TestWithParam<StorageMode> {
 protected:
  Options SourceOptions() const { return test::SmallModeOptions(GetParam()); }
  std::string CheckpointDir(const std::string& name) const { return checkpoints_.path() + "/" + name; }

  // Writes keys [first, first + n) (values of `value_size` bytes naming the
  // round), deleting every seventh key of the round before; into `model`.
  static void WriteRound(DB* db, uint64_t first, uint64_t n, int round, size_t value_size,
                         std::map<std::string, std::string>* model) {
    for (uint64_t i = first; i < first + n; ++i) {
      std::string value = "r" + std::to_string(round) + "-" + std::to_string(i);
      value.resize(value_size, 'v');
      ASSERT_TRUE(db->Put(WriteOptions(), NumberedKey(i), value).ok());
      (*model)[NumberedKey(i)] = value;
      if (i % 7 == 0 && i >= n) {
        ASSERT_TRUE(db->Delete(WriteOptions(), NumberedKey(i - n)).ok());
        model->erase(NumberedKey(i - n));
      }
    }
  }

  // Writes rounds of keys into a database of `options` at `source`, checks a
  // checkpoint of it into `checkpoint`, then both databases.
  void CheckHoldsEveryWrite(const Options& options, const std::string& source, const std::string& checkpoint);

  test::ScratchDir source_;
  test::ScratchDir checkpoints_;
};

// Both table formats: pmem tables are KeySet blocks or classic table
// images, SSD tables of KeySet or classic blocks.
TEST_P(CheckpointTest, HoldsEveryWriteUpToItsSequenceAndNothingAfter) {
  for (TableFormat format : {TableFormat::kKeySet, TableFormat::kClassic}) {
    SCOPED_TRACE(format == TableFormat::kKeySet ? "KeySet" : "classic");
    test::ScratchDir source;
    Options options = SourceOptions();
    options.table_format = format;
    CheckHoldsEveryWrite(options, source.path(), CheckpointDir(format == TableFormat::kKeySet ? "keyset" : "classic"));
  }
}

void CheckpointTest::CheckHoldsEveryWrite(const Options& options, const std::string& source,
                                          const std::string& checkpoint) {
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, source, &db).ok());
  std::map<std::string, std::string> model;
  // Several rounds over the same keys: flushes, compactions (into SSD in
  // hybrid mode), tombstones, and the last writes still in the memtable.
  for (int round = 0; round < 4; ++round) WriteRound(db.get(), round * 1000, 6000, round, 100, &model);
  const uint64_t before = db->GetLatestSequenceNumber();
  uint64_t sequence = 0;
  Status s = db->CreateCheckpoint(checkpoint, &sequence);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(sequence, before);
  EXPECT_FALSE(std::filesystem::exists(checkpoint + ".tmp"));
  // Later writes are the source's only.
  std::map<std::string, std::string> later = model;
  WriteRound(db.get(), 50000, 500, 9, 100, &later);
  EXPECT_EQ(Contents(db.get()), later);

  std::unique_ptr<DB> copy;
  s = DB::Open(CheckpointOpenOptions(), checkpoint, &copy);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(copy->GetLatestSequenceNumber(), sequence);
  EXPECT_TRUE(copy->VerifyIntegrity().ok());
  EXPECT_EQ(Contents(copy.get()), model);
  // The checkpoint is a database of its own: writes to it go on from its
  // sequence and survive reopening; the source does not see them.
  ASSERT_TRUE(copy->Put(WriteOptions(), "checkpoint-only", "x").ok());
  EXPECT_EQ(copy->GetLatestSequenceNumber(), sequence + 1);
  ASSERT_TRUE(copy->CompactRange(nullptr, nullptr).ok());
  copy.reset();
  ASSERT_TRUE(DB::Open(CheckpointOpenOptions(), checkpoint, &copy).ok());
  model["checkpoint-only"] = "x";
  EXPECT_EQ(Contents(copy.get()), model);
  std::string value;
  EXPECT_TRUE(db->Get(ReadOptions(), "checkpoint-only", &value).IsNotFound());
  copy.reset();

  // The source is whole after closing and reopening.
  db.reset();
  ASSERT_TRUE(DB::Open(options, source, &db).ok());
  EXPECT_EQ(Contents(db.get()), later);
  EXPECT_TRUE(db->VerifyIntegrity().ok());
}

TEST_P(CheckpointTest, AnEmptyDatabaseMakesAnEmptyCheckpoint) {
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(SourceOptions(), source_.path(), &db).ok());
  uint64_t sequence = 99;
  ASSERT_TRUE(db->CreateCheckpoint(CheckpointDir("empty/"), &sequence).ok());
  EXPECT_EQ(sequence, 0u);
  std::unique_ptr<DB> copy;
  Status s = DB::Open(CheckpointOpenOptions(), CheckpointDir("empty"), &copy);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(Contents(copy.get()).empty());
  EXPECT_EQ(copy->GetLatestSequenceNumber(), 0u);
}

TEST_P(CheckpointTest, RefusesAnExistingDirectoryAndClearsAnInterruptedOne) {
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(SourceOptions(), source_.path(), &db).ok());
  std::map<std::string, std::string> model;
  WriteRound(db.get(), 0, 3000, 0, 100, &model);
  std::filesystem::create_directories(CheckpointDir("taken"));
  uint64_t sequence = 0;
  EXPECT_TRUE(db->CreateCheckpoint(CheckpointDir("taken"), &sequence).IsInvalidArgument());
  EXPECT_TRUE(db->CreateCheckpoint("", &sequence).IsInvalidArgument());
  EXPECT_FALSE(db->CreateCheckpoint(CheckpointDir("no/such/parent"), &sequence).ok());
  EXPECT_FALSE(std::filesystem::exists(CheckpointDir("no")));
  // What a killed checkpoint leaves: its temporary directory, half filled.
  std::filesystem::create_directories(CheckpointDir("next.tmp"));
  std::ofstream(CheckpointDir("next.tmp/000007.jst")) << "half a table";
  std::ofstream(CheckpointDir("next.tmp/MANIFEST.tmp")) << "half a manifest";
  ASSERT_TRUE(db->CreateCheckpoint(CheckpointDir("next"), &sequence).ok());
  EXPECT_FALSE(std::filesystem::exists(CheckpointDir("next.tmp")));
  std::unique_ptr<DB> copy;
  ASSERT_TRUE(DB::Open(CheckpointOpenOptions(), CheckpointDir("next"), &copy).ok());
  EXPECT_EQ(Contents(copy.get()), model);
}

TEST_P(CheckpointTest, ALeftoverDirectoryWithOtherFilesIsNotRemoved) {
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(SourceOptions(), source_.path(), &db).ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "k", "v").ok());
  std::filesystem::create_directories(CheckpointDir("mine.tmp"));
  std::ofstream(CheckpointDir("mine.tmp/notes.txt")) << "a user's file";
  const Status s = db->CreateCheckpoint(CheckpointDir("mine"), nullptr);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_TRUE(std::filesystem::exists(CheckpointDir("mine.tmp/notes.txt")));
  EXPECT_FALSE(std::filesystem::exists(CheckpointDir("mine")));
}

// A pool database reopened with the other table format holds pmem tables
// of both: each becomes a table file the checkpoint's format can hold.
TEST_P(CheckpointTest, PmemTablesOfEitherFormatAreWrittenOut) {
  std::map<std::string, std::string> model;
  for (TableFormat format : {TableFormat::kKeySet, TableFormat::kClassic, TableFormat::kKeySet}) {
    Options options = SourceOptions();
    options.table_format = format;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, source_.path(), &db).ok());
    WriteRound(db.get(), model.size(), 2500, static_cast<int>(format), 100, &model);
  }
  for (TableFormat format : {TableFormat::kKeySet, TableFormat::kClassic}) {
    Options options = SourceOptions();
    options.table_format = format;
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, source_.path(), &db).ok());
    const std::string dir = CheckpointDir(format == TableFormat::kKeySet ? "as-keyset" : "as-classic");
    Status s = db->CreateCheckpoint(dir, nullptr);
    ASSERT_TRUE(s.ok()) << s.ToString();
    std::unique_ptr<DB> copy;
    ASSERT_TRUE(DB::Open(CheckpointOpenOptions(), dir, &copy).ok());
    EXPECT_TRUE(copy->VerifyIntegrity().ok());
    EXPECT_EQ(Contents(copy.get()), model);
  }
}

// A file system without hard links (FileSystem::LinkFile's default): SSD
// tables are copied.
class NoLinksFileSystem final : public test::ForwardingFileSystem {
 public:
  std::atomic<int> links_refused{0};
  Status LinkFile(const std::string& from, const std::string& to) override {
    ++links_refused;
    return FileSystem::LinkFile(from, to);
  }
};

TEST_P(CheckpointTest, TablesAreCopiedWhereTheyCannotBeLinked) {
  NoLinksFileSystem fs;
  Options options = SourceOptions();
  options.file_system = &fs;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, source_.path(), &db).ok());
  std::map<std::string, std::string> model;
  for (int round = 0; round < 3; ++round) WriteRound(db.get(), round * 500, 5000, round, 200, &model);
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  ASSERT_TRUE(db->CreateCheckpoint(CheckpointDir("copied"), nullptr).ok());
  if (GetParam() != StorageMode::kPmem) {
    EXPECT_GT(fs.links_refused.load(), 0);  // it had SSD tables to link
  }
  db.reset();  // the source's files go away: the copies must not need them
  ASSERT_TRUE(DestroyDB(source_.path(), options).ok());
  std::unique_ptr<DB> copy;
  ASSERT_TRUE(DB::Open(CheckpointOpenOptions(), CheckpointDir("copied"), &copy).ok());
  EXPECT_TRUE(copy->VerifyIntegrity().ok());
  EXPECT_EQ(Contents(copy.get()), model);
}

TEST_P(CheckpointTest, CheckpointsWhileAWriterRunsArePrefixesOfItsWrites) {
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(SourceOptions(), source_.path(), &db).ok());
  const uint64_t base = db->GetLatestSequenceNumber();
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> written{0};
  std::thread writer([&] {
    for (uint64_t i = 0; !stop.load() && i < 200000; ++i) {
      if (!db->Put(WriteOptions(), NumberedKey(i), NumberedValue(i)).ok()) return;
      written.store(i + 1);
    }
  });
  std::vector<std::pair<std::string, uint64_t>> made;
  for (int c = 0; c < 6; ++c) {
    while (written.load() < static_cast<uint64_t>(c + 1) * 3000) std::this_thread::yield();
    const std::string dir = CheckpointDir("live" + std::to_string(c));
    uint64_t sequence = 0;
    Status s = db->CreateCheckpoint(dir, &sequence);
    ASSERT_TRUE(s.ok()) << s.ToString();
    made.emplace_back(dir, sequence);
  }
  stop.store(true);
  writer.join();
  for (const auto& [dir, sequence] : made) {
    std::unique_ptr<DB> copy;
    Status s = DB::Open(CheckpointOpenOptions(), dir, &copy);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(copy->GetLatestSequenceNumber(), sequence);
    test::ExpectNumberedPrefix(copy.get(), base, sequence, dir);
  }
}

// A process writing and making checkpoints is killed at random instants:
// every checkpoint directory left is complete (it opens and holds a prefix
// of the writes), no temporary directory is taken for one, and the source
// opens whole.
TEST_P(CheckpointTest, AKillLeavesEachCheckpointAbsentOrComplete) {
  std::mt19937_64 rng(77);
  const Options options = SourceOptions();
  for (int kill = 0; kill < 6; ++kill) {
    const std::string dir = CheckpointDir("killed" + std::to_string(kill));
    test::ScratchDir source;
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::unique_ptr<DB> db;
      if (!DB::Open(options, source.path(), &db).ok()) _exit(2);
      // Writes between checkpoints, so that each holds another prefix;
      // then waits to be killed.
      uint64_t i = 0;
      for (int c = 0; c < 25; ++c) {
        for (const uint64_t end = i + 400; i < end; ++i) {
          if (!db->Put(WriteOptions(), NumberedKey(i), NumberedValue(i)).ok()) _exit(3);
        }
        if (!db->CreateCheckpoint(dir + "-" + std::to_string(c), nullptr).ok()) _exit(4);
      }
      pause();
      _exit(0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 300));
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child exited with " << WEXITSTATUS(status);
    for (int c = 0; std::filesystem::exists(dir + "-" + std::to_string(c)) ||
                    std::filesystem::exists(dir + "-" + std::to_string(c) + ".tmp");
         ++c) {
      const std::string made = dir + "-" + std::to_string(c);
      if (!std::filesystem::exists(made)) continue;  // killed while building it
      std::unique_ptr<DB> copy;
      Status s = DB::Open(CheckpointOpenOptions(), made, &copy);
      ASSERT_TRUE(s.ok()) << made << ": " << s.ToString();
      EXPECT_TRUE(copy->VerifyIntegrity().ok()) << made;
      test::ExpectNumberedPrefix(copy.get(), 0, copy->GetLatestSequenceNumber(), made);
    }
    std::unique_ptr<DB> db;
    Status s = DB::Open(options, source.path(), &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(db->VerifyIntegrity().ok());
    test::ExpectNumberedPrefix(db.get(), 0, db->GetLatestSequenceNumber(), "the source");
    db.reset();
    (void)DestroyDB(source.path(), options);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, CheckpointTest,
                         ::testing::Values(StorageMode::kPmem, StorageMode::kHybrid, StorageMode::kDisk),
                         test::ModeName);

}  // namespace
}  // namespace jigsaw
