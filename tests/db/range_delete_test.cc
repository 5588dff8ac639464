// DB::DeleteRange and WriteBatch::DeleteRange in every storage mode:
// readers (Get, MultiGet, iterators both ways) stop seeing the range,
// snapshots taken before keep seeing it, the tombstone survives flushes,
// reopening and compactions, compactions drop what it deletes and then the
// tombstone itself, and a kill at any instant loses no acknowledged range
// delete and brings back no deleted key.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "jigsaw/db.h"
#include "jigsaw/table_file_writer.h"
#include "jigsaw/transaction_log.h"
#include "tests/support/db_test_util.h"

namespace jigsaw {
namespace {

using test::Contents;
using test::NumberedKey;

// What a reader of `model` would see: the pairs in [begin, end) removed.
void EraseRange(std::map<std::string, std::string>* model, const std::string& begin, const std::string& end) {
  model->erase(model->lower_bound(begin), model->lower_bound(end));
}

// The pairs of `db` read backwards.
std::map<std::string, std::string> ContentsBackwards(DB* db, const ReadOptions& options = ReadOptions()) {
  std::map<std::string, std::string> contents;
  std::unique_ptr<Iterator> it = db->NewIterator(options);
  for (it->SeekToLast(); it->Valid(); it->Prev()) contents[it->key().ToString()] = it->value().ToString();
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return contents;
}

std::map<std::string, std::string> ContentsAt(DB* db, const Snapshot* snapshot) {
  ReadOptions options;
  options.snapshot = snapshot;
  std::map<std::string, std::string> contents;
  std::unique_ptr<Iterator> it = db->NewIterator(options);
  for (it->SeekToFirst(); it->Valid(); it->Next()) contents[it->key().ToString()] = it->value().ToString();
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return contents;
}

uint64_t RangeTombstones(DB* db) {
  std::string n;
  EXPECT_TRUE(db->GetProperty("jigsaw.num-range-tombstones", &n));
  return std::stoull(n);
}

uint64_t TableBytes(DB* db) {
  std::string pmem, ssd;
  EXPECT_TRUE(db->GetProperty("jigsaw.pmem-bytes", &pmem));
  EXPECT_TRUE(db->GetProperty("jigsaw.ssd-bytes", &ssd));
  return std::stoull(pmem) + std::stoull(ssd);
}

// The rounds workload: round r writes keys [r * kPerRound, (r + 1) *
// kPerRound) in order, then (from round 2) range-deletes every key below
// round r - 1. Any state it passes through -- a prefix of its writes --
// holds: no round older than the one before last; the one before last
// whole or gone; the last whole; the newest (`last`) a prefix of its keys.
constexpr uint64_t kPerRound = 200;

Status WriteRounds(DB* db, const std::atomic<bool>* stop) {
  for (uint64_t round = 0; stop == nullptr || !stop->load(); ++round) {
    for (uint64_t i = 0; i < kPerRound; ++i) {
      Status s = db->Put(WriteOptions(), NumberedKey(round * kPerRound + i), std::string(100, 'r'));
      if (!s.ok()) return s;
    }
    if (round >= 2) {
      Status s = db->DeleteRange(WriteOptions(), NumberedKey(0), NumberedKey((round - 1) * kPerRound));
      if (!s.ok()) return s;
    }
  }
  return Status::OK();
}

// "" if `contents` is a state the rounds workload passes through, else
// what is wrong.
std::string CheckRounds(const std::map<std::string, std::string>& contents) {
  if (contents.empty()) return "";
  std::map<uint64_t, uint64_t> per_round;
  for (const auto& [key, value] : contents) per_round[std::stoull(key.substr(3)) / kPerRound]++;
  const uint64_t last = per_round.rbegin()->first;
  for (const auto& [round, n] : per_round) {
    const std::string where = "round " + std::to_string(round) + " of " + std::to_string(last) + ": ";
    if (round + 2 < last) return where + "deleted, yet " + std::to_string(n) + " keys are back";
    if (round < last && n != kPerRound) return where + std::to_string(n) + " keys, not all";
  }
  const uint64_t n = per_round[last];
  for (uint64_t i = 0; i < n; ++i) {
    if (contents.count(NumberedKey(last * kPerRound + i)) == 0) return "the newest round is not a prefix";
  }
  return "";
}

class RangeDeleteTest : public ::testing::TestWithParam<StorageMode> {
 protected:
  Options DbOptions() const { return test::SmallModeOptions(GetParam()); }
  void Open() {
    db_.reset();
    Status s = DB::Open(DbOptions(), dir_.path(), &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // Every way of reading agrees with `model`: a forward and a backward
  // scan, a Get and a MultiGet of every key in [0, n).
  void ExpectReads(const std::map<std::string, std::string>& model, uint64_t n, const std::string& where) {
    ASSERT_EQ(Contents(db_.get()), model) << where;
    ASSERT_EQ(ContentsBackwards(db_.get()), model) << where;
    std::vector<std::string> keys;
    for (uint64_t i = 0; i < n; ++i) keys.push_back(NumberedKey(i));
    std::vector<Slice> slices(keys.begin(), keys.end());
    std::vector<std::string> values;
    const std::vector<Status> statuses = db_->MultiGet(ReadOptions(), slices, &values);
    for (uint64_t i = 0; i < n; ++i) {
      auto it = model.find(keys[i]);
      std::string value;
      Status s = db_->Get(ReadOptions(), keys[i], &value);
      if (it == model.end()) {
        ASSERT_TRUE(s.IsNotFound()) << where << ": " << keys[i] << " " << s.ToString();
        ASSERT_TRUE(statuses[i].IsNotFound()) << where << ": " << keys[i];
      } else {
        ASSERT_TRUE(s.ok()) << where << ": " << keys[i] << " " << s.ToString();
        ASSERT_EQ(value, it->second) << where << ": " << keys[i];
        ASSERT_TRUE(statuses[i].ok()) << where << ": " << keys[i];
        ASSERT_EQ(values[i], it->second) << where << ": " << keys[i];
      }
    }
  }

  test::ScratchDir dir_;
  std::unique_ptr<DB> db_;
};

TEST_P(RangeDeleteTest, ReadersStopSeeingTheRangeAndSnapshotsKeepIt) {
  Open();
  std::map<std::string, std::string> model;
  for (uint64_t i = 0; i < 1000; ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), NumberedKey(i), test::NumberedValue(i)).ok());
    model[NumberedKey(i)] = test::NumberedValue(i);
  }
  const Snapshot* before = db_->GetSnapshot();
  const std::map<std::string, std::string> old = model;
  const uint64_t sequence = db_->GetLatestSequenceNumber();
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), NumberedKey(100), NumberedKey(200)).ok());
  EXPECT_EQ(db_->GetLatestSequenceNumber(), sequence + 1);
  EraseRange(&model, NumberedKey(100), NumberedKey(200));
  ExpectReads(model, 1000, "in the memtable");
  // Written after the delete: seen.
  ASSERT_TRUE(db_->Put(WriteOptions(), NumberedKey(150), "new").ok());
  model[NumberedKey(150)] = "new";
  ExpectReads(model, 1000, "a key written again");
  EXPECT_EQ(ContentsAt(db_.get(), before), old);
  // Seeks land past the range.
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
  it->Seek(NumberedKey(100));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), NumberedKey(150));
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), NumberedKey(200));
  it->Prev();
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), NumberedKey(99));
  it.reset();
  EXPECT_EQ(RangeTombstones(db_.get()), 1u);
  db_->ReleaseSnapshot(before);
}

