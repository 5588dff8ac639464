// Concurrent writers, readers, iterators and snapshots on one DB while
// flushes and compactions run. Built and run under ThreadSanitizer by
// scripts/test.sh.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <future>
#include <mutex>
#include <string>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "jigsaw/db.h"
#include "tests/support/db_test_util.h"
#include "tests/support/forwarding_fs.h"

namespace jigsaw {
namespace {

constexpr int kKeysPerWriter = 200;
constexpr int kWritesPerWriter = 6000;

std::string Key(int writer, int k) { return std::string("w").append(std::to_string(writer)).append("-").append(std::to_string(k)); }

// Values are "<counter>:<padding>"; each writer's counter only grows.
uint64_t Counter(const std::string& value) { return std::stoull(value.substr(0, value.find(':'))); }

// In every storage mode (hybrid and disk-only add SSD tables, the block
// cache and the durability tracker thread).
class DBConcurrencyTest : public ::testing::TestWithParam<StorageMode> {
 protected:
  // SmallOptions in this test's mode, with SSD levels in hybrid mode.
  Options ModeOptions() const { return test::SmallModeOptions(GetParam()); }
};

TEST_P(DBConcurrencyTest, ReadersSeeMonotonicValuesWhileWritersAndCompactionsRun) {
  test::ScratchDir dir;
  std::unique_ptr<DB> db;
  Options options = ModeOptions();
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  std::atomic<int> writers_done{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < 2; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 1; i <= kWritesPerWriter && !failed; ++i) {
        const std::string value = std::to_string(i) + ":" + std::string(100, 'p');
        WriteBatch batch;  // two keys per batch: readers must see both or neither
        batch.Put(Key(w, i % kKeysPerWriter), value);
        batch.Put(Key(w, (i + 1) % kKeysPerWriter) + "-twin", value);
        if (!db->Write(WriteOptions(), &batch).ok()) failed = true;
      }
      ++writers_done;
    });
  }
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      std::map<std::string, uint64_t> last_seen;
      std::map<std::string, uint64_t> last_scanned;  // reader 1: what its refreshed iterator showed last
      std::unique_ptr<Iterator> kept;                // reader 1: one iterator, refreshed every round
      while (writers_done < 2 && !failed) {
        // Point reads never go backwards.
        for (int k = 0; k < kKeysPerWriter; k += 17) {
          const std::string key = Key(r, k);
          std::string value;
          Status s = db->Get(ReadOptions(), key, &value);
          if (s.IsNotFound()) continue;
          if (!s.ok()) {
            ADD_FAILURE() << s.ToString();
            failed = true;
            return;
          }
          const uint64_t counter = Counter(value);
          if (counter < last_seen[key]) {
            ADD_FAILURE() << key << " went back from " << last_seen[key] << " to " << counter;
            failed = true;
          }
          last_seen[key] = counter;
        }
        // An iterator is a consistent snapshot: ordered, and each batch's
        // twin key carries the same counter as its partner. Reader 0 makes
        // one at a snapshot each round; reader 1 refreshes the same one,
        // which never shows a key older than it did before.
        const Snapshot* snapshot = r == 0 ? db->GetSnapshot() : nullptr;
        ReadOptions at_snapshot;
        at_snapshot.snapshot = snapshot;
        std::unique_ptr<Iterator> made;
        if (r == 0) {
          made = db->NewIterator(at_snapshot);
        } else if (kept == nullptr) {
          kept = db->NewIterator(ReadOptions());
        } else if (!kept->Refresh().ok()) {
          ADD_FAILURE() << "refresh failed";
          failed = true;
          return;
        }
        Iterator* it = r == 0 ? made.get() : kept.get();
        std::map<std::string, std::string> seen;
        std::string previous;
        for (it->SeekToFirst(); it->Valid(); it->Next()) {
          const std::string key = it->key().ToString();
          if (!previous.empty() && previous >= key) {
            ADD_FAILURE() << "iterator out of order: " << previous << " then " << key;
            failed = true;
          }
          previous = key;
          seen[key] = it->value().ToString();
        }
        if (!it->status().ok()) failed = true;
        // Batch i writes Key(w, i % K) and Key(w, (i + 1) % K) + "-twin", so
        // in any consistent view these two keys carry the same counter.
        for (int w = 0; w < 2; ++w) {
          for (int j = 0; j < kKeysPerWriter; ++j) {
            auto twin = seen.find(Key(w, j) + "-twin");
            auto partner = seen.find(Key(w, (j + kKeysPerWriter - 1) % kKeysPerWriter));
            if ((twin == seen.end()) != (partner == seen.end()) ||
                (twin != seen.end() && Counter(twin->second) != Counter(partner->second))) {
              ADD_FAILURE() << "batch partly visible at " << Key(w, j);
              failed = true;
            }
          }
        }
        for (const auto& [key, value] : seen) {
          if (snapshot == nullptr) {
            if (Counter(value) < last_scanned[key]) {
              ADD_FAILURE() << "refreshed iterator: " << key << " went back to " << Counter(value);
              failed = true;
            }
            last_scanned[key] = Counter(value);
            continue;
          }
          std::string again;
          if (!db->Get(at_snapshot, key, &again).ok() || again != value) {
            ADD_FAILURE() << "snapshot read of " << key << " changed";
            failed = true;
          }
        }
        if (snapshot != nullptr) db->ReleaseSnapshot(snapshot);
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_FALSE(failed);
  for (int w = 0; w < 2; ++w) {
    std::string value;
    ASSERT_TRUE(db->Get(ReadOptions(), Key(w, kWritesPerWriter % kKeysPerWriter), &value).ok());
    EXPECT_EQ(Counter(value), static_cast<uint64_t>(kWritesPerWriter));
  }
  std::string ssd_bytes;
  ASSERT_TRUE(db->GetProperty("jigsaw.ssd-bytes", &ssd_bytes));
  if (GetParam() != StorageMode::kPmem) {
    EXPECT_NE(ssd_bytes, "0") << "no SSD table was exercised";
  }
}

