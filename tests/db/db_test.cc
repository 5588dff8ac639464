// The DB API end to end on DRAM-emulated pmem: every call, against a model.
#include "jigsaw/db.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "jigsaw/logger.h"
#include "tests/support/db_test_util.h"

namespace jigsaw {
namespace {

using test::ScratchDir;
using test::SmallOptions;

// Every DBTest runs in each storage mode: one harness, the same checks.
class DBTest : public ::testing::TestWithParam<StorageMode> {
 protected:
  // SmallOptions in this test's mode. Hybrid gets a pmem budget below L1's
  // target, so that L1 and deeper are SSD tables.
  Options ModeOptions() const {
    Options options = SmallOptions();
    options.storage_mode = GetParam();
    if (GetParam() == StorageMode::kHybrid) options.pmem_budget = 2 << 20;
    return options;
  }
  void Open() { Open(ModeOptions()); }
  void Open(const Options& options) {
    db_.reset();
    Status s = DB::Open(options, dir_.path(), &db_);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  std::string Get(const std::string& key, const Snapshot* snapshot = nullptr) {
    ReadOptions options;
    options.snapshot = snapshot;
    std::string value;
    Status s = db_->Get(options, key, &value);
    if (s.IsNotFound()) return "NOT_FOUND";
    if (!s.ok()) return s.ToString();
    return value;
  }
  // All live key/value pairs, forwards, checked against a backwards scan.
  std::map<std::string, std::string> Contents(const Snapshot* snapshot = nullptr) {
    ReadOptions options;
    options.snapshot = snapshot;
    auto it = db_->NewIterator(options);
    std::map<std::string, std::string> forward;
    for (it->SeekToFirst(); it->Valid(); it->Next()) forward[it->key().ToString()] = it->value().ToString();
    EXPECT_TRUE(it->status().ok()) << it->status().ToString();
    std::map<std::string, std::string> backward;
    for (it->SeekToLast(); it->Valid(); it->Prev()) backward[it->key().ToString()] = it->value().ToString();
    EXPECT_EQ(forward, backward);
    return forward;
  }

  // n random puts and deletes (one in delete_one_in) of keys k00000 ..
  // k02999, applied to *model as well.
  void WriteRandomly(int n, int delete_one_in, std::mt19937_64* rng, std::map<std::string, std::string>* model) {
    char key[16];
    for (int i = 0; i < n; ++i) {
      std::snprintf(key, sizeof(key), "k%05d", static_cast<int>((*rng)() % 3000));
      if ((*rng)() % delete_one_in == 0) {
        ASSERT_TRUE(db_->Delete(WriteOptions(), key).ok());
        model->erase(key);
      } else {
        const std::string value(10 + (*rng)() % 90, static_cast<char>('a' + (*rng)() % 26));
        ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
        (*model)[key] = value;
      }
    }
  }

  ScratchDir dir_;
  std::unique_ptr<DB> db_;
};

TEST_P(DBTest, PutGetDelete) {
  Open();
  WriteOptions w;
  ASSERT_TRUE(db_->Put(w, "apple", "red").ok());
  ASSERT_TRUE(db_->Put(w, "banana", "yellow").ok());
  EXPECT_EQ(Get("apple"), "red");
  ASSERT_TRUE(db_->Put(w, "apple", "green").ok());
  EXPECT_EQ(Get("apple"), "green");
  ASSERT_TRUE(db_->Delete(w, "apple").ok());
  EXPECT_EQ(Get("apple"), "NOT_FOUND");
  EXPECT_EQ(Get("banana"), "yellow");
  EXPECT_EQ(Get("cherry"), "NOT_FOUND");
  ASSERT_TRUE(db_->Put(w, "", "empty key").ok());
  EXPECT_EQ(Get(""), "empty key");
  ASSERT_TRUE(db_->Put(w, "empty value", "").ok());
  EXPECT_EQ(Get("empty value"), "");
}

TEST_P(DBTest, WriteBatchIsAtomicAndOrdered) {
  Open();
  WriteBatch batch;
  batch.Put("a", "1");
  batch.Put("b", "2");
  batch.Delete("a");
  batch.Put("c", "3");
  EXPECT_EQ(batch.Count(), 4u);
  ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
  EXPECT_EQ(Get("a"), "NOT_FOUND");
  EXPECT_EQ(Get("b"), "2");
  EXPECT_EQ(Get("c"), "3");
  WriteBatch empty;
  EXPECT_TRUE(db_->Write(WriteOptions(), &empty).ok());
}

TEST_P(DBTest, RandomOperationsMatchModelAcrossFlushesCompactionsAndReopens) {
  Open();
  std::mt19937_64 rng(17);
  std::map<std::string, std::string> model;
  for (int round = 0; round < 4; ++round) {
    for (int i = 0; i < 6000; ++i) {
      const std::string key = "key" + std::to_string(rng() % 3000);
      if (rng() % 5 == 0) {
        ASSERT_TRUE(db_->Delete(WriteOptions(), key).ok());
        model.erase(key);
      } else {
        const std::string value = std::string(rng() % 200, static_cast<char>('a' + rng() % 26));
        ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
        model[key] = value;
      }
    }
    for (int i = 0; i < 300; ++i) {
      const std::string key = "key" + std::to_string(rng() % 3100);
      auto it = model.find(key);
      ASSERT_EQ(Get(key), it == model.end() ? "NOT_FOUND" : it->second) << key;
    }
    ASSERT_EQ(Contents(), model);
    Status integrity = db_->VerifyIntegrity();
    ASSERT_TRUE(integrity.ok()) << integrity.ToString();
    if (round % 2 == 1) Open();  // reopen: WAL replay + blocks
  }
  std::string flushes;
  ASSERT_TRUE(db_->GetProperty("jigsaw.flushes", &flushes));
  std::string stats;
  ASSERT_TRUE(db_->GetProperty("jigsaw.stats", &stats));
  EXPECT_NE(stats.find("compactions"), std::string::npos);
}

TEST_P(DBTest, MultiGetMatchesTheModelAcrossLevelsAndSnapshots) {
  Open();
  std::mt19937_64 rng(29);
  std::map<std::string, std::string> model;
  auto write_round = [&](int ops) {
    for (int i = 0; i < ops; ++i) {
      const std::string key = "key" + std::to_string(rng() % 4000);
      if (rng() % 6 == 0) {
        ASSERT_TRUE(db_->Delete(WriteOptions(), key).ok());
        model.erase(key);
      } else {
        const std::string value = std::string(1 + rng() % 150, static_cast<char>('a' + rng() % 26));
        ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
        model[key] = value;
      }
    }
  };
  // Keys present, deleted, overwritten and never written; duplicates too.
  auto check = [&](const std::map<std::string, std::string>& expected, const Snapshot* snapshot) {
    std::vector<std::string> names;
    for (int i = 0; i < 500; ++i) names.push_back("key" + std::to_string(rng() % 4200));
    names.push_back(names.front());
    std::vector<Slice> keys(names.begin(), names.end());
    ReadOptions options;
    options.snapshot = snapshot;
    std::vector<std::string> values(3, "stale");
    std::vector<Status> statuses = db_->MultiGet(options, keys, &values);
    ASSERT_EQ(statuses.size(), keys.size());
    ASSERT_EQ(values.size(), keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      auto it = expected.find(names[i]);
      if (it == expected.end()) {
        EXPECT_TRUE(statuses[i].IsNotFound()) << names[i] << ": " << statuses[i].ToString();
      } else {
        ASSERT_TRUE(statuses[i].ok()) << names[i] << ": " << statuses[i].ToString();
        EXPECT_EQ(values[i], it->second) << names[i];
      }
    }
  };
  write_round(20000);  // flushed and compacted into L1+ (SSD tables in hybrid and disk modes)
  check(model, nullptr);
  const Snapshot* snapshot = db_->GetSnapshot();
  const std::map<std::string, std::string> at_snapshot = model;
  write_round(20000);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  write_round(3000);  // some in the memtable
  check(model, nullptr);
  check(at_snapshot, snapshot);
  db_->ReleaseSnapshot(snapshot);
  Open();  // cold block cache
  check(model, nullptr);
  std::vector<std::string> values{"x"};
  EXPECT_TRUE(db_->MultiGet(ReadOptions(), {}, &values).empty());
  EXPECT_TRUE(values.empty());
}

TEST_P(DBTest, IteratorSeekAndDirectionChanges) {
  Open();
  for (int i = 0; i < 2000; i += 2) {
    char key[16];
    std::snprintf(key, sizeof(key), "k%05d", i);
    ASSERT_TRUE(db_->Put(WriteOptions(), key, std::to_string(i)).ok());
  }
  ASSERT_TRUE(db_->Delete(WriteOptions(), "k00100").ok());
  auto it = db_->NewIterator(ReadOptions());
  it->Seek("k00099");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "k00102");  // k00100 is deleted
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "k00098");
  it->Next();
  EXPECT_EQ(it->key().ToString(), "k00102");
  it->Next();
  EXPECT_EQ(it->key().ToString(), "k00104");
  it->Prev();
  it->Prev();
  EXPECT_EQ(it->key().ToString(), "k00098");
  it->Seek("z");
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "k01998");
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key().ToString(), "k00000");
  it->Prev();
  EXPECT_FALSE(it->Valid());
}