TEST_P(RangeDeleteTest, TheTombstoneLastsThroughFlushesReopensAndCompactions) {
  Open();
  std::map<std::string, std::string> model;
  for (uint64_t i = 0; i < 4000; ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), NumberedKey(i), test::NumberedValue(i)).ok());
    model[NumberedKey(i)] = test::NumberedValue(i);
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());  // the keys in the last level
  for (uint64_t i = 0; i < 4000; i += 3) {  // some in upper levels and the memtable
    ASSERT_TRUE(db_->Put(WriteOptions(), NumberedKey(i), "v2").ok());
    model[NumberedKey(i)] = "v2";
  }
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), NumberedKey(500), NumberedKey(2500)).ok());
  EraseRange(&model, NumberedKey(500), NumberedKey(2500));
  for (uint64_t i = 2000; i < 2100; ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), NumberedKey(i), "v3").ok());
    model[NumberedKey(i)] = "v3";
  }
  ExpectReads(model, 4000, "before any flush");
  Open();  // from the WAL
  ExpectReads(model, 4000, "reopened");
  // Flushed and reopened: from the manifest.
  for (uint64_t i = 0; i < 3000; ++i) ASSERT_TRUE(db_->Put(WriteOptions(), "z" + NumberedKey(i), "fill").ok());
  for (uint64_t i = 0; i < 3000; ++i) model["z" + NumberedKey(i)] = "fill";
  Open();
  ExpectReads(model, 4000, "flushed and reopened");
  const uint64_t bytes_before = TableBytes(db_.get());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ExpectReads(model, 4000, "compacted");
  // The deleted versions are gone from the tables, and with them the
  // tombstone.
  EXPECT_EQ(RangeTombstones(db_.get()), 0u);
  EXPECT_LT(TableBytes(db_.get()), bytes_before);
  EXPECT_TRUE(db_->VerifyIntegrity().ok());
  Open();
  ExpectReads(model, 4000, "compacted and reopened");
  EXPECT_EQ(RangeTombstones(db_.get()), 0u);
}