// A file system whose log files take 2 ms to sync, as a slow disk would:
// writers pile up behind a syncing leader.
class SlowLogSyncFileSystem final : public test::ForwardingFileSystem {
 public:
  Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) override {
    Status s = base_->NewWritableFile(path, file);
    if (s.ok() && path.ends_with(".log")) {
      *file = std::make_unique<SlowSyncFile>(std::move(*file));
    }
    return s;
  }

 private:
  class SlowSyncFile final : public test::ForwardingWritableFile {
   public:
    using ForwardingWritableFile::ForwardingWritableFile;
    Status Sync() override {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      return base_->Sync();
    }
  };
};

// Group commit: writers that queue behind a syncing leader are written by
// it in one WAL record; every batch is written exactly once, a non-sync
// write never waits for (or answers for) a sync one's durability, and a
// CompactRange in the middle switches memtables between groups.
TEST(DBGroupCommitTest, QueuedWritersShareOneRecordAndEveryBatchLandsOnce) {
  test::ScratchDir dir;
  SlowLogSyncFileSystem fs;
  Options options = test::SmallOptions();
  options.storage_mode = StorageMode::kDisk;
  options.file_system = &fs;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  constexpr int kSyncWriters = 6, kPlainWriters = 2, kSyncWrites = 40, kPlainWrites = 300;
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kSyncWriters + kPlainWriters; ++t) {
    threads.emplace_back([&, t] {
      const bool sync = t < kSyncWriters;
      WriteOptions options;
      options.sync = sync;
      for (int i = 0; i < (sync ? kSyncWrites : kPlainWrites) && !failed; ++i) {
        WriteBatch batch;
        batch.Put("t" + std::to_string(t) + "-" + std::to_string(i), std::to_string(i));
        if (i > 0 && i % 10 == 0) batch.Delete("t" + std::to_string(t) + "-" + std::to_string(i - 10));
        Status s = db->Write(options, &batch);
        if (!s.ok()) {
          ADD_FAILURE() << s.ToString();
          failed = true;
        }
      }
    });
  }
  threads.emplace_back([&] {
    for (int i = 0; i < 3 && !failed; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      if (!db->CompactRange(nullptr, nullptr).ok()) failed = true;
    }
  });
  for (auto& t : threads) t.join();
  ASSERT_FALSE(failed);
  for (int t = 0; t < kSyncWriters + kPlainWriters; ++t) {
    const int writes = t < kSyncWriters ? kSyncWrites : kPlainWrites;
    for (int i = 0; i < writes; ++i) {
      std::string value;
      const Status s = db->Get(ReadOptions(), "t" + std::to_string(t) + "-" + std::to_string(i), &value);
      const bool deleted = i + 10 < writes && (i + 10) % 10 == 0;
      if (deleted) {
        EXPECT_TRUE(s.IsNotFound()) << t << "-" << i;
      } else {
        ASSERT_TRUE(s.ok()) << t << "-" << i << ": " << s.ToString();
        EXPECT_EQ(value, std::to_string(i));
      }
    }
  }
  std::string groups;
  ASSERT_TRUE(db->GetProperty("jigsaw.write-groups", &groups));
  uint64_t batches = 0, records = 0, synced = 0;
  ASSERT_EQ(std::sscanf(groups.c_str(), "batches %lu groups %lu synced %lu", &batches, &records, &synced), 3)
      << groups;
  EXPECT_EQ(batches, uint64_t{kSyncWriters * kSyncWrites + kPlainWriters * kPlainWrites});
  // Six threads keep syncing 2 ms each: most of them wait behind a leader.
  EXPECT_LT(synced, uint64_t{kSyncWriters * kSyncWrites}) << groups;
  EXPECT_LT(records, batches) << groups;
}

