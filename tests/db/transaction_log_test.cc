// DB::GetUpdatesSince in every storage mode: the feed yields every
// committed batch in order across memtable flushes, archived logs and
// reopens; retention removes the oldest logs; a follower built from a
// checkpoint and the feed ends equal to its primary; after a kill the feed
// holds exactly what recovery kept.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "db/write_batch_internal.h"
#include "jigsaw/db.h"
#include "jigsaw/table_file_writer.h"
#include "tests/support/db_test_util.h"

namespace jigsaw {
namespace {

using test::Contents;
using test::NumberedKey;

// A batch's updates as text: "P key=value;" and "D key;".
class Printer : public WriteBatch::Handler {
 public:
  void Put(const Slice& key, const Slice& value) override {
    text += "P " + key.ToString() + "=" + value.ToString() + ";";
  }
  void Delete(const Slice& key) override { text += "D " + key.ToString() + ";"; }
  std::string text;
};

std::string Print(const WriteBatch& batch) {
  Printer printer;
  EXPECT_TRUE(batch.Iterate(&printer).ok());
  return printer.text;
}

struct Fed {
  std::vector<BatchResult> batches;
  Status status;
};

// Every batch of the feed from `sequence` on.
Fed ReadFeed(DB* db, uint64_t sequence) {
  Fed fed;
  std::unique_ptr<TransactionLogIterator> it;
  fed.status = db->GetUpdatesSince(sequence, &it);
  if (!fed.status.ok()) return fed;
  for (; it->Valid(); it->Next()) fed.batches.push_back(it->GetBatch());
  fed.status = it->status();
  return fed;
}

class TransactionLogTest : public ::testing::TestWithParam<StorageMode> {
 protected:
  Options RetainingOptions() const {
    Options options = test::SmallModeOptions(GetParam());
    options.wal_size_limit_mb = 256;
    return options;
  }

  // Writes `n` batches of 1-4 updates (puts of keys below 2000, every fifth
  // update a delete) and records each by its first sequence.
  void WriteBatches(DB* db, int n, std::mt19937_64* rng) {
    for (int b = 0; b < n; ++b) {
      WriteBatch batch;
      const int updates = 1 + static_cast<int>((*rng)() % 4);
      for (int u = 0; u < updates; ++u) {
        const std::string key = NumberedKey((*rng)() % 2000);
        if ((*rng)() % 5 == 0) {
          batch.Delete(key);
        } else {
          batch.Put(key, "value-" + std::to_string(b) + "-" + std::string(200, 'x'));
        }
      }
      const uint64_t sequence = db->GetLatestSequenceNumber() + 1;
      ASSERT_TRUE(db->Write(WriteOptions(), &batch).ok());
      written_[sequence] = Print(batch);
    }
  }

  // The feed from `from` yields exactly the batches written from the one
  // holding `from` on.
  void ExpectFeedFrom(DB* db, uint64_t from) {
    Fed fed = ReadFeed(db, from);
    ASSERT_TRUE(fed.status.ok()) << fed.status.ToString();
    auto expected = std::prev(written_.upper_bound(from));
    ASSERT_FALSE(fed.batches.empty());
    for (const BatchResult& b : fed.batches) {
      ASSERT_NE(expected, written_.end());
      ASSERT_EQ(b.sequence, expected->first);
      ASSERT_EQ(Print(b.batch), expected->second) << "batch at " << b.sequence;
      ++expected;
    }
    EXPECT_EQ(expected, written_.end());
  }

  std::map<uint64_t, std::string> written_;  // first sequence -> updates
  test::ScratchDir dir_;
};

TEST_P(TransactionLogTest, YieldsEveryBatchInOrderAcrossFlushesAndReopens) {
  const Options options = RetainingOptions();
  std::mt19937_64 rng(1);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir_.path(), &db).ok());
  WriteBatches(db.get(), 1500, &rng);
  db.reset();
  ASSERT_TRUE(DB::Open(options, dir_.path(), &db).ok());
  WriteBatches(db.get(), 1500, &rng);
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  WriteBatches(db.get(), 200, &rng);
  // The writes span many logs, most of them flushed and archived.
  EXPECT_GT(std::distance(std::filesystem::directory_iterator(dir_.path() + "/archive"),
                          std::filesystem::directory_iterator()),
            5);
  ExpectFeedFrom(db.get(), 1);
  std::mt19937_64 pick(2);
  for (int i = 0; i < 10; ++i) ExpectFeedFrom(db.get(), 1 + pick() % db->GetLatestSequenceNumber());
  ExpectFeedFrom(db.get(), db->GetLatestSequenceNumber());
  // Past the newest: nothing yet, and no error.
  Fed fed = ReadFeed(db.get(), db->GetLatestSequenceNumber() + 1);
  EXPECT_TRUE(fed.status.ok()) << fed.status.ToString();
  EXPECT_TRUE(fed.batches.empty());
}