// The last level rewritten under tombstones takes the tables between the
// ones the tombstones overlap too: its outputs span from the first to the
// last, and a table left between would overlap them (found by
// jigsaw_stress: scans and MultiGets then missed keys of that table).
TEST_P(RangeDeleteTest, TheLastLevelStaysDisjointWhenTombstonesSkipATable) {
  Open();
  std::map<std::string, std::string> model;
  // Three groups of keys, each compacted alone: three runs of tables in the
  // last level, the middle one overlapping no tombstone.
  for (uint64_t group = 0; group < 3; ++group) {
    for (uint64_t i = group * 1000; i < group * 1000 + 1000; ++i) {
      ASSERT_TRUE(db_->Put(WriteOptions(), NumberedKey(i), test::NumberedValue(i)).ok());
      model[NumberedKey(i)] = test::NumberedValue(i);
    }
    ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  }
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), NumberedKey(100), NumberedKey(200)).ok());
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), NumberedKey(2100), NumberedKey(2200)).ok());
  EraseRange(&model, NumberedKey(100), NumberedKey(200));
  EraseRange(&model, NumberedKey(2100), NumberedKey(2200));
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  const Status verified = db_->VerifyIntegrity();  // the levels' shape among what it checks
  EXPECT_TRUE(verified.ok()) << verified.ToString();
  ExpectReads(model, 3000, "compacted");
  Open();
  ExpectReads(model, 3000, "reopened");
}

TEST_P(RangeDeleteTest, ASnapshotKeepsTheDeletedVersionsThroughCompactions) {
  Open();
  for (uint64_t i = 0; i < 2000; ++i) ASSERT_TRUE(db_->Put(WriteOptions(), NumberedKey(i), "v").ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  const Snapshot* before = db_->GetSnapshot();
  const std::map<std::string, std::string> old = Contents(db_.get());
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), NumberedKey(0), NumberedKey(1500)).ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(ContentsAt(db_.get(), before), old);
  EXPECT_EQ(Contents(db_.get()).size(), 500u);
  EXPECT_EQ(RangeTombstones(db_.get()), 1u);
  db_->ReleaseSnapshot(before);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(Contents(db_.get()).size(), 500u);
  EXPECT_EQ(RangeTombstones(db_.get()), 0u);
}

TEST_P(RangeDeleteTest, InABatchItDeletesOnlyWhatCameBefore) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "a", "1").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), "c", "1").ok());
  WriteBatch batch;
  batch.Put("b", "1");
  batch.DeleteRange("a", "c");
  batch.Put("bb", "2");
  EXPECT_EQ(batch.Count(), 3u);
  ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
  std::map<std::string, std::string> want{{"bb", "2"}, {"c", "1"}};
  EXPECT_EQ(Contents(db_.get()), want);
  // begin == end deletes nothing; begin after end is refused, whole batch.
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), "c", "c").ok());
  EXPECT_EQ(Contents(db_.get()), want);
  WriteBatch bad;
  bad.Put("d", "1");
  bad.DeleteRange("z", "a");
  EXPECT_TRUE(db_->Write(WriteOptions(), &bad).IsInvalidArgument());
  EXPECT_TRUE(db_->DeleteRange(WriteOptions(), "z", "a").IsInvalidArgument());
  EXPECT_EQ(Contents(db_.get()), want);
  // An empty begin key: from the first key on.
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), "", "c").ok());
  EXPECT_EQ(Contents(db_.get()), (std::map<std::string, std::string>{{"c", "1"}}));
}