// Options::concurrent_memtable_writes: a group whose WAL record is written
// leaves the queue and inserts while the next group writes its record, and
// groups become visible in sequence order. On or off, every batch lands once
// with its own values, a reader at a snapshot sees a batch whole or not at
// all (nor a later batch without the earlier ones of its writer), and
// memtables switch and flush in between; on, groups were inserted beside
// others.
class DBConcurrentMemtableWritesTest : public ::testing::TestWithParam<bool> {};

TEST_P(DBConcurrentMemtableWritesTest, EveryBatchLandsOnceAndWhole) {
  test::ScratchDir dir;
  Options options = test::SmallOptions();
  options.concurrent_memtable_writes = GetParam();
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  constexpr int kWriters = 2, kWrites = 20000, kKeys = 500;
  std::atomic<int> writers_done{0};
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 1; i <= kWrites && !failed; ++i) {
        const std::string value = std::to_string(i);
        WriteBatch batch;  // a key and its twin, always written together
        batch.Put(Key(w, i % kKeys), value);
        batch.Put(Key(w, i % kKeys) + "-twin", value);
        if (!db->Write(WriteOptions(), &batch).ok()) failed = true;
      }
      ++writers_done;
    });
  }
  threads.emplace_back([&] {
    std::mt19937 rng(3);
    while (writers_done < kWriters && !failed) {
      const Snapshot* snapshot = db->GetSnapshot();
      ReadOptions at_snapshot;
      at_snapshot.snapshot = snapshot;
      const std::string key = Key(static_cast<int>(rng() % kWriters), static_cast<int>(rng() % kKeys));
      std::string value, twin;
      const Status s = db->Get(at_snapshot, key, &value);
      const Status t = db->Get(at_snapshot, key + "-twin", &twin);
      db->ReleaseSnapshot(snapshot);
      if (s.IsNotFound() != t.IsNotFound() || (s.ok() && value != twin)) {
        ADD_FAILURE() << key << ": " << s.ToString() << " " << value << " vs twin " << t.ToString() << " " << twin;
        failed = true;
      }
    }
  });
  for (auto& t : threads) t.join();
  ASSERT_FALSE(failed);
  for (int w = 0; w < kWriters; ++w) {
    for (int k = 0; k < kKeys; ++k) {
      // The last i with i % kKeys == k.
      const int last = kWrites - ((kWrites % kKeys - k + kKeys) % kKeys);
      std::string value;
      ASSERT_TRUE(db->Get(ReadOptions(), Key(w, k), &value).ok()) << Key(w, k);
      EXPECT_EQ(value, std::to_string(last)) << Key(w, k);
      ASSERT_TRUE(db->Get(ReadOptions(), Key(w, k) + "-twin", &value).ok());
      EXPECT_EQ(value, std::to_string(last));
    }
  }
  std::string groups;
  ASSERT_TRUE(db->GetProperty("jigsaw.write-groups", &groups));
  uint64_t batches = 0, records = 0, synced = 0, pipelined = 0, self_inserted = 0;
  ASSERT_EQ(std::sscanf(groups.c_str(), "batches %lu groups %lu synced %lu pipelined %lu self_inserted %lu", &batches,
                        &records, &synced, &pipelined, &self_inserted),
            5)
      << groups;
  EXPECT_EQ(batches, uint64_t{kWriters * kWrites});
  if (!GetParam()) {
    EXPECT_EQ(pipelined, 0u) << groups;
    EXPECT_EQ(self_inserted, 0u) << groups;
  } else {
    // A group is inserted beside others whenever another writer waits
    // behind its leader: with two writers, many times in 40,000 writes.
    EXPECT_GT(pipelined, 0u) << groups;
  }
  // And after reopening (the WAL's records hold the groups' batches in order).
  db.reset();
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  for (int w = 0; w < kWriters; ++w) {
    std::string value;
    const int k = 7, last = kWrites - ((kWrites % kKeys - k + kKeys) % kKeys);
    ASSERT_TRUE(db->Get(ReadOptions(), Key(w, k) + "-twin", &value).ok());
    EXPECT_EQ(value, std::to_string(last));
  }
}

