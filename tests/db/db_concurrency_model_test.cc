// A concurrency model test: writers with disjoint key spaces write atomic
// groups while readers check every view they take against the history of
// acknowledged writes -- Gets and MultiGets at snapshots, forward and
// reverse scans, iterators held across flushes and compactions -- and the
// database is closed and reopened between rounds and checked whole.
//
// Each writer's batch also sets the writer's clock key to the batch's
// number, so a view that shows clock c of writer w must show w's keys
// exactly as batch c left them: no batch partly visible, none lost, none
// from the future, nothing stale.
//
// Built and run under ThreadSanitizer by scripts/test.sh. Longer runs:
// JIGSAW_MODEL_BATCHES (batches per writer and round, default 3000) and
// JIGSAW_MODEL_ROUNDS (default 2).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "jigsaw/db.h"
#include "tests/support/db_test_util.h"

namespace jigsaw {
namespace {

constexpr int kWriters = 2;
constexpr int kKeysPerWriter = 48;

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && std::atoi(v) > 0 ? std::atoi(v) : fallback;
}

std::string ClockKey(int writer) { return "w" + std::to_string(writer) + "/clock"; }
std::string Key(int writer, int k) {
  char key[16];
  std::snprintf(key, sizeof(key), "w%d/k%02d", writer, k);
  return key;
}
int WriterOf(const std::string& key) { return key.size() > 1 ? key[1] - '0' : -1; }

// What one writer wrote, in batch order: batch c's updates to each key.
// Writers append before they write, readers look up under the lock.
class WriterHistory {
 public:
  // The contents of the writer's key space (clock key included) once
  // batch `clock` (0: none yet) has been applied.
  std::map<std::string, std::string> StateAt(uint64_t clock) const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::map<std::string, std::string> state;
    for (const auto& [key, updates] : updates_) {
      // The last update at or before `clock`.
      auto it = std::upper_bound(updates.begin(), updates.end(), clock,
                                 [](uint64_t c, const Update& u) { return c < u.first; });
      if (it == updates.begin()) continue;
      --it;
      if (it->second.has_value()) state[key] = *it->second;
    }
    return state;
  }
  void Record(uint64_t clock, const std::string& key, std::optional<std::string> value) {
    std::lock_guard<std::mutex> lock(mutex_);
    updates_[key].emplace_back(clock, std::move(value));
  }

 private:
  using Update = std::pair<uint64_t, std::optional<std::string>>;
  mutable std::mutex mutex_;
  std::map<std::string, std::vector<Update>> updates_;
};

class ConcurrencyModelTest : public ::testing::TestWithParam<StorageMode> {
 protected:
  Options ModelOptions() const {
    Options options = test::SmallModeOptions(GetParam());
    options.memtable_size = 64 << 10;  // many memtable switches, flushes and compactions
    return options;
  }