TEST(RangeDeleteBatchTest, AHandlerThatDoesNotTakeRangeDeletesStopsThere) {
  struct PointsOnly : WriteBatch::Handler {
    void Put(const Slice& key, const Slice&) override { seen.push_back("put " + key.ToString()); }
    void Delete(const Slice& key) override { seen.push_back("delete " + key.ToString()); }
    std::vector<std::string> seen;
  };
  struct All : PointsOnly {
    Status DeleteRange(const Slice& begin, const Slice& end) override {
      seen.push_back("range " + begin.ToString() + " " + end.ToString());
      return Status::OK();
    }
  };
  WriteBatch batch;
  batch.Put("a", "1");
  batch.DeleteRange("b", "d");
  batch.Delete("e");
  PointsOnly points;
  EXPECT_TRUE(batch.Iterate(&points).IsNotSupported());
  EXPECT_EQ(points.seen, (std::vector<std::string>{"put a"}));
  All all;
  ASSERT_TRUE(batch.Iterate(&all).ok());
  EXPECT_EQ(all.seen, (std::vector<std::string>{"put a", "range b d", "delete e"}));
}

// Random puts, deletes and range deletes, with flushes, compactions,
// snapshots and reopens among them, read back against a model.
TEST_P(RangeDeleteTest, RandomWorkloadsMatchAModel) {
  Open();
  std::mt19937_64 rng(GetParam() == StorageMode::kPmem ? 1 : GetParam() == StorageMode::kHybrid ? 2 : 3);
  constexpr uint64_t kKeys = 3000;
  std::map<std::string, std::string> model;
  std::vector<std::pair<const Snapshot*, std::map<std::string, std::string>>> snapshots;
  for (int round = 0; round < 12; ++round) {
    for (int op = 0; op < 2500; ++op) {
      const uint64_t r = rng() % 100;
      const uint64_t k = rng() % kKeys;
      if (r < 80) {
        const std::string value = std::to_string(round) + "-" + std::to_string(op) + std::string(rng() % 200, 'v');
        ASSERT_TRUE(db_->Put(WriteOptions(), NumberedKey(k), value).ok());
        model[NumberedKey(k)] = value;
      } else if (r < 95) {
        ASSERT_TRUE(db_->Delete(WriteOptions(), NumberedKey(k)).ok());
        model.erase(NumberedKey(k));
      } else {
        const uint64_t end = std::min(kKeys, k + 1 + rng() % 300);
        ASSERT_TRUE(db_->DeleteRange(WriteOptions(), NumberedKey(k), NumberedKey(end)).ok());
        EraseRange(&model, NumberedKey(k), NumberedKey(end));
      }
    }
    const std::string where = "round " + std::to_string(round);
    ExpectReads(model, kKeys, where);
    switch (round % 4) {
      case 0:
        snapshots.emplace_back(db_->GetSnapshot(), model);
        break;
      case 1:
        ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
        ExpectReads(model, kKeys, where + ", compacted");
        break;
      case 2: {
        const uint64_t k = rng() % kKeys;
        const std::string begin = NumberedKey(k), end = NumberedKey(std::min(kKeys, k + 500));
        const Slice begin_slice(begin), end_slice(end);
        ASSERT_TRUE(db_->CompactRange(&begin_slice, &end_slice).ok());
        ExpectReads(model, kKeys, where + ", part compacted");
        break;
      }
      default:
        for (auto& [snapshot, contents] : snapshots) {
          ASSERT_EQ(ContentsAt(db_.get(), snapshot), contents) << where;
          db_->ReleaseSnapshot(snapshot);
        }
        snapshots.clear();
        Open();
        ExpectReads(model, kKeys, where + ", reopened");
        break;
    }
  }
  for (auto& [snapshot, contents] : snapshots) {
    EXPECT_EQ(ContentsAt(db_.get(), snapshot), contents);
    db_->ReleaseSnapshot(snapshot);
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ExpectReads(model, kKeys, "the end");
  EXPECT_EQ(RangeTombstones(db_.get()), 0u);
  EXPECT_TRUE(db_->VerifyIntegrity().ok());
}

// A checkpoint holds the tombstones of the memtables and of the version;
// a read-only open of a disk-mode database sees them too.
TEST_P(RangeDeleteTest, CheckpointsAndReadOnlyOpensSeeTheTombstones) {
  Open();
  for (uint64_t i = 0; i < 3000; ++i) ASSERT_TRUE(db_->Put(WriteOptions(), NumberedKey(i), "v").ok());
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), NumberedKey(10), NumberedKey(20)).ok());
  Open();  // the first one flushed into the version
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), NumberedKey(30), NumberedKey(40)).ok());  // in the memtable
  const std::map<std::string, std::string> model = Contents(db_.get());
  ASSERT_EQ(model.size(), 2980u);
  test::ScratchDir copies;
  const std::string checkpoint = copies.path() + "/checkpoint";
  Status s = db_->CreateCheckpoint(checkpoint, nullptr);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::unique_ptr<DB> copy;
  ASSERT_TRUE(DB::OpenForReadOnly(test::SmallModeOptions(StorageMode::kDisk), checkpoint, &copy).ok());
  EXPECT_EQ(Contents(copy.get()), model);
  copy.reset();
  ASSERT_TRUE(DB::Open(test::SmallModeOptions(StorageMode::kDisk), checkpoint, &copy).ok());
  EXPECT_EQ(Contents(copy.get()), model);
  if (GetParam() == StorageMode::kDisk) {
    std::unique_ptr<DB> reader;
    ASSERT_TRUE(DB::OpenForReadOnly(DbOptions(), dir_.path(), &reader).ok());
    EXPECT_EQ(Contents(reader.get()), model);
  }
}

