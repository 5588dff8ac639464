// DB::OpenForReadOnly: a disk-mode database read without writing to it,
// closed or beside a writer that has it open, and refused for pool
// databases.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <thread>

#include "jigsaw/db.h"
#include "jigsaw/transaction_log.h"
#include "tests/support/db_test_util.h"

namespace jigsaw {
namespace {

using test::Contents;
using test::NumberedKey;
using test::NumberedValue;

Options DiskOptions() {
  Options options = test::SmallOptions();
  options.storage_mode = StorageMode::kDisk;
  return options;
}

// Every entry of a directory with its size and modification time.
std::map<std::string, std::pair<uint64_t, int64_t>> Listing(const std::string& dir) {
  std::map<std::string, std::pair<uint64_t, int64_t>> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    struct stat st {};
    EXPECT_EQ(::stat(entry.path().c_str(), &st), 0);
    files[entry.path().filename().string()] = {static_cast<uint64_t>(st.st_size),
                                               static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 +
                                                   st.st_mtim.tv_nsec};
  }
  return files;
}

// Writes keys [0, n) (and deletes every tenth) into `db`; returns the model.
std::map<std::string, std::string> Fill(DB* db, uint64_t n) {
  std::map<std::string, std::string> model;
  for (uint64_t i = 0; i < n; ++i) {
    EXPECT_TRUE(db->Put(WriteOptions(), NumberedKey(i), NumberedValue(i)).ok());
    model[NumberedKey(i)] = NumberedValue(i);
    if (i % 10 == 9) {
      EXPECT_TRUE(db->Delete(WriteOptions(), NumberedKey(i - 5)).ok());
      model.erase(NumberedKey(i - 5));
    }
  }
  return model;
}

void ExpectWritesRefused(DB* db) {
  EXPECT_TRUE(db->Put(WriteOptions(), "k", "v").IsNotSupported());
  EXPECT_TRUE(db->Delete(WriteOptions(), "k").IsNotSupported());
  WriteBatch batch;
  batch.Put("k", "v");
  EXPECT_TRUE(db->Write(WriteOptions(), &batch).IsNotSupported());
  EXPECT_TRUE(db->CompactRange(nullptr, nullptr).IsNotSupported());
}

TEST(ReadOnlyTest, AClosedDatabaseIsReadWholeAndNothingIsWritten) {
  test::ScratchDir dir;
  std::map<std::string, std::string> model;
  uint64_t sequence = 0;
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(DiskOptions(), dir.path(), &db).ok());
    model = Fill(db.get(), 20000);  // tables in several levels, and a WAL tail
    sequence = db->GetLatestSequenceNumber();
  }
  const auto before = Listing(dir.path());
  {
    std::unique_ptr<DB> db;
    Status s = DB::OpenForReadOnly(DiskOptions(), dir.path(), &db);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(db->GetLatestSequenceNumber(), sequence);
    EXPECT_EQ(Contents(db.get()), model);
    std::string value;
    ASSERT_TRUE(db->Get(ReadOptions(), NumberedKey(19999), &value).ok());
    EXPECT_EQ(value, NumberedValue(19999));
    EXPECT_TRUE(db->Get(ReadOptions(), NumberedKey(19994), &value).IsNotFound());
    const Snapshot* snapshot = db->GetSnapshot();
    EXPECT_EQ(snapshot->sequence(), sequence);
    db->ReleaseSnapshot(snapshot);
    EXPECT_TRUE(db->VerifyIntegrity().ok());
    ExpectWritesRefused(db.get());
    // Two read-only opens at once: no lock is taken.
    std::unique_ptr<DB> second;
    ASSERT_TRUE(DB::OpenForReadOnly(DiskOptions(), dir.path(), &second).ok());
    EXPECT_EQ(Contents(second.get()), model);
  }
  EXPECT_EQ(Listing(dir.path()), before);
  // A checkpoint of a read-only database is a database of its contents.
  {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::OpenForReadOnly(DiskOptions(), dir.path(), &db).ok());
    const std::string checkpoint = dir.path() + "-checkpoint";
    ASSERT_TRUE(db->CreateCheckpoint(checkpoint, nullptr).ok());
    std::unique_ptr<DB> copy;
    ASSERT_TRUE(DB::OpenForReadOnly(DiskOptions(), checkpoint, &copy).ok());
    EXPECT_EQ(Contents(copy.get()), model);
    copy.reset();
    std::filesystem::remove_all(checkpoint);
  }
  // The database still opens for writing, whole.
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(DiskOptions(), dir.path(), &db).ok());
  EXPECT_EQ(Contents(db.get()), model);
}