  // One writer's batches: 1-4 of its keys set (or some deleted) to values
  // carrying the batch number, and its clock key set to that number.
  void Write(DB* db, int writer, uint64_t first, uint64_t last, std::atomic<bool>* failed) {
    std::mt19937 rng(static_cast<uint32_t>(writer * 7919 + first));
    for (uint64_t clock = first; clock <= last && !*failed; ++clock) {
      WriteBatch batch;
      const int n = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < n; ++i) {
        const std::string key = Key(writer, static_cast<int>(rng() % kKeysPerWriter));
        if (rng() % 5 == 0) {
          batch.Delete(key);
          history_[writer].Record(clock, key, std::nullopt);
        } else {
          // Sizes from a few bytes to 2 KiB: blocks of mixed entries.
          std::string value = std::to_string(clock) + ":" + key + ":";
          value.append(rng() % 8 == 0 ? 2000 : rng() % 120, static_cast<char>('a' + clock % 26));
          batch.Put(key, value);
          history_[writer].Record(clock, key, value);
        }
      }
      const std::string clock_value = std::to_string(clock);
      batch.Put(ClockKey(writer), clock_value);
      history_[writer].Record(clock, ClockKey(writer), clock_value);
      WriteOptions options;
      options.sync = rng() % 64 == 0;
      Status s = db->Write(options, &batch);
      if (!s.ok()) {
        ADD_FAILURE() << "writer " << writer << " batch " << clock << ": " << s.ToString();
        *failed = true;
      }
    }
  }

  // Compares a view's contents (every key it shows) with the history, for
  // each writer at the clock the view shows. Returns "" or what differs.
  std::string CheckView(const std::map<std::string, std::string>& seen, const std::string& how) const {
    for (int w = 0; w < kWriters; ++w) {
      auto clock_entry = seen.find(ClockKey(w));
      const uint64_t clock = clock_entry == seen.end() ? 0 : std::stoull(clock_entry->second);
      std::map<std::string, std::string> expected = history_[w].StateAt(clock);
      std::map<std::string, std::string> actual;
      for (const auto& [key, value] : seen) {
        if (WriterOf(key) == w) actual.emplace(key, value);
      }
      if (actual != expected) {
        std::string diff;
        for (const auto& [key, value] : expected) {
          auto a = actual.find(key);
          if (a == actual.end()) diff += " missing " + key;
          else if (a->second != value) diff += " " + key + "=" + a->second.substr(0, 20) + " not " + value.substr(0, 20);
        }
        for (const auto& [key, value] : actual) {
          if (expected.count(key) == 0) diff += " extra " + key + "=" + value.substr(0, 20);
        }
        return how + ": writer " + std::to_string(w) + " at clock " + std::to_string(clock) + ":" + diff;
      }
    }
    return "";
  }

  // The whole database through an iterator, forward or backward.
  static std::string Scan(Iterator* it, bool reverse, std::map<std::string, std::string>* seen) {
    std::string previous;
    if (reverse) {
      for (it->SeekToLast(); it->Valid(); it->Prev()) {
        const std::string key = it->key().ToString();
        if (!previous.empty() && key >= previous) return "reverse scan out of order: " + key + " after " + previous;
        previous = key;
        (*seen)[key] = it->value().ToString();
      }
    } else {
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        const std::string key = it->key().ToString();
        if (!previous.empty() && key <= previous) return "scan out of order: " + key + " after " + previous;
        previous = key;
        (*seen)[key] = it->value().ToString();
      }
    }
    return it->status().ok() ? "" : "scan status " + it->status().ToString();
  }

  // One reader's checks until `stop`: returns "" or the first failure.
  std::string Read(DB* db, int reader, const std::atomic<bool>& stop) const {
    std::mt19937 rng(static_cast<uint32_t>(reader + 1));
    // An iterator held across many checks, and what it showed first.
    std::unique_ptr<Iterator> held;
    std::map<std::string, std::string> held_seen;
    int held_age = 0;
    for (uint64_t round = 0; !stop; ++round) {
      switch (rng() % 4) {
        case 0: {  // point reads at a snapshot: Get and MultiGet
          const Snapshot* snapshot = db->GetSnapshot();
          ReadOptions at;
          at.snapshot = snapshot;
          std::vector<std::string> keys;
          for (int w = 0; w < kWriters; ++w) {
            keys.push_back(ClockKey(w));
            for (int k = 0; k < kKeysPerWriter; ++k) keys.push_back(Key(w, k));
          }
          std::map<std::string, std::string> by_get;
          for (const std::string& key : keys) {
            std::string value;
            Status s = db->Get(at, key, &value);
            if (s.ok()) by_get[key] = value;
            else if (!s.IsNotFound()) return "Get " + key + ": " + s.ToString();
          }
          std::vector<Slice> slices(keys.begin(), keys.end());
          std::vector<std::string> values;
          std::vector<Status> statuses = db->MultiGet(at, slices, &values);
          std::map<std::string, std::string> by_multiget;
          for (size_t i = 0; i < keys.size(); ++i) {
            if (statuses[i].ok()) by_multiget[keys[i]] = values[i];
            else if (!statuses[i].IsNotFound()) return "MultiGet " + keys[i] + ": " + statuses[i].ToString();
          }
          db->ReleaseSnapshot(snapshot);
          std::string failure = CheckView(by_get, "Get at a snapshot");
          if (failure.empty() && by_multiget != by_get) failure = "MultiGet and Get disagree at one snapshot";
          if (!failure.empty()) return failure;
          break;
        }
        case 1:
        case 2: {  // a scan, forward or backward, of the iterator's implicit snapshot
          auto it = db->NewIterator(ReadOptions());
          std::map<std::string, std::string> seen;
          std::string failure = Scan(it.get(), round % 2 == 1, &seen);
          if (failure.empty()) failure = CheckView(seen, round % 2 == 1 ? "reverse scan" : "scan");
          if (!failure.empty()) return failure;
          break;
        }
        case 3: {  // the held iterator: scanned again, it shows what it showed first
          if (held == nullptr || held_age > 40) {
            held = db->NewIterator(ReadOptions());
            held_seen.clear();
            std::string failure = Scan(held.get(), false, &held_seen);
            if (failure.empty()) failure = CheckView(held_seen, "held iterator");
            if (!failure.empty()) return failure;
            held_age = 0;
          } else {
            std::map<std::string, std::string> again;
            std::string failure = Scan(held.get(), held_age % 2 == 1, &again);
            if (!failure.empty()) return "held iterator: " + failure;
            if (again != held_seen) return "a held iterator changed its contents";
          }
          ++held_age;
          break;
        }
      }
    }
    return "";
  }

  WriterHistory history_[kWriters];
};

