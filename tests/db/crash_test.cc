// Crash test: a child process writes (with sync=true, or sync=false: a
// process crash loses no acknowledged write either) and reports every
// acknowledged write through a pipe; the parent SIGKILLs it at a random
// moment, reopens the database and checks that every acknowledged write is
// there, that no WriteBatch is partly visible, and that the store is
// consistent. Repeated many times on the same database.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "jigsaw/db.h"
#include "tests/support/db_test_util.h"

namespace jigsaw {
namespace {

constexpr int kKeysPerBatch = 3;

std::string BatchKey(uint64_t batch, int part) {
  char key[48];
  std::snprintf(key, sizeof(key), "batch%010llu-%d", static_cast<unsigned long long>(batch), part);
  return key;
}

// Child: writes batches numbered from `first` until killed (batch numbers
// are in key order), with `deletes` also deleting keys of older batches,
// each batch with WriteOptions::sync = `sync_writes`.
[[noreturn]] void WriterProcess(const std::string& path, const Options& options, uint64_t first, int ack_fd,
                                bool deletes, bool sync_writes) {
  std::unique_ptr<DB> db;
  if (!DB::Open(options, path, &db).ok()) _exit(3);
  WriteOptions sync;
  sync.sync = sync_writes;
  std::mt19937_64 rng(first);
  for (uint64_t batch = first;; ++batch) {
    WriteBatch b;
    const std::string value = std::to_string(batch) + std::string(rng() % 300, 'v');
    for (int part = 0; part < kKeysPerBatch; ++part) b.Put(BatchKey(batch, part), value);
    // Overwrite and delete older keys too, so compaction has work.
    if (deletes && batch > 10 && rng() % 4 == 0) b.Delete(BatchKey(batch - 10, 0));
    Status s = db->Write(sync, &b);
    if (!s.ok()) {
      std::fprintf(stderr, "writer: %s\n", s.ToString().c_str());
      _exit(4);
    }
    if (write(ack_fd, &batch, sizeof(batch)) != sizeof(batch)) _exit(5);
  }
}

// Table files whose first block is a migrated pmem block (larger than the
// SSD block size a merge writes).
size_t MigratedTables(const std::string& dir) {
  size_t n = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".jst") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    char header[24] = {};
    in.read(header, sizeof(header));
    uint64_t block_size = 0;
    std::memcpy(&block_size, header + 16, 8);  // little-endian hosts
    n += std::memcmp(header, "JIGSAWKS", 8) == 0 && block_size > (64 << 10);
  }
  return n;
}

// Runs in every storage mode (hybrid: L1 and deeper are SSD tables, so kills
// land during unsynced compaction outputs too; disk-only: WAL and manifest
// files as well).
class CrashTest : public ::testing::TestWithParam<StorageMode> {};