// Files ingested under a range tombstone are newer than it: they are seen.
TEST_P(RangeDeleteTest, AFileIngestedUnderATombstoneIsSeen) {
  Open();
  for (uint64_t i = 0; i < 1000; ++i) ASSERT_TRUE(db_->Put(WriteOptions(), NumberedKey(i), "old").ok());
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), NumberedKey(0), NumberedKey(5000)).ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), NumberedKey(2000), NumberedKey(5000)).ok());  // over no key
  test::ScratchDir files;
  TableFileWriter writer(DbOptions());
  ASSERT_TRUE(writer.Open(files.path() + "/f.jst").ok());
  for (uint64_t i = 2500; i < 3000; ++i) ASSERT_TRUE(writer.Put(NumberedKey(i), "ingested").ok());
  ASSERT_TRUE(writer.Finish().ok());
  Status s = db_->IngestExternalFile({files.path() + "/f.jst"}, IngestExternalFileOptions());
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::map<std::string, std::string> model;
  for (uint64_t i = 2500; i < 3000; ++i) model[NumberedKey(i)] = "ingested";
  EXPECT_EQ(Contents(db_.get()), model);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(Contents(db_.get()), model);
  Open();
  EXPECT_EQ(Contents(db_.get()), model);
}

// The change feed carries range deletes; a follower applying it ends equal.
TEST_P(RangeDeleteTest, TheChangeFeedCarriesThemToAFollower) {
  Options options = DbOptions();
  options.wal_ttl_seconds = 3600;
  db_.reset();
  ASSERT_TRUE(DB::Open(options, dir_.path(), &db_).ok());
  for (uint64_t i = 0; i < 3000; ++i) ASSERT_TRUE(db_->Put(WriteOptions(), NumberedKey(i), "v").ok());
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), NumberedKey(100), NumberedKey(900)).ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ASSERT_TRUE(db_->DeleteRange(WriteOptions(), NumberedKey(2000), NumberedKey(2100)).ok());
  test::ScratchDir follower_dir;
  std::unique_ptr<DB> follower;
  ASSERT_TRUE(DB::Open(test::SmallModeOptions(StorageMode::kDisk), follower_dir.path(), &follower).ok());
  std::unique_ptr<TransactionLogIterator> feed;
  Status s = db_->GetUpdatesSince(1, &feed);
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (; feed->Valid(); feed->Next()) {
    BatchResult batch = feed->GetBatch();
    ASSERT_TRUE(follower->Write(WriteOptions(), &batch.batch).ok());
  }
  ASSERT_TRUE(feed->status().ok()) << feed->status().ToString();
  EXPECT_EQ(Contents(follower.get()), Contents(db_.get()));
  EXPECT_EQ(Contents(follower.get()).size(), 3000u - 800 - 100);
}

