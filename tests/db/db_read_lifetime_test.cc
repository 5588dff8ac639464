// Readers holding pmem blocks and SSD tables while
// compactions replace them (their pool space and files released, reused).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "jigsaw/db.h"
#include "tests/support/db_test_util.h"

namespace jigsaw {
namespace {

std::string K(int i) {
  char k[16];
  std::snprintf(k, sizeof(k), "key%06d", i);
  return k;
}
// The value names its key and generation: a read of reused memory shows
// another key's or generation's value.
std::string V(int i, int gen) { return "g" + std::to_string(gen) + "|" + K(i) + "|" + std::string(60 + i % 50, 'a' + gen % 26); }

class ReadLifetimeTest : public ::testing::TestWithParam<StorageMode> {
 protected:
  Options ModeOptions() const { return test::SmallModeOptions(GetParam()); }
  uint64_t Property(DB* db, const char* name) {
    std::string v;
    EXPECT_TRUE(db->GetProperty(name, &v)) << name;
    return std::stoull(v);
  }
};

constexpr int kKeys = 6000;

// An iterator opened before many rounds of overwrites and compactions (whose
// freed pool space / deleted files are reused by newer tables) still reads
// the values of its view, and the space is released once it goes.
TEST_P(ReadLifetimeTest, LongLivedIteratorReadsItsViewWhileTablesAreReplaced) {
  test::ScratchDir dir;
  std::unique_ptr<DB> db;
  Options options = ModeOptions();
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  for (int i = 0; i < kKeys; ++i) ASSERT_TRUE(db->Put(WriteOptions(), K(i), V(i, 0)).ok());
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  // Warm the hash indexes and the mapped readers of the tables the iterator pins.
  std::string value;
  for (int i = 0; i < kKeys; i += 3) {
    ASSERT_TRUE(db->Get(ReadOptions(), K(i), &value).ok());
    ASSERT_EQ(value, V(i, 0));
  }
  auto it = db->NewIterator(ReadOptions());
  auto it2 = db->NewIterator(ReadOptions());
  it->SeekToFirst();
  int pos = 0;
  for (; pos < 100 && it->Valid(); ++pos, it->Next()) ASSERT_EQ(it->value().ToString(), V(pos, 0));
  it2->Seek(K(kKeys / 2));
  ASSERT_TRUE(it2->Valid());
  for (int gen = 1; gen <= 6; ++gen) {
    for (int i = 0; i < kKeys; ++i) {
      if ((i + gen) % 5 == 0) {
        ASSERT_TRUE(db->Delete(WriteOptions(), K(i)).ok());
      } else {
        ASSERT_TRUE(db->Put(WriteOptions(), K(i), V(i, gen)).ok());
      }
    }
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    // Reads of the new state, which lives in reused space.
    for (int i = 0; i < kKeys; i += 7) {
      Status s = db->Get(ReadOptions(), K(i), &value);
      if ((i + gen) % 5 == 0) {
        ASSERT_TRUE(s.IsNotFound()) << K(i) << " " << s.ToString() << " " << value;
      } else {
        ASSERT_TRUE(s.ok()) << s.ToString();
        ASSERT_EQ(value, V(i, gen));
      }
    }
  }
  for (; it->Valid(); ++pos, it->Next()) {
    ASSERT_EQ(it->key().ToString(), K(pos));
    ASSERT_EQ(it->value().ToString(), V(pos, 0));
  }
  ASSERT_TRUE(it->status().ok()) << it->status().ToString();
  ASSERT_EQ(pos, kKeys);
  int pos2 = kKeys / 2;
  for (; it2->Valid(); ++pos2, it2->Next()) ASSERT_EQ(it2->value().ToString(), V(pos2, 0));
  ASSERT_EQ(pos2, kKeys);
  // Backwards too.
  for (it2->SeekToLast(), pos2 = kKeys - 1; it2->Valid(); --pos2, it2->Prev()) {
    ASSERT_EQ(it2->value().ToString(), V(pos2, 0));
  }
  ASSERT_EQ(pos2, -1);
  const uint64_t pinned = GetParam() == StorageMode::kDisk ? 0 : Property(db.get(), "jigsaw.pool-used-bytes");
  it.reset();
  it2.reset();
  if (GetParam() != StorageMode::kDisk) {
    EXPECT_LE(Property(db.get(), "jigsaw.pool-used-bytes"), pinned);
  }
}

// Gets on several threads (building the hash indexes of fresh blocks at
// once) while writers and compactions replace the blocks: every value read
// is one written for that key.
TEST_P(ReadLifetimeTest, GetsAndScansSeeOnlyValuesWrittenForTheirKey) {
  test::ScratchDir dir;
  std::unique_ptr<DB> db;
  Options options = ModeOptions();
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  constexpr int kN = 3000;
  for (int i = 0; i < kN; ++i) ASSERT_TRUE(db->Put(WriteOptions(), K(i), V(i, 0)).ok());
  std::atomic<bool> stop{false}, failed{false};
  std::atomic<int> max_gen{0};
  std::vector<std::thread> threads;
  auto check = [&](const std::string& key, const std::string& value, const char* who) {
    // "g<gen>|<key>|<pad>"
    const size_t bar = value.find('|');
    if (bar == std::string::npos || value.compare(bar + 1, key.size(), key) != 0) {
      ADD_FAILURE() << who << ": " << key << " read " << value.substr(0, 40);
      failed = true;
      return;
    }
    const int gen = std::stoi(value.substr(1, bar - 1));
    const int i = std::stoi(key.substr(3));
    if (value != V(i, gen)) {
      ADD_FAILURE() << who << ": " << key << " read a torn value " << value;
      failed = true;
    }
  };
  for (int t = 0; t < 2; ++t) {
    threads.emplace_back([&, t] {
      std::string value;
      std::vector<Slice> keys;
      std::vector<std::string> ks;
      for (int i = 0; !stop && !failed; ++i) {
        const int n = (i * 7 + t * 13) % kN;
        Status s = db->Get(ReadOptions(), K(n), &value);
        if (s.ok()) {
          check(K(n), value, "Get");
        } else if (!s.IsNotFound()) {
          ADD_FAILURE() << s.ToString();
          failed = true;
        }
        if (i % 64 == 0) {
          ks.clear();
          for (int j = 0; j < 16; ++j) ks.push_back(K((n + j * 101) % kN));
          keys.assign(ks.begin(), ks.end());
          std::vector<std::string> values;
          auto statuses = db->MultiGet(ReadOptions(), keys, &values);
          for (size_t j = 0; j < ks.size(); ++j) {
            if (statuses[j].ok()) check(ks[j], values[j], "MultiGet");
          }
        }
      }
    });
  }
  threads.emplace_back([&] {
    while (!stop && !failed) {
      auto it = db->NewIterator(ReadOptions());
      int n = 0;
      for (it->SeekToFirst(); it->Valid() && !failed; it->Next(), ++n) {
        check(it->key().ToString(), it->value().ToString(), "scan");
        if (n % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      if (!it->status().ok()) {
        ADD_FAILURE() << it->status().ToString();
        failed = true;
      }
    }
  });
  for (int gen = 1; gen <= 8 && !failed; ++gen) {
    for (int i = 0; i < kN && !failed; ++i) {
      if ((i + gen) % 4 == 0) {
        ASSERT_TRUE(db->Delete(WriteOptions(), K(i)).ok());
      } else {
        ASSERT_TRUE(db->Put(WriteOptions(), K(i), V(i, gen)).ok());
      }
    }
    if (gen % 3 == 0) {
      ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    }
  }
  stop = true;
  for (auto& t : threads) t.join();
  EXPECT_FALSE(failed);
}


// Several user scans enter the same SSD tables at once (NoteUserScan's
// state moves from cold to populated under them) while Gets warm the
// mapping and compactions delete the tables under the iterators.
TEST_P(ReadLifetimeTest, ConcurrentScansOfTheSameTablesWhileTheyAreCompactedAway) {
  if (GetParam() == StorageMode::kPmem) {
    GTEST_SKIP() << "no SSD tables";
  }
  test::ScratchDir dir;
  std::unique_ptr<DB> db;
  Options options = ModeOptions();
  options.pmem_budget = 1 << 20;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  constexpr int kN = 4000;
  for (int i = 0; i < kN; ++i) ASSERT_TRUE(db->Put(WriteOptions(), K(i), V(i, 0)).ok());
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  std::atomic<bool> stop{false}, failed{false};
  std::atomic<int> gen_done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&, t] {
      while (!stop && !failed) {
        const int gen = gen_done.load();
        auto it = db->NewIterator(ReadOptions());
        int n = 0;
        for (it->SeekToFirst(); it->Valid() && !failed; it->Next(), ++n) {
          const int i = std::stoi(it->key().ToString().substr(3));
          const std::string v = it->value().ToString();
          const int g = std::stoi(v.substr(1, v.find('|') - 1));
          if (v != V(i, g) || g < gen) {
            ADD_FAILURE() << "scan " << t << ": " << it->key().ToString() << " read " << v.substr(0, 30);
            failed = true;
          }
          if (t == 0 && n % 1000 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        if (!it->status().ok() || (n != kN && !failed)) {
          ADD_FAILURE() << it->status().ToString() << " " << n;
          failed = true;
        }
      }
    });
  }
  threads.emplace_back([&] {
    std::string value;
    for (int i = 0; !stop && !failed; i = (i + 37) % kN) {
      Status s = db->Get(ReadOptions(), K(i), &value);
      const int g = s.ok() ? std::stoi(value.substr(1, value.find('|') - 1)) : -1;
      if (!s.ok() || value != V(i, g)) {
        ADD_FAILURE() << "Get " << K(i) << " " << s.ToString();
        failed = true;
      }
    }
  });
  for (int gen = 1; gen <= 4 && !failed; ++gen) {
    for (int i = 0; i < kN; ++i) ASSERT_TRUE(db->Put(WriteOptions(), K(i), V(i, gen)).ok());
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    gen_done = gen;
  }
  stop = true;
  for (auto& t : threads) t.join();
  EXPECT_FALSE(failed);
}

INSTANTIATE_TEST_SUITE_P(Modes, ReadLifetimeTest,
                         ::testing::Values(StorageMode::kPmem, StorageMode::kHybrid, StorageMode::kDisk),
                         test::ModeName);

}  // namespace
}  // namespace jigsaw