// Seeks land where the model says whether their target is live (answered
// by a probe, without the merge), deleted, covered by a range delete,
// absent or newer than the snapshot, in every level; steps from there in
// both directions continue through the merge from the same entry.
TEST_P(DBTest, SeeksAndStepsFromThemMatchTheModelAtEveryKindOfTarget) {
  Open();
  std::map<std::string, std::string> model;
  std::mt19937_64 rng(71);
  auto key = [](int i) {
    char k[16];
    std::snprintf(k, sizeof(k), "k%05d", i);
    return std::string(k);
  };
  for (int round = 0; round < 4; ++round) {  // several levels, the last round in the memtable
    for (int n = 0; n < 3000; ++n) {
      const int i = static_cast<int>(rng() % 6000);
      if (n % 9 == 0) {
        ASSERT_TRUE(db_->Delete(WriteOptions(), key(i)).ok());
        model.erase(key(i));
      } else {
        const std::string value = std::to_string(round) + "-" + std::to_string(n);
        ASSERT_TRUE(db_->Put(WriteOptions(), key(i), value).ok());
        model[key(i)] = value;
      }
    }
    const int from = static_cast<int>(rng() % 5900);
    ASSERT_TRUE(db_->DeleteRange(WriteOptions(), key(from), key(from + 40)).ok());
    model.erase(model.lower_bound(key(from)), model.lower_bound(key(from + 40)));
    if (round < 3) {
      ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    }
  }
  const Snapshot* snapshot = db_->GetSnapshot();
  const std::map<std::string, std::string> at_snapshot = model;
  for (int i = 0; i < 6000; i += 3) {  // newer than the snapshot
    ASSERT_TRUE(db_->Put(WriteOptions(), key(i), "new").ok());
    model[key(i)] = "new";
  }
  for (const bool snap : {false, true}) {
    const std::map<std::string, std::string>& m = snap ? at_snapshot : model;
    ReadOptions options;
    options.snapshot = snap ? snapshot : nullptr;
    auto it = db_->NewIterator(options);
    for (int probe = 0; probe < 3000; ++probe) {
      const int i = static_cast<int>(rng() % 6100);
      const std::string target = probe % 5 == 0 ? key(i) + "x" : key(i);  // some never written
      it->Seek(target);
      auto want = m.lower_bound(target);
      if (want == m.end()) {
        ASSERT_FALSE(it->Valid()) << target;
        continue;
      }
      ASSERT_TRUE(it->Valid()) << target;
      ASSERT_EQ(it->key().ToString(), want->first) << target;
      ASSERT_EQ(it->value().ToString(), want->second) << target;
      if (probe % 2 == 0) {  // on, then back
        it->Next();
        auto next = std::next(want);
        ASSERT_EQ(it->Valid(), next != m.end()) << target;
        if (next != m.end()) {
          ASSERT_EQ(it->key().ToString(), next->first);
        }
        if (it->Valid()) it->Prev();
        if (next == m.end()) continue;
        ASSERT_TRUE(it->Valid());
        ASSERT_EQ(it->key().ToString(), want->first);
      } else {  // back, then on
        it->Prev();
        ASSERT_EQ(it->Valid(), want != m.begin()) << target;
        if (want == m.begin()) continue;
        ASSERT_EQ(it->key().ToString(), std::prev(want)->first);
        it->Next();
        ASSERT_TRUE(it->Valid());
        ASSERT_EQ(it->key().ToString(), want->first);
        ASSERT_EQ(it->value().ToString(), want->second);
      }
    }
    EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  }
  db_->ReleaseSnapshot(snapshot);
}

TEST_P(DBTest, SnapshotsSurviveOverwritesAndCompaction) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "v1").ok());
  const Snapshot* s1 = db_->GetSnapshot();
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "v2").ok());
  ASSERT_TRUE(db_->Delete(WriteOptions(), "gone").ok());
  const Snapshot* s2 = db_->GetSnapshot();
  ASSERT_TRUE(db_->Delete(WriteOptions(), "k").ok());
  for (int i = 0; i < 3000; ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), "filler" + std::to_string(i), std::string(100, 'x')).ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(Get("k", s1), "v1");
  EXPECT_EQ(Get("k", s2), "v2");
  EXPECT_EQ(Get("k"), "NOT_FOUND");
  auto contents = Contents(s1);
  EXPECT_EQ(contents.count("filler1"), 0u);
  EXPECT_EQ(contents["k"], "v1");
  db_->ReleaseSnapshot(s1);
  db_->ReleaseSnapshot(s2);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(Get("k"), "NOT_FOUND");
  EXPECT_EQ(Get("filler7"), std::string(100, 'x'));
}

TEST_P(DBTest, ReopenRestoresEverything) {
  Open();
  for (int i = 0; i < 5000; ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), "key" + std::to_string(i), "value" + std::to_string(i)).ok());
  }
  Open();
  for (int i = 0; i < 5000; i += 7) EXPECT_EQ(Get("key" + std::to_string(i)), "value" + std::to_string(i));
  EXPECT_EQ(Contents().size(), 5000u);
}

TEST_P(DBTest, OverwriteLoopKeepsPoolUsageBounded) {
  Open();
  std::string value(200, 'v');
  uint64_t peak_after_warmup = 0;
  for (int round = 0; round < 12; ++round) {
    for (int i = 0; i < 2000; ++i) {
      value[0] = static_cast<char>('a' + round % 26);
      ASSERT_TRUE(db_->Put(WriteOptions(), "key" + std::to_string(i), value).ok());
    }
    std::string used;
    ASSERT_TRUE(db_->GetProperty("jigsaw.pool-used-bytes", &used));
    if (round == 3) peak_after_warmup = std::stoull(used);
    if (round > 3) {
      // 2000 live keys of ~220 bytes: usage must not grow with the number of
      // rounds (a leak of obsolete blocks would add ~0.5 MB per round).
      EXPECT_LT(std::stoull(used), peak_after_warmup * 3 + (4 << 20)) << "round " << round;
    }
  }
  EXPECT_EQ(Get("key5"), std::string(1, 'l') + value.substr(1));
}