TEST_P(TransactionLogTest, WithoutRetentionOnlyTheLiveLogsAreKept) {
  Options options = test::SmallModeOptions(GetParam());
  std::mt19937_64 rng(3);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir_.path(), &db).ok());
  WriteBatches(db.get(), 2000, &rng);
  Fed fed = ReadFeed(db.get(), 1);
  EXPECT_TRUE(fed.status.IsNotFound()) << fed.status.ToString();
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/archive"));
  ExpectFeedFrom(db.get(), db->GetLatestSequenceNumber());
}

TEST_P(TransactionLogTest, TheSizeLimitRemovesTheOldestLogs) {
  Options options = test::SmallModeOptions(GetParam());
  options.wal_size_limit_mb = 1;
  std::mt19937_64 rng(4);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir_.path(), &db).ok());
  WriteBatches(db.get(), 6000, &rng);
  // Measured closed: the background thread archives and removes files.
  db.reset();
  uint64_t archived = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_.path() + "/archive")) archived += e.file_size();
  EXPECT_GT(archived, 0u);
  EXPECT_LE(archived, uint64_t{1} << 20);
  ASSERT_TRUE(DB::Open(options, dir_.path(), &db).ok());
  EXPECT_TRUE(ReadFeed(db.get(), 1).status.IsNotFound());
  // What is kept still follows on to the newest batch.
  ExpectFeedFrom(db.get(), db->GetLatestSequenceNumber() - 2000);
}

TEST_P(TransactionLogTest, TheTtlRemovesOldLogsAtOpen) {
  Options options = test::SmallModeOptions(GetParam());
  options.wal_ttl_seconds = 3600;
  std::mt19937_64 rng(5);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir_.path(), &db).ok());
  WriteBatches(db.get(), 2000, &rng);
  db.reset();
  ASSERT_TRUE(DB::Open(options, dir_.path(), &db).ok());
  ExpectFeedFrom(db.get(), 1);  // within the hour: all kept
  db.reset();
  // Two hours old now.
  const auto old = std::filesystem::file_time_type::clock::now() - std::chrono::hours(2);
  for (const auto& e : std::filesystem::directory_iterator(dir_.path() + "/archive")) {
    std::filesystem::last_write_time(e.path(), old);
  }
  ASSERT_TRUE(DB::Open(options, dir_.path(), &db).ok());
  EXPECT_TRUE(ReadFeed(db.get(), 1).status.IsNotFound());
  EXPECT_TRUE(std::filesystem::is_empty(dir_.path() + "/archive"));
}

TEST_P(TransactionLogTest, ADamagedArchivedLogIsCorruption) {
  const Options options = RetainingOptions();
  std::mt19937_64 rng(6);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir_.path(), &db).ok());
  WriteBatches(db.get(), 2000, &rng);
  std::vector<std::filesystem::path> logs;
  for (const auto& e : std::filesystem::directory_iterator(dir_.path() + "/archive")) logs.push_back(e.path());
  ASSERT_FALSE(logs.empty());
  std::sort(logs.begin(), logs.end());
  test::FlipByte(logs.front().string(), 200);
  Fed fed = ReadFeed(db.get(), 1);
  EXPECT_TRUE(fed.status.IsCorruption()) << fed.status.ToString();
  // Past the damaged log, the feed still works.
  ExpectFeedFrom(db.get(), db->GetLatestSequenceNumber() - 10);
}