// A file system that, once armed, holds the next manifest sync made by a
// thread other than the test's (the background thread's commit of a flush)
// until the test lets it go, with the sync's own result or with an error.
class HeldManifestSyncFileSystem final : public test::ForwardingFileSystem {
 public:
  Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) override {
    Status s = base_->NewWritableFile(path, file);
    if (s.ok() && path.ends_with("MANIFEST.tmp")) {
      *file = std::make_unique<HeldSyncFile>(this, std::move(*file));
    }
    return s;
  }
  // Arms the hold; the calling thread's syncs are never held.
  void Arm() {
    std::lock_guard<std::mutex> lock(mu_);
    armed_ = true;
    exempt_ = std::this_thread::get_id();
  }
  // True once a sync is held (false after a minute without one).
  bool AwaitHeld() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::minutes(1), [&] { return held_; });
  }
  // Lets the held sync go: it returns `result` (OK: the real sync's).
  void Release(Status result) {
    std::lock_guard<std::mutex> lock(mu_);
    result_ = std::move(result);
    released_ = true;
    cv_.notify_all();
  }

 private:
  class HeldSyncFile final : public test::ForwardingWritableFile {
   public:
    HeldSyncFile(HeldManifestSyncFileSystem* fs, std::unique_ptr<WritableFile> base)
        : ForwardingWritableFile(std::move(base)), fs_(fs) {}
    Status Sync() override {
      Status held = fs_->MaybeHold();
      return held.ok() ? base_->Sync() : held;
    }

   private:
    HeldManifestSyncFileSystem* const fs_;
  };

  Status MaybeHold() {
    std::unique_lock<std::mutex> lock(mu_);
    if (!armed_ || std::this_thread::get_id() == exempt_) return Status::OK();
    armed_ = false;
    held_ = true;
    cv_.notify_all();
    cv_.wait(lock, [&] { return released_; });
    return result_;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false, held_ = false, released_ = false;
  std::thread::id exempt_;
  Status result_;
};