TEST_P(DBTest, InvalidOptionsNameTheOption) {
  Options options = ModeOptions();
  options.memtable_size = 10;
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, dir_.path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("memtable_size"), std::string::npos) << s.ToString();
  options = ModeOptions();
  options.level0_stop_trigger = 1;
  s = DB::Open(options, dir_.path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("level0"), std::string::npos) << s.ToString();
  options = ModeOptions();
  options.comparator = nullptr;
  EXPECT_TRUE(DB::Open(options, dir_.path(), &db).IsInvalidArgument());
  options = ModeOptions();
  options.ssd_block_size = 100;
  s = DB::Open(options, dir_.path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("ssd_block_size"), std::string::npos) << s.ToString();
  options = ModeOptions();
  options.table_size = 1 << 10;
  s = DB::Open(options, dir_.path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("table_size"), std::string::npos) << s.ToString();
  // block_size, table_size's deprecated old name, wins when set.
  options = ModeOptions();
  options.block_size = 1 << 10;
  s = DB::Open(options, dir_.path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.message().find("block_size (table_size's old name)"), std::string::npos) << s.ToString();
  options.table_size = 1 << 10;
  options.block_size = 256 << 10;
  EXPECT_EQ(options.TableSize(), size_t{256} << 10);
  if (GetParam() != StorageMode::kDisk) {  // disk-only mode has no pool
    options = ModeOptions();
    options.pmem_pool_size = 1 << 20;
    s = DB::Open(options, dir_.path(), &db);
    EXPECT_TRUE(s.IsInvalidArgument());
    EXPECT_NE(s.message().find("pmem_pool_size"), std::string::npos) << s.ToString();
  }
}

TEST_P(DBTest, CreateIfMissingAndErrorIfExists) {
  Options options = ModeOptions();
  options.create_if_missing = false;
  std::unique_ptr<DB> db;
  EXPECT_TRUE(DB::Open(options, dir_.path(), &db).IsInvalidArgument());
  Open();
  db_.reset();
  options = ModeOptions();
  options.error_if_exists = true;
  EXPECT_TRUE(DB::Open(options, dir_.path(), &db).IsInvalidArgument());
}

TEST_P(DBTest, OversizedKeyOrValueIsInvalidArgument) {
  Open();
  EXPECT_TRUE(db_->Put(WriteOptions(), std::string(kMaxUserKeySize + 1, 'k'), "v").IsInvalidArgument());
  EXPECT_TRUE(db_->Put(WriteOptions(), "k", std::string(kMaxUserValueSize + 1, 'v')).IsInvalidArgument());
  EXPECT_TRUE(db_->Put(WriteOptions(), std::string(kMaxUserKeySize, 'k'), "max key").ok());
  EXPECT_EQ(Get(std::string(kMaxUserKeySize, 'k')), "max key");
}

TEST_P(DBTest, ForeignFileIsRejectedAndUntouched) {
  // The pool file, or in disk-only mode the MANIFEST, is somebody else's.
  std::filesystem::create_directories(dir_.path() + "/db");
  const std::string path = GetParam() == StorageMode::kDisk ? dir_.path() + "/db/MANIFEST" : dir_.path() + "/not-a-pool";
  std::string junk(20 << 20, '\0');
  for (size_t i = 0; i < junk.size(); i += 4096) junk[i] = static_cast<char>(i / 4096);
  {
    std::ofstream out(path, std::ios::binary);
    out.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  Options options = ModeOptions();
  options.pmem_path = path;
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, dir_.path() + "/db", &db);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  std::ifstream in(path, std::ios::binary);
  std::string after((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(after == junk);
}

class ReverseComparator : public Comparator {
 public:
  int Compare(const Slice& a, const Slice& b) const override { return b.compare(a); }
  const char* Name() const override { return "test.Reverse"; }
};

TEST_P(DBTest, ComparatorNameIsCheckedOnReopen) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "a", "1").ok());
  db_.reset();
  ReverseComparator reverse;
  Options options = ModeOptions();
  options.comparator = &reverse;
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, dir_.path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.message().find("test.Reverse"), std::string::npos);
}

TEST_P(DBTest, CustomComparatorOrdersIteration) {
  static ReverseComparator reverse;  // outlives the fixture's DB
  Options options = ModeOptions();
  options.comparator = &reverse;
  Open(options);
  for (const char* k : {"b", "a", "c"}) ASSERT_TRUE(db_->Put(WriteOptions(), k, k).ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  auto it = db_->NewIterator(ReadOptions());
  std::string order;
  for (it->SeekToFirst(); it->Valid(); it->Next()) order += it->key().ToString();
  EXPECT_EQ(order, "cba");
}

// A Get picks a level's candidate tables by the 16-byte prefixes of their
// first and last keys, and by the keys themselves where prefixes tie: keys
// that share 24 bytes, keys shorter than 16 bytes that are prefixes of
// others, each table's first and last key and the gaps between tables are
// all found or not as the model says -- with the bytewise order and with
// a comparator of its own (no prefixes).
TEST_P(DBTest, GetFindsKeysAtTableBoundariesWhateverTheirPrefixes) {
  static ReverseComparator reverse;  // outlives the fixture's DB
  for (const Comparator* comparator : {BytewiseComparator(), static_cast<const Comparator*>(&reverse)}) {
    SCOPED_TRACE(comparator->Name());
    Options options = ModeOptions();
    options.comparator = comparator;
    db_.reset();
    const Status opened = DB::Open(options, dir_.path() + "/" + comparator->Name(), &db_);
    ASSERT_TRUE(opened.ok()) << opened.ToString();
    const std::string shared(24, 's');
    std::map<std::string, std::string> model;
    std::mt19937_64 rng(41);
    for (int i = 0; i < 12000; ++i) {
      std::string key;
      switch (rng() % 3) {
        case 0: key = shared + std::to_string(rng() % 5000); break;
        case 1: key = std::string(1 + rng() % 15, 's'); break;  // prefixes of the shared part
        default: key = "t" + std::to_string(rng() % 3000); break;
      }
      const std::string value(1 + rng() % 100, static_cast<char>('a' + i % 26));
      ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
      model[key] = value;
    }
    ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    for (int i = 0; i < 500; ++i) {  // some in L0 and the memtable
      const std::string key = shared + std::to_string(rng() % 6000);
      ASSERT_TRUE(db_->Put(WriteOptions(), key, "new").ok());
      model[key] = "new";
    }
    std::vector<std::string> probes;
    for (const auto& [key, value] : model) {
      probes.push_back(key);
      probes.push_back(key + '\0');                       // just after it
      probes.push_back(key.substr(0, key.size() - 1));  // just before it (or a key)
    }
    for (const std::string& extra : {std::string(), std::string(40, 's'), std::string("u"), shared}) probes.push_back(extra);
    for (const std::string& key : probes) {
      auto it = model.find(key);
      ASSERT_EQ(Get(key), it == model.end() ? "NOT_FOUND" : it->second) << "key of " << key.size() << " bytes";
    }
    db_.reset();
  }
}

TEST_P(DBTest, DestroyDBRemovesThePool) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "a", "1").ok());
  db_.reset();
  ASSERT_TRUE(DestroyDB(dir_.path(), ModeOptions()).ok());
  Options options = ModeOptions();
  options.create_if_missing = false;
  std::unique_ptr<DB> db;
  EXPECT_FALSE(DB::Open(options, dir_.path(), &db).ok());
}