// Disk mode: a crash between the recovery commit and the removal of the
// log files it replayed leaves them in the directory, unlisted: the next open must not
// put a raw log (which may hold damage the replay skipped) in place of the
// archived records.
TEST_P(TransactionLogTest, ARawLogLeftByACrashDoesNotReplaceItsArchivedRecords) {
  if (GetParam() != StorageMode::kDisk) GTEST_SKIP() << "pool modes keep their logs in the pool";
  const Options options = RetainingOptions();
  std::mt19937_64 rng(10);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir_.path(), &db).ok());
  WriteBatches(db.get(), 50, &rng);
  db.reset();
  ASSERT_TRUE(DB::Open(options, dir_.path(), &db).ok());  // archives the replayed log
  db.reset();
  std::filesystem::path archived;
  for (const auto& e : std::filesystem::directory_iterator(dir_.path() + "/archive")) archived = e.path();
  ASSERT_FALSE(archived.empty());
  const std::string raw = dir_.path() + "/" + archived.filename().string();
  std::filesystem::copy_file(archived, raw);
  test::FlipByte(raw, std::filesystem::file_size(raw) - 20);  // a torn last record
  ASSERT_TRUE(DB::Open(options, dir_.path(), &db).ok());
  EXPECT_FALSE(std::filesystem::exists(raw));
  ExpectFeedFrom(db.get(), 1);
}

// An ingest takes a sequence number no log record holds: the feed stops
// there, and resumes after it.
TEST_P(TransactionLogTest, TheFeedStopsAtAnIngestAndResumesAfterIt) {
  const Options options = RetainingOptions();
  std::mt19937_64 rng(12);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir_.path(), &db).ok());
  WriteBatches(db.get(), 300, &rng);
  const std::string file = dir_.path() + "/bulk.jst";
  {
    TableFileWriter writer(options);
    ASSERT_TRUE(writer.Open(file).ok());
    ASSERT_TRUE(writer.Put("zz", "bulk").ok());
    ASSERT_TRUE(writer.Finish().ok());
  }
  ASSERT_TRUE(db->IngestExternalFile({file}, {}).ok());
  const uint64_t ingest = db->GetLatestSequenceNumber();
  WriteBatches(db.get(), 300, &rng);
  Fed fed = ReadFeed(db.get(), 1);
  EXPECT_TRUE(fed.status.IsCorruption()) << fed.status.ToString();
  EXPECT_NE(fed.status.ToString().find(std::to_string(ingest)), std::string::npos) << fed.status.ToString();
  ASSERT_FALSE(fed.batches.empty());
  EXPECT_EQ(fed.batches.back().sequence, std::prev(written_.find(ingest + 1))->first);
  EXPECT_TRUE(ReadFeed(db.get(), ingest).status.IsCorruption());
  // From the next number on, the rest.
  std::map<uint64_t, std::string> after(written_.find(ingest + 1), written_.end());
  written_ = after;
  ExpectFeedFrom(db.get(), ingest + 1);
}

TEST_P(TransactionLogTest, DestroyDBRemovesTheArchive) {
  const Options options = RetainingOptions();
  std::mt19937_64 rng(7);
  const std::string name = dir_.path() + "/db";
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, name, &db).ok());
  WriteBatches(db.get(), 1000, &rng);
  db.reset();
  ASSERT_TRUE(std::filesystem::exists(name + "/archive"));
  ASSERT_TRUE(DestroyDB(name, options).ok());
  EXPECT_FALSE(std::filesystem::exists(name));
}

// Applies the feed from `applied` + 1 on to `follower`; returns the new
// applied sequence. Each batch must begin where the last one applied ended.
uint64_t CatchUp(DB* primary, DB* follower, uint64_t applied) {
  std::unique_ptr<TransactionLogIterator> it;
  Status s = primary->GetUpdatesSince(applied + 1, &it);
  EXPECT_TRUE(s.ok()) << s.ToString();
  if (!s.ok()) return applied;
  for (; it->Valid(); it->Next()) {
    BatchResult b = it->GetBatch();
    EXPECT_EQ(b.sequence, applied + 1);
    if (b.sequence != applied + 1) return applied;
    EXPECT_TRUE(follower->Write(WriteOptions(), &b.batch).ok());
    applied += b.batch.Count();
    EXPECT_EQ(follower->GetLatestSequenceNumber(), applied);
  }
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return applied;
}