// A thread that Puts NumberedKey(i) -> NumberedValue(i) in order (at most
// 300,000) until stopped; stopped and joined when it goes (a failed ASSERT
// returns early).
class NumberedWriter {
 public:
  explicit NumberedWriter(DB* db)
      : thread_([this, db] {
          for (uint64_t i = 0; !stop_.load() && i < kMost; ++i) {
            if (!db->Put(WriteOptions(), NumberedKey(i), NumberedValue(i)).ok()) break;
            written_.store(i + 1);
          }
          done_.store(true);
        }) {}
  ~NumberedWriter() { Stop(); }
  void Stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  // Waits until `n` keys are written (or the writer is done).
  void AwaitWritten(uint64_t n) const {
    while (written_.load() < n && !done_.load()) std::this_thread::yield();
  }

 private:
  static constexpr uint64_t kMost = 300000;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> written_{0};
  std::atomic<bool> done_{false};
  std::thread thread_;  // last: started once the flags exist
};

// Opens beside a writer that has the database open, flushing and
// compacting under them: each read-only view is a prefix of its writes, and
// stays that view while the writer goes on.
TEST(ReadOnlyTest, OpensBesideAWriterSeeAPrefixOfItsWrites) {
  test::ScratchDir dir;
  std::unique_ptr<DB> writer_db;
  ASSERT_TRUE(DB::Open(DiskOptions(), dir.path(), &writer_db).ok());
  const uint64_t base = writer_db->GetLatestSequenceNumber();
  NumberedWriter writer(writer_db.get());
  uint64_t last_seen = 0;
  for (int round = 0; round < 12; ++round) {
    writer.AwaitWritten(static_cast<uint64_t>(round + 1) * 2000);
    // Every other round in the strictest WAL mode: the live log's
    // half-written tail still ends it quietly.
    Options options = DiskOptions();
    if (round % 2 == 1) options.wal_recovery_mode = WalRecoveryMode::kAbsoluteConsistency;
    std::unique_ptr<DB> db;
    Status s = DB::OpenForReadOnly(options, dir.path(), &db);
    ASSERT_TRUE(s.ok()) << "round " << round << ": " << s.ToString();
    const std::string where = "round " + std::to_string(round);
    test::ExpectNumberedPrefix(db.get(), base, db->GetLatestSequenceNumber(), where);
    EXPECT_GE(db->GetLatestSequenceNumber(), last_seen) << where;
    last_seen = db->GetLatestSequenceNumber();
    std::this_thread::yield();
    test::ExpectNumberedPrefix(db.get(), base, db->GetLatestSequenceNumber(), where + ", read again");  // the same view
    ExpectWritesRefused(db.get());
  }
  writer.Stop();
  EXPECT_GT(last_seen, base);
}