// A process running the rounds workload while a thread compacts is killed
// at random instants: after reopening, the database holds a state the
// workload passed through -- no deleted key back, no acknowledged write
// lost.
TEST_P(RangeDeleteTest, AKillLosesNoRangeDeleteAndBringsNoKeyBack) {
  std::mt19937_64 rng(7 + static_cast<int>(GetParam()));
  for (int kill = 0; kill < 5; ++kill) {
    test::ScratchDir dir;
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      std::unique_ptr<DB> db;
      if (!DB::Open(DbOptions(), dir.path(), &db).ok()) _exit(2);
      // A pool the workload filled before the kill (a loaded machine runs
      // its compactions late) waits for the kill: what is on media is
      // checked all the same.
      std::thread compactor([&] {
        for (;;) {
          const Status s = db->CompactRange(nullptr, nullptr);
          if (s.IsNoSpace()) pause();
          if (!s.ok()) _exit(4);
        }
      });
      const Status written = WriteRounds(db.get(), nullptr);  // returns only on an error
      if (written.IsNoSpace()) pause();
      std::fprintf(stderr, "the workload failed: %s\n", written.ToString().c_str());
      _exit(3);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100 + rng() % 700));
    ::kill(pid, SIGKILL);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the child exited with " << WEXITSTATUS(status);
    std::unique_ptr<DB> db;
    Status s;
    for (int attempt = 0; attempt < 20; ++attempt) {  // the killed writer's lock may outlive it briefly
      s = DB::Open(DbOptions(), dir.path(), &db);
      if (s.ok() || s.ToString().find("LOCK") == std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(db->VerifyIntegrity().ok());
    EXPECT_EQ(CheckRounds(Contents(db.get())), "") << "kill " << kill;
  }
}

// Readers beside the rounds workload and a thread compacting: every
// iterator and every snapshot sees a state the workload passed through.
TEST_P(RangeDeleteTest, ConcurrentReadersSeeOnlyStatesTheWritesPassedThrough) {
  Open();
  std::atomic<bool> stop{false};
  Status written;
  std::thread writer([&] { written = WriteRounds(db_.get(), &stop); });
  std::thread compactor([&] {
    while (!stop.load()) EXPECT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  });
  std::vector<std::string> errors;
  std::mutex errors_mutex;
  std::vector<std::thread> readers;
  for (int r = 0; r < 2; ++r) {
    readers.emplace_back([&, r] {
      // At least 40 reads, and on until the writer is 300 rounds in
      // (flushes, compactions and spent tombstones under the readers).
      for (int i = 0; i < 40 || db_->GetLatestSequenceNumber() < 300 * (kPerRound + 1); ++i) {
        std::string error;
        if (r == 0) {
          error = CheckRounds(Contents(db_.get()));
        } else {
          const Snapshot* snapshot = db_->GetSnapshot();
          const std::map<std::string, std::string> seen = ContentsAt(db_.get(), snapshot);
          error = CheckRounds(seen);
          if (error.empty() && ContentsAt(db_.get(), snapshot) != seen) error = "a snapshot's view changed";
          db_->ReleaseSnapshot(snapshot);
        }
        if (!error.empty()) {
          std::lock_guard<std::mutex> lock(errors_mutex);
          errors.push_back(error);
        }
      }
    });
  }
  for (std::thread& t : readers) t.join();
  stop = true;
  writer.join();
  compactor.join();
  EXPECT_TRUE(written.ok()) << written.ToString();
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(CheckRounds(Contents(db_.get())), "");
}

INSTANTIATE_TEST_SUITE_P(Modes, RangeDeleteTest,
                         ::testing::Values(StorageMode::kPmem, StorageMode::kHybrid, StorageMode::kDisk),
                         test::ModeName);

}  // namespace
}  // namespace jigsaw