TEST_P(TransactionLogTest, AFollowerFromACheckpointAndTheFeedEndsEqualToThePrimary) {
  const Options options = RetainingOptions();
  std::unique_ptr<DB> primary;
  ASSERT_TRUE(DB::Open(options, dir_.path() + "/primary", &primary).ok());
  std::atomic<bool> stop{false};
  std::atomic<int> written{0};
  std::thread writer([&] {
    std::mt19937_64 rng(8);
    for (int b = 0; !stop.load() || b < 3000; ++b) {
      WriteBatch batch;
      for (int u = 0; u < 3; ++u) {
        const std::string key = NumberedKey(rng() % 3000);
        if (rng() % 4 == 0) {
          batch.Delete(key);
        } else {
          batch.Put(key, std::to_string(b) + std::string(100, 'f'));
        }
      }
      if (!primary->Write(WriteOptions(), &batch).ok()) return;
      written = b + 1;
      if (b >= 20000) return;
    }
  });
  while (written.load() < 500) std::this_thread::yield();
  const std::string follower_dir = dir_.path() + "/follower";
  uint64_t applied = 0;
  ASSERT_TRUE(primary->CreateCheckpoint(follower_dir, &applied).ok());
  Options follower_options = test::SmallModeOptions(StorageMode::kDisk);
  follower_options.create_if_missing = false;
  std::unique_ptr<DB> follower;
  ASSERT_TRUE(DB::Open(follower_options, follower_dir, &follower).ok());
  ASSERT_EQ(follower->GetLatestSequenceNumber(), applied);
  // Tails the primary while it writes, flushes and compacts.
  for (int round = 0; round < 50; ++round) {
    applied = CatchUp(primary.get(), follower.get(), applied);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  stop = true;
  writer.join();
  applied = CatchUp(primary.get(), follower.get(), applied);
  EXPECT_EQ(applied, primary->GetLatestSequenceNumber());
  EXPECT_GT(written.load(), 3000);
  EXPECT_EQ(Contents(follower.get()), Contents(primary.get()));
  // Equal after reopening both too.
  follower.reset();
  primary.reset();
  ASSERT_TRUE(DB::Open(follower_options, follower_dir, &follower).ok());
  ASSERT_TRUE(DB::Open(options, dir_.path() + "/primary", &primary).ok());
  EXPECT_EQ(Contents(follower.get()), Contents(primary.get()));
}

// A process writing with retention on is killed at random instants; after
// reopening, the feed from the first sequence runs without a gap to the
// newest, and replayed into an empty database gives the same contents.
TEST_P(TransactionLogTest, AfterAKillTheFeedHoldsWhatRecoveryKept) {
  const Options options = RetainingOptions();
  std::mt19937_64 rng(9);
  for (int kill = 0; kill < 4; ++kill) {
    test::ScratchDir source;
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::unique_ptr<DB> db;
      for (int open = 0; open < 20; ++open) {
        if (!DB::Open(options, source.path(), &db).ok()) _exit(2);
        std::mt19937_64 child_rng(open);
        for (int b = 0; b < 3000; ++b) {
          WriteBatch batch;
          batch.Put(NumberedKey(child_rng() % 2000), std::to_string(b) + std::string(150, 'k'));
          if (b % 3 == 0) batch.Delete(NumberedKey(child_rng() % 2000));
          WriteOptions write;
          write.sync = b % 50 == 0;
          if (!db->Write(write, &batch).ok()) _exit(3);
        }
        db.reset();
      }
      pause();
      _exit(0);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30 + rng() % 400));
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child exited with " << WEXITSTATUS(status);
    std::unique_ptr<DB> db;
    Status s = DB::Open(options, source.path(), &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    test::ScratchDir replica_dir;
    std::unique_ptr<DB> replica;
    ASSERT_TRUE(DB::Open(test::SmallModeOptions(StorageMode::kDisk), replica_dir.path(), &replica).ok());
    if (db->GetLatestSequenceNumber() > 0) {
      EXPECT_EQ(CatchUp(db.get(), replica.get(), 0), db->GetLatestSequenceNumber());
    }
    EXPECT_EQ(Contents(replica.get()), Contents(db.get())) << "kill " << kill;
    db.reset();
    (void)DestroyDB(source.path(), options);
  }
}

TEST(TransactionLogReadOnlyTest, AReadOnlyOpenHasNoFeed) {
  test::ScratchDir dir;
  Options options = test::SmallModeOptions(StorageMode::kDisk);
  options.wal_size_limit_mb = 16;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "k", "v").ok());
  db.reset();
  ASSERT_TRUE(DB::OpenForReadOnly(options, dir.path(), &db).ok());
  std::unique_ptr<TransactionLogIterator> it;
  EXPECT_TRUE(db->GetUpdatesSince(1, &it).IsNotSupported());
  EXPECT_EQ(it, nullptr);
}

INSTANTIATE_TEST_SUITE_P(Modes, TransactionLogTest,
                         ::testing::Values(StorageMode::kPmem, StorageMode::kHybrid, StorageMode::kDisk),
                         test::ModeName);

}  // namespace
}  // namespace jigsaw