// Kills a writer (WriterProcess) kCrashes times, checking after each crash
// that every acknowledged batch is there whole and no batch partly.
void KillRepeatedly(const test::ScratchDir& dir, StorageMode mode, bool deletes, bool sync_writes = true) {
  Options options = test::SmallOptions();
  options.storage_mode = mode;
  options.pmem_budget = 2 << 20;
  std::mt19937_64 rng(2024);
  std::map<uint64_t, bool> deleted_part0;  // batch -> part 0 deleted by a later batch
  uint64_t next_batch = 0;
  const int kCrashes = 25;
  for (int crash = 0; crash < kCrashes; ++crash) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const uint64_t first = next_batch;
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      WriterProcess(dir.path(), options, first, fds[1], deletes, sync_writes);
    }
    close(fds[1]);
    // Mostly killed after a number of acknowledged batches, while writing
    // more -- a number, not a time, so that a fast machine does not fill the
    // pool (pmem mode keeps everything there); sometimes after a short time,
    // which may land in the writer's open and recovery.
    uint64_t acked = first;  // one past the last acknowledged batch
    uint64_t batch;
    if (rng() % 5 == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 30));
    } else {
      // A writer that stalls (or hangs) is killed after a minute, not waited
      // for forever: the checks below then still run.
      const uint64_t target = first + 100 + rng() % 2000;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
      while (acked < target && std::chrono::steady_clock::now() < deadline) {
        pollfd ready{fds[0], POLLIN, 0};
        if (poll(&ready, 1, 100) <= 0) continue;
        if (read(fds[0], &batch, sizeof(batch)) != sizeof(batch)) break;  // the writer is gone
        acked = batch + 1;
      }
    }
    kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "writer exited early with " << WEXITSTATUS(status);
    while (read(fds[0], &batch, sizeof(batch)) == sizeof(batch)) acked = batch + 1;
    close(fds[0]);

    std::unique_ptr<DB> db;
    Status s = DB::Open(options, dir.path(), &db);
    // The killed writer's lock may outlive waitpid briefly (seen once, in
    // hybrid mode, whose io_uring instance the kernel tears down
    // asynchronously): retried for up to two seconds, never longer.
    for (int retry = 0; retry < 20 && s.IsIOError() && s.ToString().find("in use") != std::string::npos; ++retry) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      s = DB::Open(options, dir.path(), &db);
    }
    ASSERT_TRUE(s.ok()) << "crash " << crash << ": " << s.ToString();
    s = db->VerifyIntegrity();
    ASSERT_TRUE(s.ok()) << "crash " << crash << ": " << s.ToString();
    // Every acknowledged batch is whole (part 0 may have been deleted by a
    // later batch that was itself written).
    for (uint64_t b = 0; b < acked; ++b) {
      for (int part = 1; part < kKeysPerBatch; ++part) {
        std::string value;
        s = db->Get(ReadOptions(), BatchKey(b, part), &value);
        ASSERT_TRUE(s.ok()) << "crash " << crash << ": lost acknowledged batch " << b << ": " << s.ToString();
        ASSERT_EQ(value.substr(0, std::to_string(b).size()), std::to_string(b));
      }
    }
    // No batch is partly visible: parts 1.. of any batch appear together,
    // and the scan agrees with Get and is strictly ordered both ways.
    auto it = db->NewIterator(ReadOptions());
    std::map<uint64_t, int> parts;
    std::string previous;
    size_t count = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++count) {
      const std::string key = it->key().ToString();
      ASSERT_TRUE(previous.empty() || previous < key);
      previous = key;
      const uint64_t b = std::stoull(key.substr(5, 10));
      const int part = key.back() - '0';
      if (part > 0) ++parts[b];
      std::string value;
      ASSERT_TRUE(db->Get(ReadOptions(), key, &value).ok());
      ASSERT_EQ(value, it->value().ToString());
    }
    ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    size_t backwards = 0;
    for (it->SeekToLast(); it->Valid(); it->Prev()) ++backwards;
    ASSERT_EQ(backwards, count);
    uint64_t recovered_end = acked;
    for (const auto& [b, n] : parts) {
      ASSERT_EQ(n, kKeysPerBatch - 1) << "batch " << b << " is partly visible after crash " << crash;
      recovered_end = std::max(recovered_end, b + 1);
    }
    if (crash == kCrashes - 1) {
      std::string ssd_bytes;
      ASSERT_TRUE(db->GetProperty("jigsaw.ssd-bytes", &ssd_bytes));
      if (mode != StorageMode::kPmem) {
        EXPECT_GT(std::stoull(ssd_bytes), 0u) << "no SSD table was written";
      } else {
        EXPECT_EQ(ssd_bytes, "0");
      }
    }
    it.reset();
    db.reset();
    next_batch = recovered_end;
  }
  EXPECT_GT(next_batch, 100u) << "the writer made too little progress to test anything";
}

TEST_P(CrashTest, KillDuringSyncWritesLosesNothingAcknowledged) {
  test::ScratchDir dir;
  KillRepeatedly(dir, GetParam(), /*deletes=*/true);
}

// A write with sync=false is in the operating system when it returns (the
// pmem segment, or the disk-mode log file's shared mapping): a kill -9
// loses none of them.
TEST_P(CrashTest, KillDuringUnsyncedWritesLosesNothingAcknowledged) {
  test::ScratchDir dir;
  KillRepeatedly(dir, GetParam(), /*deletes=*/true, /*sync_writes=*/false);
}

// Keys written in order, nothing deleted: in hybrid mode pmem blocks that
// overlap nothing below migrate to SSD as their bytes, so kills land before,
// during and after migrations (a table file written, committed as pending,
// synced, its pmem block freed).
TEST(CrashTest, KillDuringMigrationsLosesNothingAcknowledged) {
  test::ScratchDir dir;
  KillRepeatedly(dir, StorageMode::kHybrid, /*deletes=*/false);
  EXPECT_GT(MigratedTables(dir.path()), 0u) << "no pmem block migrated";
}