TEST_P(ConcurrencyModelTest, EveryViewIsAPrefixOfTheAcknowledgedHistory) {
  const int batches = EnvInt("JIGSAW_MODEL_BATCHES", 3000);
  const int rounds = EnvInt("JIGSAW_MODEL_ROUNDS", 2);
  test::ScratchDir dir;
  const Options options = ModelOptions();
  uint64_t written = 0;
  for (int round = 0; round < rounds; ++round) {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok()) << "round " << round;
    // After a reopen the database holds exactly every acknowledged batch.
    {
      auto it = db->NewIterator(ReadOptions());
      std::map<std::string, std::string> seen;
      std::string failure = Scan(it.get(), false, &seen);
      if (failure.empty()) failure = CheckView(seen, "after reopen");
      ASSERT_EQ(failure, "");
      for (int w = 0; w < kWriters && round > 0; ++w) {
        ASSERT_EQ(seen[ClockKey(w)], std::to_string(written)) << "writer " << w << " lost batches";
      }
    }
    std::atomic<bool> failed{false};
    std::atomic<bool> stop{false};
    std::vector<std::thread> writers;
    for (int w = 0; w < kWriters; ++w) {
      writers.emplace_back([&, w] { Write(db.get(), w, written + 1, written + batches, &failed); });
    }
    std::string failures[2];
    std::vector<std::thread> readers;
    for (int r = 0; r < 2; ++r) {
      readers.emplace_back([&, r] {
        failures[r] = Read(db.get(), r, stop);
        if (!failures[r].empty()) failed = true;
      });
    }
    // Manual compactions beside the background ones.
    std::thread compactor([&] {
      std::mt19937 rng(static_cast<uint32_t>(round));
      while (!stop && !failed) {
        const std::string begin = Key(rng() % kWriters, static_cast<int>(rng() % kKeysPerWriter));
        const std::string end = Key(rng() % kWriters, static_cast<int>(rng() % kKeysPerWriter));
        const Slice b(begin), e(end);
        Status s = db->CompactRange(begin < end ? &b : &e, begin < end ? &e : &b);
        if (!s.ok()) {
          ADD_FAILURE() << "CompactRange: " << s.ToString();
          failed = true;
        }
        for (int i = 0; i < 50 && !stop; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
    for (auto& t : writers) t.join();
    stop = true;
    for (auto& t : readers) t.join();
    compactor.join();
    for (const std::string& f : failures) EXPECT_EQ(f, "");
    ASSERT_FALSE(failed) << "round " << round;
    written += batches;
    std::string flushes;
    ASSERT_TRUE(db->GetProperty("jigsaw.flushes", &flushes));
    EXPECT_GT(std::stoull(flushes), 0u) << "no memtable was flushed in round " << round;
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, ConcurrencyModelTest,
                         ::testing::Values(StorageMode::kPmem, StorageMode::kHybrid, StorageMode::kDisk),
                         test::ModeName);

}  // namespace
}  // namespace jigsaw