TEST_P(DBTest, DeepLevelsAreSsdTablesExceptInPmemMode) {
  Open();
  for (int i = 0; i < 30000; ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), "key" + std::to_string(i % 12000), std::string(100, 'a' + i % 26)).ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  std::string ssd_bytes, syncs;
  ASSERT_TRUE(db_->GetProperty("jigsaw.ssd-bytes", &ssd_bytes));
  ASSERT_TRUE(db_->GetProperty("jigsaw.sync-stats", &syncs));
  if (GetParam() != StorageMode::kPmem) {
    EXPECT_GT(std::stoull(ssd_bytes), 1u << 20);
    EXPECT_EQ(syncs.find("syncs 0 "), std::string::npos) << syncs;
  } else {
    EXPECT_EQ(ssd_bytes, "0");
  }
  EXPECT_EQ(Contents().size(), 12000u);
  EXPECT_TRUE(db_->VerifyIntegrity().ok());
  Open();
  EXPECT_EQ(Get("key11999"), std::string(100, 'a' + 23999 % 26));  // its last write
  EXPECT_TRUE(db_->VerifyIntegrity().ok());
}

// Keys written in order fill tables that overlap nothing: compaction moves
// them down by a manifest edit (a trivial move) instead of rewriting them --
// except where the level below is another tier (hybrid mode's SSD levels).
TEST_P(DBTest, TablesThatOverlapNothingMoveDownByReference) {
  Open();
  char key[16];
  std::map<std::string, std::string> model;
  for (int i = 0; i < 40000; ++i) {
    std::snprintf(key, sizeof(key), "key%08d", i);
    const std::string value(100, 'a' + i % 26);
    ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
    model[key] = value;
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  std::string stats;
  ASSERT_TRUE(db_->GetProperty("jigsaw.stats", &stats));
  const size_t at = stats.find("trivial moves: ");
  ASSERT_NE(at, std::string::npos) << stats;
  const uint64_t moved = std::stoull(stats.substr(at + std::strlen("trivial moves: ")));
  EXPECT_GT(moved, 0u) << stats;
  if (GetParam() == StorageMode::kHybrid) {
    // Only pmem levels take moved pmem blocks: the SSD levels were written.
    std::string ssd_bytes;
    ASSERT_TRUE(db_->GetProperty("jigsaw.ssd-bytes", &ssd_bytes));
    EXPECT_GT(std::stoull(ssd_bytes), 0u);
  }
  EXPECT_EQ(Contents(), model);
  EXPECT_TRUE(db_->VerifyIntegrity().ok());
  Open();  // the moves are in the manifest
  EXPECT_EQ(Contents(), model);
  EXPECT_TRUE(db_->VerifyIntegrity().ok());
}

// Merges copy runs of entries as bytes where they decide nothing, into
// pmem blocks and SSD tables; what they write reads the same, also after
// reopening.
TEST_P(DBTest, MergesCopyRunsAsBytes) {
  Open();
  std::map<std::string, std::string> model;
  std::mt19937_64 rng(8);
  // A sparse first pass, then denser ones: later tables overlap earlier
  // ones with runs of keys between the overlaps, and some keys are
  // overwritten or deleted (the merge must decide those).
  for (int pass = 0; pass < 3; ++pass) {
    for (int i = 0; i < 12000; ++i) {
      const int k = pass == 0 ? i * 5 : static_cast<int>(rng() % 60000);
      const std::string key = "key" + std::to_string(1000000 + k);
      if (rng() % 10 == 0) {
        ASSERT_TRUE(db_->Delete(WriteOptions(), key).ok());
        model.erase(key);
      } else {
        const std::string value(50 + rng() % 100, static_cast<char>('a' + pass));
        ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
        model[key] = value;
      }
    }
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  std::string stats;
  ASSERT_TRUE(db_->GetProperty("jigsaw.stats", &stats));
  const size_t at = stats.find(" entries merged, ");
  ASSERT_NE(at, std::string::npos) << stats;
  const uint64_t spliced = std::stoull(stats.substr(at + std::strlen(" entries merged, ")));
  EXPECT_GT(spliced, 0u) << stats;  // pmem blocks and SSD tables both take runs
  EXPECT_EQ(Contents(), model);
  EXPECT_TRUE(db_->VerifyIntegrity().ok());
  Open();
  EXPECT_EQ(Contents(), model);
  EXPECT_TRUE(db_->VerifyIntegrity().ok());
}

// Keys written out of order overlap: every compaction merges.
TEST_P(DBTest, OverlappingTablesAreMergedNotMoved) {
  Open();
  for (int i = 0; i < 30000; ++i) {
    ASSERT_TRUE(db_->Put(WriteOptions(), "key" + std::to_string((i * 7919) % 30000), std::string(100, 'x')).ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  std::string compactions;
  ASSERT_TRUE(db_->GetProperty("jigsaw.compactions", &compactions));
  EXPECT_GT(std::stoull(compactions), 0u);
  EXPECT_EQ(Contents().size(), 30000u);
}

// The default info log, <db>/LOG: what happened, for people; the previous
// open's log is kept as LOG.old.
TEST_P(DBTest, TheInfoLogRecordsOpenFlushesCompactionsAndClose) {
  Open();
  char key[16];
  for (int i = 0; i < 20000; ++i) {
    std::snprintf(key, sizeof(key), "key%08d", (i * 7919) % 20000);
    ASSERT_TRUE(db_->Put(WriteOptions(), key, std::string(100, 'v')).ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  db_.reset();
  auto read = [](const std::string& path) {
    std::ifstream in(path);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const std::string log = read(dir_.path() + "/LOG");
  for (const char* event : {"Opening ", "Opened in ", "Flush: ", "Compaction L", "Closing ", "Closed"}) {
    EXPECT_NE(log.find(event), std::string::npos) << event << " missing from the LOG:\n" << log;
  }
  // Lines start with the date and time.
  EXPECT_TRUE(log.size() > 20 && log[4] == '/' && log[10] == '-') << log.substr(0, 40);
  Open();
  db_.reset();
  EXPECT_EQ(read(dir_.path() + "/LOG.old"), log);
  EXPECT_NE(read(dir_.path() + "/LOG").find("Opened in "), std::string::npos);
}

// A Logger of the user's instead of the LOG file.
TEST_P(DBTest, AUserLoggerGetsTheEventsAndNoLogFileIsWritten) {
  class Lines final : public Logger {
   public:
    void Log(const Slice& message) override {
      std::lock_guard<std::mutex> lock(mu);
      lines.push_back(message.ToString());
    }
    std::mutex mu;
    std::vector<std::string> lines;
  } logger;
  Options options = ModeOptions();
  options.info_log = &logger;
  Open(options);
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "v").ok());
  db_.reset();
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/LOG"));
  ASSERT_GE(logger.lines.size(), 3u);
  EXPECT_EQ(logger.lines.front().rfind("Opening ", 0), 0u) << logger.lines.front();
  EXPECT_EQ(logger.lines.back(), "Closed");
  for (const std::string& line : logger.lines) EXPECT_EQ(line.find('\n'), std::string::npos) << line;
}

TEST_P(DBTest, ApproximateSizesFollowTheKeysInTheTables) {
  Open();
  char key[16];
  for (int i = 0; i < 40000; ++i) {
    std::snprintf(key, sizeof(key), "key%08d", i);
    ASSERT_TRUE(db_->Put(WriteOptions(), key, std::string(100, static_cast<char>('a' + i % 26))).ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  const Range ranges[] = {{"key00000000", "key00040000"},  // everything
                          {"key00000000", "key00020000"},  // the first half
                          {"key00010000", "key00030000"},  // the middle half
                          {"key00040000", "zzz"},          // after every key
                          {"a", "b"},                      // before every key
                          {"key00030000", "key00010000"}};  // empty: limit before start
  uint64_t sizes[6];
  db_->GetApproximateSizes(ranges, 6, sizes);
  // 40000 entries of ~116 bytes take at least 4 MB in any format.
  EXPECT_GT(sizes[0], 4000000u);
  EXPECT_LT(sizes[0], 12000000u);
  for (int half : {1, 2}) {
    EXPECT_GT(sizes[half], sizes[0] / 4) << half;
    EXPECT_LT(sizes[half], sizes[0] * 3 / 4) << half;
  }
  EXPECT_EQ(sizes[3], 0u);
  EXPECT_EQ(sizes[4], 0u);
  EXPECT_EQ(sizes[5], 0u);
}

// jigsaw.stats-json: the same counters as the text properties, as JSON.
TEST_P(DBTest, StatsJsonAgreesWithTheTextProperties) {
  Open();
  char key[16];
  for (int i = 0; i < 20000; ++i) {
    std::snprintf(key, sizeof(key), "key%08d", (i * 7919) % 20000);
    ASSERT_TRUE(db_->Put(WriteOptions(), key, std::string(100, 'v')).ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  std::string json, compactions, flushes, pmem, ssd;
  ASSERT_TRUE(db_->GetProperty("jigsaw.stats-json", &json));
  ASSERT_TRUE(db_->GetProperty("jigsaw.compactions", &compactions));
  ASSERT_TRUE(db_->GetProperty("jigsaw.flushes", &flushes));
  ASSERT_TRUE(db_->GetProperty("jigsaw.pmem-bytes", &pmem));
  ASSERT_TRUE(db_->GetProperty("jigsaw.ssd-bytes", &ssd));
  const nlohmann::json j = nlohmann::json::parse(json);
  EXPECT_EQ(j["compactions"]["count"].get<uint64_t>(), std::stoull(compactions));
  EXPECT_EQ(j["flushes"].get<uint64_t>(), std::stoull(flushes));
  EXPECT_GT(j["flushes"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["pmem_bytes"].get<uint64_t>(), std::stoull(pmem));
  EXPECT_EQ(j["ssd_bytes"].get<uint64_t>(), std::stoull(ssd));
  uint64_t level_bytes = 0;
  std::string levels;
  ASSERT_TRUE(db_->GetProperty("jigsaw.levels", &levels));
  ASSERT_EQ(j["levels"].size(), static_cast<size_t>(std::count(levels.begin(), levels.end(), '\n') - 1));
  for (const auto& level : j["levels"]) level_bytes += level["bytes"].get<uint64_t>();
  EXPECT_EQ(level_bytes, std::stoull(pmem) + std::stoull(ssd));
  EXPECT_EQ(j["writes"]["batches"].get<uint64_t>(), 20000u);
  EXPECT_FALSE(j["pool_full"].get<bool>());
  // The text summary is made of the same numbers; the old name of
  // num-tables-at-level still answers.
  std::string stats, tables, blocks;
  ASSERT_TRUE(db_->GetProperty("jigsaw.stats", &stats));
  EXPECT_NE(stats.find("\nssd bytes " + ssd + "\n"), std::string::npos) << stats;
  EXPECT_NE(stats.find("\nflushes " + flushes + "\n"), std::string::npos) << stats;
  for (int level = 0; level < 7; ++level) {
    ASSERT_TRUE(db_->GetProperty("jigsaw.num-tables-at-level" + std::to_string(level), &tables));
    ASSERT_TRUE(db_->GetProperty("jigsaw.num-blocks-at-level" + std::to_string(level), &blocks));
    EXPECT_EQ(tables, blocks);
    EXPECT_EQ(std::stoull(tables), j["levels"][level]["tables"].get<uint64_t>()) << level;
  }
  EXPECT_FALSE(db_->GetProperty("jigsaw.num-tables-at-level7", &tables));
}

// Compactions of KeySet tables copy every surviving entry as bytes
// (compaction/merge.h, MergeBlockScans): with unique keys in scattered order (inputs
// alternating key by key), all but the few entries that start a new output
// are spliced, not rebuilt. Classic tables (pmem table images and SSD
// tables) are merged entry by entry.
TEST_P(DBTest, CompactionsCopySurvivingEntriesAsBytes) {
  for (const TableFormat format : {TableFormat::kKeySet, TableFormat::kClassic}) {
    SCOPED_TRACE(format == TableFormat::kKeySet ? "keyset" : "classic");
    db_.reset();
    ASSERT_TRUE(DestroyDB(dir_.path(), ModeOptions()).ok());
    Options options = ModeOptions();
    options.table_format = format;
    Open(options);
    char key[16];
    for (int i = 0; i < 20000; ++i) {
      std::snprintf(key, sizeof(key), "key%08d", (i * 7919) % 20000);
      ASSERT_TRUE(db_->Put(WriteOptions(), key, std::string(100, 'v')).ok());
    }
    ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    std::string json;
    ASSERT_TRUE(db_->GetProperty("jigsaw.stats-json", &json));
    const nlohmann::json j = nlohmann::json::parse(json);
    const uint64_t merged = j["compactions"]["entries_merged"].get<uint64_t>();
    const uint64_t spliced = j["compactions"]["entries_spliced"].get<uint64_t>();
    ASSERT_GT(merged, 20000u);
    if (format == TableFormat::kKeySet) {
      EXPECT_GE(spliced, merged - merged / 20) << json;
    } else {
      EXPECT_EQ(spliced, 0u) << json;  // classic in every tier: nothing to splice
    }
    for (int i = 0; i < 20000; i += 997) {
      std::snprintf(key, sizeof(key), "key%08d", i);
      EXPECT_EQ(Get(key), std::string(100, 'v'));
    }
  }
}

// Options::read_triggered_compactions: Gets (and MultiGets) that search L0
// tables not holding their keys, or scans merging L0 tables, ask for L0 to go into L1
// although it is below its trigger; the data reads the same after. Off,
// the same reads leave L0 alone.
TEST_P(DBTest, ReadsAskForL0BelowItsTrigger) {
  for (const bool enabled : {false, true}) {
    for (const std::string reads : {"gets", "multiget", "scans"}) {
      SCOPED_TRACE(std::string(enabled ? "on, " : "off, ") + reads);
      db_.reset();
      ASSERT_TRUE(DestroyDB(dir_.path(), ModeOptions()).ok());
      Options options = ModeOptions();
      options.level0_compaction_trigger = 8;  // the writes below leave fewer
      options.level0_slowdown_trigger = 20;
      options.level0_stop_trigger = 24;
      options.read_triggered_compactions = enabled;
      Open(options);
      auto property = [&](const char* name) {
        std::string value;
        EXPECT_TRUE(db_->GetProperty(name, &value)) << name;
        return std::stoull(value);
      };
      std::map<std::string, std::string> model;
      char key[16];
      for (int i = 0; i < 4000; ++i) {
        std::snprintf(key, sizeof(key), "key%08d", (i * 7919) % 4000);
        const std::string value(100, static_cast<char>('a' + i % 26));
        ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
        model[key] = value;
      }
      // The flushes are the background thread's: wait until the frozen
      // memtables are in L0.
      std::string json;
      for (int waited = 0; waited < 3000; ++waited) {
        ASSERT_TRUE(db_->GetProperty("jigsaw.stats-json", &json));
        if (nlohmann::json::parse(json)["memtables"].get<int>() == 1) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      const uint64_t l0_before = property("jigsaw.num-tables-at-level0");
      ASSERT_GE(l0_before, 2u);
      ASSERT_LT(l0_before, 8u);

      // Reads until L0 empties (on), or as many as that took at most (off).
      // The loop's bound only keeps a broken build from spinning forever.
      int rounds = 0;
      for (; rounds < 2000 && (!enabled || property("jigsaw.num-tables-at-level0") > 0); ++rounds) {
        if (reads == "scans") {
          auto it = db_->NewIterator(ReadOptions());
          uint64_t n = 0;
          for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
          ASSERT_EQ(n, model.size());
        } else if (reads == "multiget") {
          std::vector<std::string> absent;
          for (int i = 0; i < 500; ++i) {
            std::snprintf(key, sizeof(key), "key%08dx", i * 7);
            absent.push_back(key);
          }
          std::vector<std::string> values;
          for (const Status& s : db_->MultiGet(ReadOptions(), std::vector<Slice>(absent.begin(), absent.end()), &values)) {
            ASSERT_TRUE(s.IsNotFound()) << s.ToString();
          }
        } else {
          std::string value;
          for (int i = 0; i < 500; ++i) {
            std::snprintf(key, sizeof(key), "key%08dx", i * 7);  // inside every table's range
            ASSERT_TRUE(db_->Get(ReadOptions(), key, &value).IsNotFound());
          }
        }
        if (rounds == 0) {
          // One round wastes a fraction of what compacting L0 costs (its
          // tables' bytes / 64 probes): too little to ask yet.
          EXPECT_EQ(property("jigsaw.read-triggered-compactions"), 0u);
          EXPECT_EQ(property("jigsaw.num-tables-at-level0"), l0_before);
        }
        if (enabled && property("jigsaw.read-triggered-compactions") > 0) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the compaction is under way
        }
        if (!enabled && rounds == 200) break;
      }
      if (enabled) {
        EXPECT_EQ(property("jigsaw.num-tables-at-level0"), 0u);
        EXPECT_EQ(property("jigsaw.read-triggered-compactions"), 1u);
      } else {
        EXPECT_EQ(property("jigsaw.num-tables-at-level0"), l0_before);
        EXPECT_EQ(property("jigsaw.read-triggered-compactions"), 0u);
      }
      EXPECT_EQ(Contents(), model);
      Open(options);
      EXPECT_EQ(Contents(), model);
    }
  }
}

// Options::pmem_hash_index: point lookups in pmem blocks through a DRAM
// hash index give what the search gives, at snapshots too; the index is
// counted in jigsaw.stats-json, exists only for pmem blocks, and a database
// opens with or without it.
TEST_P(DBTest, PmemHashIndexAnswersAsTheSearchAndIsOptional) {
  auto stat = [this](const char* name) {
    std::string json;
    EXPECT_TRUE(db_->GetProperty("jigsaw.stats-json", &json));
    return nlohmann::json::parse(json)[name].get<uint64_t>();
  };
  auto index_bytes = [&] { return stat("pmem_hash_index_bytes"); };
  Options options = ModeOptions();
  ASSERT_TRUE(options.pmem_hash_index);  // the default
  Open(options);
  std::map<std::string, std::string> model;
  auto write_round = [&](int round) {
    char key[16];
    for (int i = 0; i < 8000; ++i) {
      std::snprintf(key, sizeof(key), "key%06d", (i * 7919 + round) % 9000);
      if (i % 11 == 0) {
        ASSERT_TRUE(db_->Delete(WriteOptions(), key).ok());
        model.erase(key);
      } else {
        const std::string value = "r" + std::to_string(round) + "-" + std::to_string(i);
        ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
        model[key] = value;
      }
    }
  };
  auto check = [&](const std::map<std::string, std::string>& expected, const Snapshot* snapshot) {
    char key[16];
    for (int i = 0; i < 9100; ++i) {
      std::snprintf(key, sizeof(key), "key%06d", i);
      auto it = expected.find(key);
      ASSERT_EQ(Get(key, snapshot), it == expected.end() ? "NOT_FOUND" : it->second) << key;
    }
  };
  write_round(0);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  const Snapshot* snapshot = db_->GetSnapshot();
  const std::map<std::string, std::string> at_snapshot = model;
  write_round(1);  // newer versions above the compacted ones
  check(model, nullptr);
  check(at_snapshot, snapshot);
  db_->ReleaseSnapshot(snapshot);
  // The pmem blocks those reads probed have built their index (hybrid mode
  // may hold no pmem block by now; disk mode has none).
  if (GetParam() == StorageMode::kPmem) {
    EXPECT_GT(index_bytes(), 0u);
  }
  if (stat("pmem_bytes") == 0) {
    EXPECT_EQ(index_bytes(), 0u);
  }
  options.pmem_hash_index = false;
  Open(options);
  check(model, nullptr);
  EXPECT_EQ(index_bytes(), 0u);
}

// Live tables by tier and format (jigsaw.table-formats).
struct TableFormats {
  uint64_t pmem_keyset = 0, pmem_images = 0, ssd_keyset = 0, ssd_classic = 0;
};
TableFormats CountTableFormats(DB* db) {
  std::string value;
  EXPECT_TRUE(db->GetProperty("jigsaw.table-formats", &value));
  TableFormats f;
  unsigned long long a = 0, b = 0, c = 0, d = 0;
  EXPECT_EQ(std::sscanf(value.c_str(),
                        "pmem %llu KeySet blocks, %llu table images of classic blocks\nssd %llu tables of KeySet "
                        "blocks, %llu of classic blocks",
                        &a, &b, &c, &d),
            4)
      << value;
  f.pmem_keyset = a;
  f.pmem_images = b;
  f.ssd_keyset = c;
  f.ssd_classic = d;
  return f;
}

// With table_format kClassic every tier is classic: pmem tables are SSD
// table images of classic blocks, SSD tables are of classic blocks. Gets,
// scans both ways and snapshots read the same across flushes, compactions
// (and hybrid mode's migrations) and reopening.
TEST_P(DBTest, ClassicTablesInEveryTier) {
  Options options = ModeOptions();
  options.table_format = TableFormat::kClassic;
  Open(options);
  std::map<std::string, std::string> model;
  std::mt19937_64 rng(21);
  char key[16];
  auto write = [&](int n, bool in_order) {
    for (int i = 0; i < n; ++i) {
      std::snprintf(key, sizeof(key), "key%07d", in_order ? i : static_cast<int>(rng() % 40000));
      if (!in_order && rng() % 9 == 0) {
        ASSERT_TRUE(db_->Delete(WriteOptions(), key).ok());
        model.erase(key);
      } else {
        const std::string value(20 + rng() % 150, static_cast<char>('a' + rng() % 26));
        ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
        model[key] = value;
      }
    }
  };
  write(25000, /*in_order=*/true);  // tables that overlap nothing: moves and migrations
  const Snapshot* snapshot = db_->GetSnapshot();
  const std::map<std::string, std::string> at_snapshot = model;
  write(25000, /*in_order=*/false);
  TableFormats formats = CountTableFormats(db_.get());
  EXPECT_EQ(formats.pmem_keyset, 0u);
  EXPECT_EQ(formats.ssd_keyset, 0u);
  if (GetParam() == StorageMode::kPmem) {
    EXPECT_GT(formats.pmem_images, 0u);  // hybrid mode may have migrated all by now
  }
  EXPECT_EQ(Contents(), model);
  EXPECT_EQ(Contents(snapshot), at_snapshot);
  for (const auto& [k, v] : at_snapshot) {
    if (rng() % 50 == 0) {
      EXPECT_EQ(Get(k, snapshot), v);
    }
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(Contents(), model);
  EXPECT_EQ(Contents(snapshot), at_snapshot);
  db_->ReleaseSnapshot(snapshot);
  formats = CountTableFormats(db_.get());
  EXPECT_EQ(formats.pmem_keyset, 0u);
  EXPECT_EQ(formats.ssd_keyset, 0u);
  if (GetParam() != StorageMode::kPmem) {
    EXPECT_GT(formats.ssd_classic, 0u);
  }
  if (GetParam() == StorageMode::kHybrid) {
    std::string stats;
    ASSERT_TRUE(db_->GetProperty("jigsaw.stats", &stats));
    const size_t at = stats.find("migrations: ");
    ASSERT_NE(at, std::string::npos) << stats;
    EXPECT_GT(std::stoull(stats.substr(at + std::strlen("migrations: "))), 0u) << stats;
  }
  EXPECT_TRUE(db_->VerifyIntegrity().ok());
  // A reopen recovers the log's writes into one L0 table, which lives in
  // pmem (an image of classic blocks) in pmem and hybrid mode.
  write(100, /*in_order=*/false);
  Open(options);
  if (GetParam() != StorageMode::kDisk) {
    formats = CountTableFormats(db_.get());
    EXPECT_GT(formats.pmem_images, 0u);
    EXPECT_EQ(formats.pmem_keyset, 0u);
  }
  EXPECT_EQ(Contents(), model);
  for (const auto& [k, v] : model) {
    if (rng() % 20 == 0) {
      EXPECT_EQ(Get(k), v);
    }
  }
  EXPECT_TRUE(db_->VerifyIntegrity().ok());
}

// A database written with one table_format and reopened with the other
// reads every table by the format it was written in, writes new tables in
// the current one, and merges across the two.
TEST_P(DBTest, AReopenWithTheOtherTableFormatReadsEverything) {
  for (const TableFormat first : {TableFormat::kKeySet, TableFormat::kClassic}) {
    const TableFormat second = first == TableFormat::kKeySet ? TableFormat::kClassic : TableFormat::kKeySet;
    SCOPED_TRACE(first == TableFormat::kKeySet ? "keyset, then classic" : "classic, then keyset");
    db_.reset();
    ASSERT_TRUE(DestroyDB(dir_.path(), ModeOptions()).ok());
    Options options = ModeOptions();
    options.table_format = first;
    Open(options);
    std::map<std::string, std::string> model;
    char key[16];
    auto write = [&](int round, int n) {
      for (int i = 0; i < n; ++i) {
        std::snprintf(key, sizeof(key), "key%06d", (i * 7919 + round * 13) % 30000);
        if (i % 13 == round) {
          ASSERT_TRUE(db_->Delete(WriteOptions(), key).ok());
          model.erase(key);
        } else {
          const std::string value = "r" + std::to_string(round) + "-" + std::to_string(i) + std::string(60, 'x');
          ASSERT_TRUE(db_->Put(WriteOptions(), key, value).ok());
          model[key] = value;
        }
      }
    };
    write(0, 20000);
    ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    write(1, 4000);  // in L0 above the compacted levels
    options.table_format = second;
    Open(options);
    EXPECT_EQ(Contents(), model);
    write(2, 8000);
    // Both formats live at once (disk mode's SSD tables alike).
    const TableFormats mixed = CountTableFormats(db_.get());
    EXPECT_GT(mixed.pmem_keyset + mixed.ssd_keyset, 0u);
    EXPECT_GT(mixed.pmem_images + mixed.ssd_classic, 0u);
    EXPECT_EQ(Contents(), model);
    EXPECT_TRUE(db_->VerifyIntegrity().ok());
    ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    EXPECT_EQ(Contents(), model);
    // Compacted, everything is in the current format.
    const TableFormats after = CountTableFormats(db_.get());
    if (second == TableFormat::kClassic) {
      EXPECT_EQ(after.pmem_keyset + after.ssd_keyset, 0u);
    } else {
      EXPECT_EQ(after.pmem_images + after.ssd_classic, 0u);
    }
    Open(options);
    EXPECT_EQ(Contents(), model);
    for (int i = 0; i < 30000; i += 37) {
      std::snprintf(key, sizeof(key), "key%06d", i);
      const auto it = model.find(key);
      EXPECT_EQ(Get(key), it == model.end() ? "NOT_FOUND" : it->second) << key;
    }
    EXPECT_TRUE(db_->VerifyIntegrity().ok());
  }
}

// Sequence numbers: one per operation, consecutive within a batch, seen
// by snapshots, kept across flushes, compactions and reopening.
TEST_P(DBTest, SequenceNumbersCountEveryOperationAndSurviveReopening) {
  Open();
  EXPECT_EQ(db_->GetLatestSequenceNumber(), 0u);
  ASSERT_TRUE(db_->Put(WriteOptions(), "a", "1").ok());
  EXPECT_EQ(db_->GetLatestSequenceNumber(), 1u);
  WriteBatch batch;
  batch.Put("b", "2");
  batch.Delete("a");
  batch.Put("c", "3");
  ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
  EXPECT_EQ(db_->GetLatestSequenceNumber(), 4u);
  const Snapshot* snapshot = db_->GetSnapshot();
  EXPECT_EQ(snapshot->sequence(), 4u);
  ASSERT_TRUE(db_->Delete(WriteOptions(), "b").ok());
  EXPECT_EQ(db_->GetLatestSequenceNumber(), 5u);
  EXPECT_EQ(snapshot->sequence(), 4u);
  EXPECT_EQ(Get("b", snapshot), "2");
  db_->ReleaseSnapshot(snapshot);
  const std::string value(100, 'v');
  for (int i = 0; i < 5000; ++i) ASSERT_TRUE(db_->Put(WriteOptions(), "k" + std::to_string(i), value).ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(db_->GetLatestSequenceNumber(), 5005u);
  Open();
  EXPECT_EQ(db_->GetLatestSequenceNumber(), 5005u);
  ASSERT_TRUE(db_->Put(WriteOptions(), "d", "4").ok());
  EXPECT_EQ(db_->GetLatestSequenceNumber(), 5006u);
}

// Iterator bounds (ReadOptions::iterate_lower_bound, iterate_upper_bound)
// over keys in the memtable, L0 and deeper levels, live and deleted, at
// the latest state and at a snapshot: scans both ways and seeks see
// exactly the model's keys in [lower, upper).
// A refreshed iterator reads what a new one would: the latest writes
// (through flushes and compactions, or none at all since), its bounds, or
// its snapshot; it is not valid until positioned. Also under a comparator
// of its own, whose iterators never probe.
TEST_P(DBTest, ARefreshedIteratorReadsWhatANewOneWould) {
  static ReverseComparator reverse;  // outlives the fixture's DB
  for (const Comparator* comparator : {BytewiseComparator(), static_cast<const Comparator*>(&reverse)}) {
    SCOPED_TRACE(comparator->Name());
    db_.reset();
    ASSERT_TRUE(DestroyDB(dir_.path(), ModeOptions()).ok());
    Options options = ModeOptions();
    options.comparator = comparator;
    Open(options);
    std::map<std::string, std::string> model;
    std::mt19937_64 rng(91);
    auto write = [&](int n) { WriteRandomly(n, 5, &rng, &model); };
    write(3000);
    const Snapshot* snapshot = db_->GetSnapshot();
    const std::map<std::string, std::string> at_snapshot = model;
    // [lower, upper) in the comparator's order.
    const std::string lower = comparator == &reverse ? "k02000" : "k01000";
    const std::string upper = comparator == &reverse ? "k01000" : "k02000";
    const Slice lower_slice(lower), upper_slice(upper);
    ReadOptions bounded;
    bounded.iterate_lower_bound = &lower_slice;
    bounded.iterate_upper_bound = &upper_slice;
    ReadOptions at;
    at.snapshot = snapshot;
    auto plain = db_->NewIterator(ReadOptions());
    auto inside = db_->NewIterator(bounded);
    auto old = db_->NewIterator(at);
    // `it` shows `want` (within the bounds when `bounds`): forwards,
    // backwards and at seeks to its keys.
    auto expect = [&](Iterator* it, const std::map<std::string, std::string>& want, bool bounds) {
      std::vector<std::pair<std::string, std::string>> expected;
      for (const auto& kv : want) {
        if (!bounds || (comparator->Compare(kv.first, lower) >= 0 && comparator->Compare(kv.first, upper) < 0)) {
          expected.push_back(kv);
        }
      }
      if (comparator == &reverse) std::reverse(expected.begin(), expected.end());
      std::vector<std::pair<std::string, std::string>> got;
      for (it->SeekToFirst(); it->Valid(); it->Next()) got.emplace_back(it->key().ToString(), it->value().ToString());
      ASSERT_TRUE(it->status().ok()) << it->status().ToString();
      EXPECT_EQ(got, expected);
      got.clear();
      for (it->SeekToLast(); it->Valid(); it->Prev()) got.emplace_back(it->key().ToString(), it->value().ToString());
      std::reverse(got.begin(), got.end());
      EXPECT_EQ(got, expected);
      for (int k = 0; k < 10 && !expected.empty(); ++k) {
        const auto& target = expected[rng() % expected.size()];
        it->Seek(target.first);
        ASSERT_TRUE(it->Valid());
        EXPECT_EQ(it->key().ToString(), target.first);
        EXPECT_EQ(it->value().ToString(), target.second);
      }
    };
    for (int round = 0; round < 8; ++round) {
      SCOPED_TRACE(round);
      // Rounds 0 and 4 write nothing; others write, flush or compact.
      if (round % 4 != 0) write(round % 2 == 0 ? 5 : 1500);
      if (round == 3) {
        ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
      }
      for (Iterator* it : {plain.get(), inside.get(), old.get()}) {
        it->SeekToFirst();
        ASSERT_TRUE(it->Refresh().ok());
        EXPECT_FALSE(it->Valid());
        EXPECT_TRUE(it->status().ok());
      }
      expect(plain.get(), model, false);
      expect(inside.get(), model, true);
      expect(old.get(), at_snapshot, false);
    }
    plain.reset();
    inside.reset();
    old.reset();
    db_->ReleaseSnapshot(snapshot);
  }
}

// A reading thread keeps its read state cached between reads; a refresh
// there still sees what another thread wrote, flushed and compacted.
TEST_P(DBTest, ARefreshSeesWhatAnotherThreadWroteAndCompacted) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "a", "1").ok());
  auto it = db_->NewIterator(ReadOptions());
  std::string value;
  ASSERT_TRUE(db_->Get(ReadOptions(), "a", &value).ok());  // this thread's cached state
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    const std::string key = "b" + std::to_string(round);
    std::thread writer([&] {
      ASSERT_TRUE(db_->Put(WriteOptions(), key, "2").ok());
      if (round > 0) {
        ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
      }
    });
    writer.join();
    ASSERT_TRUE(it->Refresh().ok());
    it->Seek(key);
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key().ToString(), key);
    EXPECT_EQ(it->value().ToString(), "2");
    int keys = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++keys;
    EXPECT_EQ(keys, round + 2);
    ASSERT_TRUE(db_->Get(ReadOptions(), key, &value).ok());
  }
}

TEST_P(DBTest, IteratorBoundsShowOnlyTheKeysBetweenThem) {
  Open();
  std::map<std::string, std::string> model;
  std::mt19937_64 rng(77);
  char key[16];
  auto write = [&](int n) { WriteRandomly(n, 6, &rng, &model); };
  write(20000);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  write(6000);  // on top: memtable and L0 over the compacted levels
  const Snapshot* snapshot = db_->GetSnapshot();
  const std::map<std::string, std::string> at_snapshot = model;
  write(3000);

  auto check = [&](const std::map<std::string, std::string>& expected, const Snapshot* snap, const std::string* lower,
                   const std::string* upper) {
    const Slice lower_slice = lower != nullptr ? Slice(*lower) : Slice();
    const Slice upper_slice = upper != nullptr ? Slice(*upper) : Slice();
    ReadOptions options;
    options.snapshot = snap;
    options.iterate_lower_bound = lower != nullptr ? &lower_slice : nullptr;
    options.iterate_upper_bound = upper != nullptr ? &upper_slice : nullptr;
    std::vector<std::pair<std::string, std::string>> want;
    for (auto it = lower != nullptr ? expected.lower_bound(*lower) : expected.begin();
         it != expected.end() && (upper == nullptr || it->first < *upper); ++it) {
      want.push_back(*it);
    }
    SCOPED_TRACE((lower != nullptr ? *lower : "-") + " .. " + (upper != nullptr ? *upper : "-"));
    auto it = db_->NewIterator(options);
    std::vector<std::pair<std::string, std::string>> got;
    for (it->SeekToFirst(); it->Valid(); it->Next()) got.emplace_back(it->key().ToString(), it->value().ToString());
    ASSERT_TRUE(it->status().ok());
    EXPECT_EQ(got, want);
    got.clear();
    for (it->SeekToLast(); it->Valid(); it->Prev()) got.emplace_back(it->key().ToString(), it->value().ToString());
    ASSERT_TRUE(it->status().ok());
    std::reverse(got.begin(), got.end());
    EXPECT_EQ(got, want);
    // Seeks: below, inside and above the bounds.
    for (int k = 0; k < 20; ++k) {
      std::snprintf(key, sizeof(key), "k%05d", static_cast<int>(rng() % 3100));
      it->Seek(key);
      auto at = expected.lower_bound(std::max<std::string>(key, lower != nullptr ? *lower : std::string()));
      const bool want_valid = at != expected.end() && (upper == nullptr || at->first < *upper);
      ASSERT_EQ(it->Valid(), want_valid) << key;
      if (want_valid) {
        EXPECT_EQ(it->key().ToString(), at->first);
        // One step back stays inside the lower bound, or ends the iterator.
        it->Prev();
        if (at == expected.begin() || (lower != nullptr && std::prev(at)->first < *lower)) {
          EXPECT_FALSE(it->Valid());
        } else {
          ASSERT_TRUE(it->Valid());
          EXPECT_EQ(it->key().ToString(), std::prev(at)->first);
        }
      }
      ASSERT_TRUE(it->status().ok());
    }
  };
  const std::vector<std::string> bounds = {"", "k00000", "k00733", "k01500", "k01500\x01", "k02999", "k09999"};
  for (const Snapshot* snap : {static_cast<const Snapshot*>(nullptr), snapshot}) {
    const auto& expected = snap == nullptr ? model : at_snapshot;
    check(expected, snap, nullptr, nullptr);
    for (const std::string& lower : bounds) {
      check(expected, snap, &lower, nullptr);
      check(expected, snap, nullptr, &lower);
      for (const std::string& upper : bounds) check(expected, snap, &lower, &upper);
    }
  }
  db_->ReleaseSnapshot(snapshot);
}

INSTANTIATE_TEST_SUITE_P(Modes, DBTest, ::testing::Values(StorageMode::kPmem, StorageMode::kHybrid, StorageMode::kDisk),
                         test::ModeName);

}  // namespace
}  // namespace jigsaw