// Disk-only mode writes the manifest as a file (two syncs per commit). The
// background thread's commits are written without the DB mutex: while one
// is held at its sync, writes and reads go on and see the state before it;
// once it returns, its flush is in. If it fails, nothing it would have
// changed has changed: every write is still readable and survives a reopen.
class DBManifestCommitTest : public ::testing::TestWithParam<bool> {};

TEST_P(DBManifestCommitTest, WritesAndReadsGoOnWhileABackgroundCommitSyncs) {
  const bool commit_fails = GetParam();
  test::ScratchDir dir;
  HeldManifestSyncFileSystem fs;
  Options options = test::SmallOptions();
  options.storage_mode = StorageMode::kDisk;
  options.file_system = &fs;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  const std::string value(1000, 'v');
  // One memtable and a fifth, from a thread of their own: the switch (that
  // thread's own commit, never held) freezes the first memtable, whose
  // flush the background thread commits.
  const int kFill = static_cast<int>(options.memtable_size * 6 / 5 / value.size());
  std::atomic<bool> fill_ok{true};
  std::promise<void> filled;
  std::future<void> fill_done = filled.get_future();
  std::thread filler([&] {
    fs.Arm();
    for (int i = 0; i < kFill && fill_ok; ++i) fill_ok = db->Put(WriteOptions(), "k" + std::to_string(i), value).ok();
    filled.set_value();
  });
  const bool held = fs.AwaitHeld();
  std::future<std::string> during;
  bool finished = false;
  if (held) {
    during = std::async(std::launch::async, [&] {
      std::string flushes;
      if (!db->GetProperty("jigsaw.flushes", &flushes) || flushes != "0") return "flushes " + flushes;
      for (int i = 0; i < 20; ++i) {
        if (!db->Put(WriteOptions(), "during" + std::to_string(i), "d").ok()) return std::string("a Put failed");
      }
      std::string got;
      if (!db->Get(ReadOptions(), "during19", &got).ok() || got != "d") return std::string("during19 unreadable");
      return std::string();
    });
    // The filler's last writes, too, go on while the commit is held.
    finished = during.wait_for(std::chrono::minutes(1)) == std::future_status::ready &&
               fill_done.wait_for(std::chrono::minutes(1)) == std::future_status::ready;
  }
  fs.Release(commit_fails ? Status::IOError("injected manifest sync failure") : Status::OK());
  filler.join();
  ASSERT_TRUE(held) << "no background commit reached its manifest sync";
  ASSERT_TRUE(finished) << "writes and reads waited for the background commit";
  EXPECT_EQ(during.get(), "");
  ASSERT_TRUE(fill_ok);

  std::string flushes;
  if (!commit_fails) {
    for (int i = 0; i < 600; ++i) {
      ASSERT_TRUE(db->GetProperty("jigsaw.flushes", &flushes));
      if (flushes != "0") break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_NE(flushes, "0");
    ASSERT_TRUE(db->Put(WriteOptions(), "after", "a").ok());
  } else {
    // The failed commit stops the store; reads still see every write.
    Status s;
    for (int i = 0; i < 600 && s.ok(); ++i) {
      s = db->Put(WriteOptions(), "after", "a");
      if (s.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    EXPECT_TRUE(s.IsIOError()) << s.ToString();
    ASSERT_TRUE(db->GetProperty("jigsaw.flushes", &flushes));
    EXPECT_EQ(flushes, "0");
  }
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < kFill; ++i) {
      std::string got;
      ASSERT_TRUE(db->Get(ReadOptions(), "k" + std::to_string(i), &got).ok()) << round << " k" << i;
      EXPECT_EQ(got, value);
    }
    for (int i = 0; i < 20; ++i) {
      std::string got;
      ASSERT_TRUE(db->Get(ReadOptions(), "during" + std::to_string(i), &got).ok()) << round << " during" << i;
    }
    db.reset();
    options.file_system = FileSystem::Default();
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  }
}

INSTANTIATE_TEST_SUITE_P(SucceedsOrFails, DBManifestCommitTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? std::string("CommitFails") : std::string("CommitSucceeds");
                         });