// A secondary beside a writer: each catch-up sees a prefix of the writes,
// no older than the last; an iterator and a snapshot taken before a
// catch-up keep their state after it; writes are refused.
TEST(ReadOnlyTest, ASecondaryCatchesUpWithAWriter) {
  test::ScratchDir dir;
  std::unique_ptr<DB> writer_db;
  ASSERT_TRUE(DB::Open(DiskOptions(), dir.path(), &writer_db).ok());
  const uint64_t base = writer_db->GetLatestSequenceNumber();
  NumberedWriter writer(writer_db.get());
  std::unique_ptr<DB> secondary;
  Status s = DB::OpenAsSecondary(DiskOptions(), dir.path(), &secondary);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectWritesRefused(secondary.get());
  EXPECT_TRUE(secondary->DeleteRange(WriteOptions(), "a", "b").IsNotSupported());
  std::unique_ptr<TransactionLogIterator> feed;
  EXPECT_TRUE(secondary->GetUpdatesSince(1, &feed).IsNotSupported());
  uint64_t last_seen = secondary->GetLatestSequenceNumber();
  for (int round = 0; round < 10; ++round) {
    writer.AwaitWritten(static_cast<uint64_t>(round + 1) * 3000);
    const std::string where = "round " + std::to_string(round);
    // Before the catch-up: a snapshot and an iterator of the old state.
    const Snapshot* snapshot = secondary->GetSnapshot();
    const uint64_t old_sequence = secondary->GetLatestSequenceNumber();
    std::unique_ptr<Iterator> old_it = secondary->NewIterator(ReadOptions());
    s = secondary->TryCatchUpWithPrimary();
    ASSERT_TRUE(s.ok()) << where << ": " << s.ToString();
    const uint64_t sequence = secondary->GetLatestSequenceNumber();
    EXPECT_GE(sequence, last_seen) << where;
    last_seen = sequence;
    test::ExpectNumberedPrefix(secondary.get(), base, sequence, where);
    // The old iterator and snapshot still read the state before it.
    uint64_t n = 0;
    for (old_it->SeekToFirst(); old_it->Valid(); old_it->Next()) ++n;
    EXPECT_TRUE(old_it->status().ok());
    EXPECT_EQ(n, old_sequence - base) << where;
    ReadOptions at_snapshot;
    at_snapshot.snapshot = snapshot;
    std::string value;
    if (sequence > old_sequence) {
      EXPECT_TRUE(secondary->Get(at_snapshot, NumberedKey(sequence - base - 1), &value).IsNotFound()) << where;
      EXPECT_TRUE(secondary->Get(ReadOptions(), NumberedKey(sequence - base - 1), &value).ok()) << where;
    }
    old_it.reset();
    secondary->ReleaseSnapshot(snapshot);
  }
  writer.Stop();
  ASSERT_TRUE(secondary->TryCatchUpWithPrimary().ok());
  EXPECT_EQ(Contents(secondary.get()), Contents(writer_db.get()));
  EXPECT_GT(last_seen, base);
  // Not a secondary: nothing to catch up with.
  EXPECT_TRUE(writer_db->TryCatchUpWithPrimary().IsNotSupported());
  // Pool databases cannot be followed.
  test::ScratchDir pool_dir;
  std::unique_ptr<DB> pool_db;
  ASSERT_TRUE(DB::Open(test::SmallOptions(), pool_dir.path(), &pool_db).ok());
  EXPECT_TRUE(DB::OpenAsSecondary(test::SmallOptions(), pool_dir.path(), &secondary).IsNotSupported());
}

// A read-only open's checkpoint of the tables a writer has since
// compacted away (their files deleted): copied from the open files.
TEST(ReadOnlyTest, ACheckpointOfTablesAWriterDeletedIsWhole) {
  test::ScratchDir dir;
  std::unique_ptr<DB> writer_db;
  ASSERT_TRUE(DB::Open(DiskOptions(), dir.path(), &writer_db).ok());
  const std::map<std::string, std::string> model = Fill(writer_db.get(), 20000);
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::OpenForReadOnly(DiskOptions(), dir.path(), &db).ok());
  for (uint64_t i = 0; i < 20000; ++i) ASSERT_TRUE(writer_db->Put(WriteOptions(), NumberedKey(i), "overwritten").ok());
  ASSERT_TRUE(writer_db->CompactRange(nullptr, nullptr).ok());  // every table the reader holds is replaced
  const std::string checkpoint = dir.path() + "-checkpoint";
  Status s = db->CreateCheckpoint(checkpoint, nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::unique_ptr<DB> copy;
  ASSERT_TRUE(DB::OpenForReadOnly(DiskOptions(), checkpoint, &copy).ok());
  EXPECT_TRUE(copy->VerifyIntegrity().ok());
  EXPECT_EQ(Contents(copy.get()), model);
  copy.reset();
  std::filesystem::remove_all(checkpoint);
}

TEST(ReadOnlyTest, PoolDatabasesAndMissingOnesAreRefusedWithoutWriting) {
  test::ScratchDir dir;
  const std::string pool_db = dir.path() + "/pool-db";
  {
    Options options = test::SmallModeOptions(StorageMode::kPmem);
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, pool_db, &db).ok());
    ASSERT_TRUE(db->Put(WriteOptions(), "k", "v").ok());
  }
  std::unique_ptr<DB> db;
  EXPECT_TRUE(DB::OpenForReadOnly(test::SmallModeOptions(StorageMode::kPmem), pool_db, &db).IsNotSupported());
  EXPECT_TRUE(DB::OpenForReadOnly(test::SmallModeOptions(StorageMode::kHybrid), pool_db, &db).IsNotSupported());
  EXPECT_TRUE(DB::OpenForReadOnly(DiskOptions(), pool_db, &db).IsInvalidArgument());
  const std::string missing = dir.path() + "/missing";
  Status s = DB::OpenForReadOnly(DiskOptions(), missing, &db);
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_FALSE(std::filesystem::exists(missing));
  EXPECT_EQ(db, nullptr);
}

}  // namespace
}  // namespace jigsaw