// Child for the group-commit crash test: kWriterThreads threads write sync
// batches concurrently (thread t: batches first + t, first + t + kWriterThreads,
// ...), so leaders write groups of them in one record; each acknowledged
// batch is reported through the pipe (8-byte writes are atomic).
constexpr int kWriterThreads = 4;
[[noreturn]] void ConcurrentWriterProcess(const std::string& path, const Options& options, uint64_t first,
                                          int ack_fd) {
  std::unique_ptr<DB> db;
  if (!DB::Open(options, path, &db).ok()) _exit(3);
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriterThreads; ++t) {
    threads.emplace_back([&, t] {
      WriteOptions sync;
      sync.sync = true;
      for (uint64_t batch = first + t;; batch += kWriterThreads) {
        WriteBatch b;
        const std::string value = std::to_string(batch) + std::string(batch % 200, 'v');
        for (int part = 0; part < kKeysPerBatch; ++part) b.Put(BatchKey(batch, part), value);
        Status s = db->Write(sync, &b);
        if (!s.ok()) {
          std::fprintf(stderr, "writer: %s\n", s.ToString().c_str());
          _exit(4);
        }
        if (write(ack_fd, &batch, sizeof(batch)) != sizeof(batch)) _exit(5);
      }
    });
  }
  for (auto& t : threads) t.join();
  _exit(6);
}

// Group commit interrupted mid-group: a kill while several threads' sync
// writes are queued and a leader is writing their group loses none of the
// acknowledged ones and leaves no batch in part.
TEST_P(CrashTest, KillDuringConcurrentSyncWritesLosesNothingAcknowledged) {
  test::ScratchDir dir;
  Options options = test::SmallOptions();
  options.storage_mode = GetParam();
  options.pmem_budget = 2 << 20;
  std::mt19937_64 rng(77);
  uint64_t next_batch = 0;
  for (int crash = 0; crash < 8; ++crash) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      ConcurrentWriterProcess(dir.path(), options, next_batch, fds[1]);
    }
    close(fds[1]);
    std::set<uint64_t> acked;
    const size_t target = 100 + rng() % 1500;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    uint64_t batch;
    while (acked.size() < target && std::chrono::steady_clock::now() < deadline) {
      pollfd ready{fds[0], POLLIN, 0};
      if (poll(&ready, 1, 100) <= 0) continue;
      if (read(fds[0], &batch, sizeof(batch)) != sizeof(batch)) break;
      acked.insert(batch);
    }
    kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "writer exited early with " << WEXITSTATUS(status);
    while (read(fds[0], &batch, sizeof(batch)) == sizeof(batch)) acked.insert(batch);
    close(fds[0]);

    std::unique_ptr<DB> db;
    Status s = DB::Open(options, dir.path(), &db);
    ASSERT_TRUE(s.ok()) << "crash " << crash << ": " << s.ToString();
    ASSERT_TRUE(db->VerifyIntegrity().ok());
    for (uint64_t b : acked) {
      for (int part = 0; part < kKeysPerBatch; ++part) {
        std::string value;
        s = db->Get(ReadOptions(), BatchKey(b, part), &value);
        ASSERT_TRUE(s.ok()) << "crash " << crash << ": lost acknowledged batch " << b << ": " << s.ToString();
      }
    }
    std::map<uint64_t, int> parts;
    auto it = db->NewIterator(ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++parts[std::stoull(it->key().ToString().substr(5, 10))];
    ASSERT_TRUE(it->status().ok());
    uint64_t end = next_batch;
    for (const auto& [b, n] : parts) {
      ASSERT_EQ(n, kKeysPerBatch) << "batch " << b << " is partly visible after crash " << crash;
      end = std::max(end, b + 1);
    }
    if (!acked.empty()) end = std::max(end, *acked.rbegin() + 1);
    it.reset();
    db.reset();
    next_batch = end + kWriterThreads;  // past any batch a thread had in flight
  }
  EXPECT_GT(next_batch, 400u) << "the writers made too little progress to test anything";
}

INSTANTIATE_TEST_SUITE_P(Modes, CrashTest, ::testing::Values(StorageMode::kPmem, StorageMode::kHybrid, StorageMode::kDisk),
                         test::ModeName);

}  // namespace
}  // namespace jigsaw