INSTANTIATE_TEST_SUITE_P(OnAndOff, DBConcurrentMemtableWritesTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return std::string(info.param ? "Concurrent" : "LeaderInserts");
                         });

// Read-triggered compaction (Options::read_triggered_compactions) with
// readers on several threads: Gets and scans charge one read state at once,
// one of them asks, L0 goes into L1 exactly once while they read, and every
// read answers as before.
TEST_P(DBConcurrencyTest, ReadersOnSeveralThreadsAskForL0Once) {
  test::ScratchDir dir;
  std::unique_ptr<DB> db;
  Options options = ModeOptions();
  options.level0_compaction_trigger = 8;  // the writes below leave fewer
  options.level0_slowdown_trigger = 20;
  options.level0_stop_trigger = 24;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  auto property = [&](const char* name) {
    std::string value;
    EXPECT_TRUE(db->GetProperty(name, &value)) << name;
    return std::stoull(value);
  };
  char key[16];
  for (int i = 0; i < 4000; ++i) {
    std::snprintf(key, sizeof(key), "key%08d", (i * 7919) % 4000);
    ASSERT_TRUE(db->Put(WriteOptions(), key, std::string(100, 'v')).ok());
  }
  for (int waited = 0; waited < 3000 && property("jigsaw.num-tables-at-level0") < 2; ++waited) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_GE(property("jigsaw.num-tables-at-level0"), 2u);

  std::atomic<bool> stop{false};
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      char k[16];
      std::string value;
      for (int i = 0; !stop && !failed; ++i) {
        const int n = (i * 13 + t) % 4000;
        std::snprintf(k, sizeof(k), "key%08d", n);
        if (!db->Get(ReadOptions(), k, &value).ok() || value != std::string(100, 'v')) failed = true;
        std::snprintf(k, sizeof(k), "key%08dx", n);  // absent, inside every table's range
        if (!db->Get(ReadOptions(), k, &value).IsNotFound()) failed = true;
      }
    });
  }
  threads.emplace_back([&] {
    while (!stop && !failed) {
      auto it = db->NewIterator(ReadOptions());
      int n = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
      if (n != 4000 || !it->status().ok()) failed = true;
    }
  });
  // The bound only keeps a broken build from hanging the suite.
  for (int waited = 0; waited < 6000 && !failed && property("jigsaw.num-tables-at-level0") > 0; ++waited) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  stop = true;
  for (auto& t : threads) t.join();
  EXPECT_FALSE(failed);
  EXPECT_EQ(property("jigsaw.num-tables-at-level0"), 0u);
  EXPECT_EQ(property("jigsaw.read-triggered-compactions"), 1u);
}

// A writer overwrites one key while fresh iterators scan its neighbourhood
// backwards and switch direction around it. Each version the writer adds
// after an iterator was made is invisible to it, and sorts just before the
// versions it sees; moving back must step over them, not stop.
TEST_P(DBConcurrencyTest, ReverseScansSeeEveryKeyWhileOneIsOverwritten) {
  test::ScratchDir dir;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(ModeOptions(), dir.path(), &db).ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "a", "1").ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "b", "0").ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "c", "1").ok());
  std::atomic<bool> stop{false};
  std::atomic<bool> write_failed{false};
  std::thread writer([&] {
    for (uint64_t i = 1; !stop; ++i) {
      // Values of 1 KiB: the memtable is switched every ~150 writes.
      if (!db->Put(WriteOptions(), "b", std::to_string(i).append(1000, 'v')).ok()) write_failed = true;
    }
  });
  enum Pattern { kFromLast, kSeekThenBack, kForwardThenBack, kBackThenForward, kPatterns };
  std::string failure;
  for (int scan = 0; scan < 20000 && failure.empty() && !write_failed; ++scan) {
    auto it = db->NewIterator(ReadOptions());
    std::string keys;
    auto visit = [&] { keys += it->Valid() ? it->key().ToString() : std::string("."); };
    // A move from an invalid position would be misuse; the visit shows it.
    auto next = [&] { if (it->Valid()) it->Next(); visit(); };
    auto prev = [&] { if (it->Valid()) it->Prev(); visit(); };
    std::string expected;
    switch (static_cast<Pattern>(scan % kPatterns)) {
      case kFromLast:
        it->SeekToLast();
        visit();
        prev(), prev(), prev();
        expected = "cba.";
        break;
      case kSeekThenBack:
        it->Seek("b");
        visit();
        prev();
        expected = "ba";
        break;
      case kForwardThenBack:
        it->SeekToFirst();
        visit();
        next(), next(), prev(), prev();
        expected = "abcba";
        break;
      case kBackThenForward:
        it->SeekToLast();
        visit();
        prev(), next();
        expected = "cbc";
        break;
      case kPatterns:
        break;
    }
    if (keys != expected) failure = "visited " + keys + " instead of " + expected;
    if (failure.empty() && !it->status().ok()) failure = "status " + it->status().ToString() + " after " + keys;
    if (!failure.empty()) failure += " (scan " + std::to_string(scan) + ")";
  }
  stop = true;
  writer.join();
  EXPECT_EQ(failure, "");
  EXPECT_FALSE(write_failed);
}

// Every documented property, asked for over and over while a writer fills
// memtables, flushes and compactions replace tables (and free their pool
// objects) and readers drop the last reference to old tables as their
// iterators die.
TEST_P(DBConcurrencyTest, PropertiesCanBePolledWhileTablesAreReplaced) {
  test::ScratchDir dir;
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(ModeOptions(), dir.path(), &db).ok());
  std::atomic<bool> stop{false};
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  threads.emplace_back([&] {
    std::mt19937 rng(1);
    for (int i = 0; i < 60000 && !failed; ++i) {
      if (!db->Put(WriteOptions(), Key(0, static_cast<int>(rng() % 3000)), std::string(200, 'v')).ok()) failed = true;
    }
    stop = true;
  });
  threads.emplace_back([&] {
    while (!stop && !failed) {
      auto it = db->NewIterator(ReadOptions());
      int n = 0;
      for (it->SeekToFirst(); it->Valid() && n < 500; it->Next()) ++n;
      if (!it->status().ok()) failed = true;
    }
  });
  const std::vector<std::string> properties = {
      "jigsaw.levels", "jigsaw.num-tables-at-level0", "jigsaw.num-tables-at-level1", "jigsaw.pmem-bytes",
      "jigsaw.ssd-bytes", "jigsaw.pool-used-bytes", "jigsaw.compactions", "jigsaw.flushes", "jigsaw.write-groups",
      "jigsaw.read-triggered-compactions", "jigsaw.stalls", "jigsaw.sync-stats", "jigsaw.block-cache", "jigsaw.io",
      "jigsaw.pmem-device", "jigsaw.wal-recovery", "jigsaw.stats-json", "jigsaw.stats"};
  // One thread asks for the pool's usage alone, most often.
  threads.emplace_back([&] {
    std::string value;
    while (!stop && !failed) {
      if (!db->GetProperty("jigsaw.pool-used-bytes", &value)) failed = true;
    }
  });
  uint64_t polls = 0;
  while (!stop && !failed) {
    for (const std::string& name : properties) {
      std::string value;
      if (!db->GetProperty(name, &value)) {
        ADD_FAILURE() << name << " is not known";
        failed = true;
      }
      ++polls;
    }
  }
  for (auto& t : threads) t.join();
  EXPECT_FALSE(failed);
  EXPECT_GT(polls, 0u);
  std::string flushes;
  ASSERT_TRUE(db->GetProperty("jigsaw.flushes", &flushes));
  EXPECT_GT(std::stoull(flushes), 0u) << "the writer replaced no table";
}

INSTANTIATE_TEST_SUITE_P(Modes, DBConcurrencyTest, ::testing::Values(StorageMode::kPmem, StorageMode::kHybrid, StorageMode::kDisk),
                         test::ModeName);

}  // namespace
}  // namespace jigsaw
