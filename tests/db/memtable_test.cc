#include "db/memtable.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <thread>

#include "format/bloom.h"
#include "format/keyset_block.h"
#include "format/keyset_entry.h"
#include "tests/support/block_test_util.h"

namespace jigsaw {
namespace {

TEST(MemTableTest, IteratesInInternalKeyOrderLikeABlock) {
  std::mt19937_64 rng(5);
  std::vector<test::TestEntry> entries = test::RandomEntries(&rng, 3000, 24, 200);
  std::vector<test::TestEntry> shuffled = entries;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  MemTable mem(BytewiseComparator(), 64 << 10);
  for (const auto& e : shuffled) mem.Add(e.sequence, e.type, e.user_key, e.value);
  EXPECT_EQ(mem.num_entries(), entries.size());
  auto it = mem.NewIterator();
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
    ASSERT_EQ(it->user_key().ToString(), entries[i].user_key);
    ASSERT_EQ(it->sequence(), entries[i].sequence);
    ASSERT_EQ(it->type(), entries[i].type);
    if (entries[i].type == ValueType::kValue) {
      ASSERT_EQ(it->value().ToString(), entries[i].value);
    }
  }
  EXPECT_EQ(i, entries.size());
  for (it->SeekToLast(); it->Valid(); it->Prev()) ASSERT_EQ(it->user_key().ToString(), entries[--i].user_key);
  EXPECT_EQ(i, 0u);
  // Point lookups at snapshots agree with the model.
  for (int probe = 0; probe < 500; ++probe) {
    const auto& e = entries[rng() % entries.size()];
    const SequenceNumber snapshot = rng() % 1200000;
    const test::TestEntry* want = test::ModelGet(entries, e.user_key, snapshot);
    ValueType type;
    [[maybe_unused]] SequenceNumber found_sequence = 0;
    std::string value;
    const bool found = mem.Get(e.user_key, snapshot, &type, &value, &found_sequence);
    ASSERT_EQ(found, want != nullptr);
    if (found) {
      ASSERT_EQ(type, want->type);
      if (type == ValueType::kValue) {
        ASSERT_EQ(value, want->value);
      }
    }
  }
}

TEST(MemTableTest, NodesUseTheKeySetEntryLayout) {
  MemTable mem(BytewiseComparator());
  mem.Add(7, ValueType::kValue, "key", "value");
  auto it = mem.NewIterator();
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  // The key slice points into the node; the node header precedes the links.
  const char* key = it->user_key().data();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(key) % 8, 0u);
  EXPECT_EQ(it->value().ToString(), "value");
}

// The counters a flush sizes its block from, without walking the entries.
TEST(MemTableTest, CountsValueBytesAndEntryBytesForTheFlush) {
  MemTable mem(BytewiseComparator());
  EXPECT_EQ(mem.value_bytes(), 0u);
  EXPECT_EQ(mem.sizing_entry_bytes(), 0u);
  mem.Add(1, ValueType::kValue, "k", "12345");
  mem.Add(2, ValueType::kDeletion, "a-longer-key-of-25-bytes!", "");
  mem.Add(3, ValueType::kValue, "", "x");
  EXPECT_EQ(mem.value_bytes(), 6u);
  EXPECT_EQ(mem.sizing_entry_bytes(),
            keyset::SizingEntryBytes(1) + keyset::SizingEntryBytes(25) + keyset::SizingEntryBytes(0));
}

// A flush's view: entries in internal-key order with their values' offsets
// in the value log, and the log itself -- every value in the order added,
// across chunk boundaries, values larger than a quarter chunk and empty
// values (tombstones) included.
TEST(MemTableTest, ValueLogHoldsEveryValueAtItsEntrysOffset) {
  std::mt19937_64 rng(11);
  std::vector<test::TestEntry> entries = test::RandomEntries(&rng, 2000, 20, 300);
  for (size_t i = 0; i < entries.size(); i += 97) entries[i].value.assign(5000 + i, 'L');  // > chunk / 4
  std::vector<test::TestEntry> shuffled = entries;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  MemTable mem(BytewiseComparator(), 16 << 10);
  uint64_t added_value_bytes = 0;
  for (const auto& e : shuffled) {
    mem.Add(e.sequence, e.type, e.user_key, e.value);
    added_value_bytes += e.value.size();
  }
  ASSERT_EQ(mem.value_bytes(), added_value_bytes);
  std::string log(mem.value_bytes(), '\0');
  mem.CopyValuesTo(log.data());
  // The log is the values in the order they were added.
  std::string expected_log;
  for (const auto& e : shuffled) expected_log += e.value;
  EXPECT_EQ(log, expected_log);
  size_t i = 0;
  mem.ForEachEntry([&](const MemTable::FlushEntry& e) {
    ASSERT_LT(i, entries.size());
    EXPECT_EQ(e.key.ToString(), entries[i].user_key);
    EXPECT_EQ(e.tag, PackTag(entries[i].sequence, entries[i].type));
    EXPECT_EQ(e.key_hash, bloom::KeyHash(e.key));
    ASSERT_LE(e.value_offset + e.value_size, log.size());
    EXPECT_EQ(log.substr(e.value_offset, e.value_size), entries[i].value);
    EXPECT_EQ(std::string(e.value, e.value_size), entries[i].value);
    ++i;
  });
  EXPECT_EQ(i, entries.size());
  EXPECT_GE(mem.ApproximateMemoryUsage(), added_value_bytes);
}

// The flush's walk (several stretches of the skiplist at once, in
// batches) visits every entry once, in the iterator's order, however tall
// the skiplist: empty, one entry, and large ones filled one writer at a
// time or by several at once.
TEST(MemTableTest, FlushWalkVisitsEveryEntryInOrder) {
  for (int entries : {0, 1, 2, 17, 300, 60000}) {
    for (bool concurrently : {false, true}) {
      if (concurrently && entries < 300) continue;
      MemTable mem(BytewiseComparator(), 1 << 16);
      auto add_range = [&](int from, int step) {
        for (int i = from; i < entries; i += step) {
          const std::string key = std::to_string((i * 7919ull) % 1000003);
          if (concurrently) {
            mem.AddConcurrently(static_cast<SequenceNumber>(i + 1), ValueType::kValue, key, "v" + key);
          } else {
            mem.Add(static_cast<SequenceNumber>(i + 1), ValueType::kValue, key, "v" + key);
          }
        }
      };
      if (concurrently) {
        std::thread other([&] { add_range(1, 2); });
        add_range(0, 2);
        other.join();
      } else {
        add_range(0, 1);
      }
      std::vector<std::string> expected;
      auto it = mem.NewIterator();
      for (it->SeekToFirst(); it->Valid(); it->Next()) expected.push_back(it->user_key().ToString());
      ASSERT_EQ(expected.size(), static_cast<size_t>(entries));
      std::vector<std::string> walked;
      size_t batches = 0;
      for (bool reads_values : {false, true}) {
        walked.clear();
        mem.ForEachEntryBatch(
            [&](const MemTable::FlushEntry* batch, size_t n) {
              ASSERT_GT(n, 0u);
              ++batches;
              for (size_t i = 0; i < n; ++i) {
                walked.push_back(batch[i].key.ToString());
                ASSERT_EQ(std::string(batch[i].value, batch[i].value_size), "v" + walked.back());
              }
            },
            reads_values);
        ASSERT_EQ(walked, expected) << entries << " entries, concurrently " << concurrently;
      }
      if (entries > 1000) {
        EXPECT_GT(batches, 2u);  // the walk hands over batches as it goes
      }
    }
  }
}

// One writer, concurrent readers: readers always see a sorted list whose
// entries are complete (run under TSan via the concurrency test target too).
TEST(MemTableTest, ReadersRunConcurrentlyWithOneWriter) {
  MemTable mem(BytewiseComparator(), 64 << 10);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int i = 0; i < 20000; ++i) {
      mem.Add(static_cast<SequenceNumber>(i + 1), ValueType::kValue, "k" + std::to_string(i * 7919 % 20000),
              std::to_string(i));
    }
    done = true;
  });
  while (!done) {
    auto it = mem.NewIterator();
    std::string previous;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string key = it->user_key().ToString();
      ASSERT_TRUE(previous.empty() || previous < key);
      ASSERT_FALSE(it->value().empty());
      previous = key;
    }
  }
  writer.join();
  EXPECT_EQ(mem.num_entries(), 20000u);
}

// Several writers at once (AddConcurrently), readers beside them: readers
// always see a sorted list of complete entries, and the result is the table
// one writer would have built -- same order, same lookups, every value at its
// entry's offset in the value log (the flush copies the log whole). A serial
// Add afterwards, at the end and in the middle, still keeps the order (its
// tail pointers are rebuilt).
TEST(MemTableTest, ConcurrentWritersBuildTheTableOneWriterWould) {
  std::mt19937_64 rng(23);
  std::vector<test::TestEntry> entries = test::RandomEntries(&rng, 8000, 24, 300);
  for (size_t i = 0; i < entries.size(); i += 211) entries[i].value.assign(3000 + i, 'L');  // > chunk / 4
  std::vector<test::TestEntry> shuffled = entries;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  std::map<std::pair<std::string, SequenceNumber>, const test::TestEntry*> by_version;
  for (const auto& e : entries) by_version[{e.user_key, e.sequence}] = &e;
  MemTable mem(BytewiseComparator(), 8 << 10, 4 << 10);
  constexpr int kWriters = 4;
  std::atomic<int> writers_done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; ++t) {
    threads.emplace_back([&, t] {
      for (size_t i = t; i < shuffled.size(); i += kWriters) {
        const auto& e = shuffled[i];
        mem.AddConcurrently(e.sequence, e.type, e.user_key, e.value);
      }
      ++writers_done;
    });
  }
  int scans = 0;
  while (writers_done.load() < kWriters || scans == 0) {
    auto it = mem.NewIterator();
    std::string previous_key;
    SequenceNumber previous_sequence = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string key = it->user_key().ToString();
      ASSERT_TRUE(previous_key.empty() || previous_key < key ||
                  (previous_key == key && previous_sequence > it->sequence()));
      const test::TestEntry* e = by_version.at({key, it->sequence()});  // complete: its value is all there
      ASSERT_EQ(it->type(), e->type);
      if (e->type == ValueType::kValue) {
        ASSERT_EQ(it->value().ToString(), e->value);
      }
      previous_key = key;
      previous_sequence = it->sequence();
    }
    ++scans;
  }
  for (auto& thread : threads) thread.join();

  ASSERT_EQ(mem.num_entries(), entries.size());
  uint64_t value_bytes = 0, entry_bytes = 0;
  for (const auto& e : entries) {
    value_bytes += e.value.size();
    entry_bytes += keyset::SizingEntryBytes(e.user_key.size());
  }
  EXPECT_EQ(mem.value_bytes(), value_bytes);
  EXPECT_EQ(mem.sizing_entry_bytes(), entry_bytes);
  std::string log(mem.value_bytes(), '\0');
  mem.CopyValuesTo(log.data());
  size_t i = 0;
  mem.ForEachEntry([&](const MemTable::FlushEntry& e) {
    ASSERT_LT(i, entries.size());
    EXPECT_EQ(e.key.ToString(), entries[i].user_key);
    EXPECT_EQ(e.tag, PackTag(entries[i].sequence, entries[i].type));
    ASSERT_LE(e.value_offset + e.value_size, log.size());
    EXPECT_EQ(log.substr(e.value_offset, e.value_size), entries[i].value);
    EXPECT_EQ(std::string(e.value, e.value_size), entries[i].value);
    ++i;
  });
  EXPECT_EQ(i, entries.size());
  for (int probe = 0; probe < 2000; ++probe) {
    const auto& e = entries[rng() % entries.size()];
    const SequenceNumber snapshot = rng() % 1200000;
    const test::TestEntry* want = test::ModelGet(entries, e.user_key, snapshot);
    ValueType type;
    [[maybe_unused]] SequenceNumber found_sequence = 0;
    std::string value;
    ASSERT_EQ(mem.Get(e.user_key, snapshot, &type, &value, &found_sequence), want != nullptr) << e.user_key;
    if (want != nullptr) {
      ASSERT_EQ(type, want->type);
      if (type == ValueType::kValue) {
        ASSERT_EQ(value, want->value);
      }
    }
  }

  // One writer again: after every key (the tail path) and in the middle.
  const SequenceNumber next = 2000000;
  mem.Add(next, ValueType::kValue, "\xff\xff-after-all", "tail");
  mem.Add(next + 1, ValueType::kValue, "\xff\xff-after-all-2", "tail2");
  mem.Add(next + 2, ValueType::kValue, entries[entries.size() / 2].user_key + "-mid", "mid");
  std::vector<std::string> keys;
  auto it = mem.NewIterator();
  for (it->SeekToFirst(); it->Valid(); it->Next()) keys.push_back(it->user_key().ToString());
  ASSERT_EQ(keys.size(), entries.size() + 3);
  EXPECT_TRUE(std::is_sorted(keys.begin(), keys.end()));
  EXPECT_EQ(keys.back(), "\xff\xff-after-all-2");
  ValueType type;
  [[maybe_unused]] SequenceNumber found_sequence = 0;
  std::string value;
  ASSERT_TRUE(mem.Get("\xff\xff-after-all", kMaxSequenceNumber, &type, &value, &found_sequence));
  EXPECT_EQ(value, "tail");
}

// The whole-key filter only skips lookups: with or without it, Get gives
// the same answers -- every added key found with its newest value, absent
// keys not -- also when the filter is far too small (saturated).
TEST(MemTableTest, FilteredGetAnswersLikeUnfiltered) {
  for (size_t filter_bytes : {size_t{64}, size_t{4} << 10, size_t{256} << 10}) {
    MemTable plain(BytewiseComparator(), 64 << 10);
    MemTable filtered(BytewiseComparator(), 64 << 10, filter_bytes);
    for (int i = 0; i < 5000; ++i) {
      const std::string key = "key" + std::to_string(i * 7 % 3000);  // some keys twice
      const ValueType type = i % 11 == 0 ? ValueType::kDeletion : ValueType::kValue;
      plain.Add(static_cast<SequenceNumber>(i + 1), type, key, std::to_string(i));
      filtered.Add(static_cast<SequenceNumber>(i + 1), type, key, std::to_string(i));
    }
    int found = 0;
    for (int i = 0; i < 6000; ++i) {  // keys 3000..5999 were never added
      const std::string key = "key" + std::to_string(i);
      ValueType plain_type = ValueType::kValue, filtered_type = ValueType::kValue;
      std::string plain_value, filtered_value;
      SequenceNumber plain_sequence = 0, filtered_sequence = 0;
      const bool in_plain = plain.Get(key, kMaxSequenceNumber, &plain_type, &plain_value, &plain_sequence);
      const bool in_filtered = filtered.Get(key, kMaxSequenceNumber, &filtered_type, &filtered_value, &filtered_sequence);
      ASSERT_EQ(in_plain, in_filtered) << key << " filter " << filter_bytes;
      ASSERT_EQ(in_plain, i < 3000) << key;
      if (in_plain) {
        ++found;
        EXPECT_EQ(plain_type, filtered_type) << key;
        EXPECT_EQ(plain_sequence, filtered_sequence) << key;
        EXPECT_EQ(plain_value, filtered_value) << key;
      }
    }
    EXPECT_EQ(found, 3000);
  }
}

// A reader that learns of an entry through the writer's release (as the DB
// publishes sequence numbers) finds it through the filter.
TEST(MemTableTest, FilterNeverHidesAPublishedEntryFromAConcurrentReader) {
  MemTable mem(BytewiseComparator(), 64 << 10, 8 << 10);
  constexpr int kKeys = 20000;
  constexpr int kChecksEvery = 500;  // the writer lets the reader check at least once per 500 adds
  std::atomic<int> published{0};
  std::atomic<int> checks{0};
  std::thread writer([&] {
    for (int i = 1; i <= kKeys; ++i) {
      // Reads and writes interleave however fast either thread runs.
      if (i % kChecksEvery == 0) {
        while (checks.load(std::memory_order_acquire) < i / kChecksEvery) std::this_thread::yield();
      }
      mem.Add(static_cast<SequenceNumber>(i), ValueType::kValue, "k" + std::to_string(i), std::to_string(i));
      published.store(i, std::memory_order_release);
    }
  });
  std::mt19937 rng(7);
  int checked = 0;
  while (published.load(std::memory_order_acquire) < kKeys) {
    const int last = published.load(std::memory_order_acquire);
    if (last == 0) continue;
    const int i = 1 + static_cast<int>(rng() % static_cast<uint32_t>(last));
    ValueType type;
    [[maybe_unused]] SequenceNumber found_sequence = 0;
    std::string value;
    // Not ASSERT: returning early would leave the writer waiting for checks.
    if (!mem.Get("k" + std::to_string(i), static_cast<SequenceNumber>(last), &type, &value, &found_sequence)) {
      ADD_FAILURE() << "published key " << i << " not found";
      break;
    }
    if (value != std::to_string(i)) {
      ADD_FAILURE() << "key " << i << " has value " << value;
      break;
    }
    ++checked;
    checks.store(checked, std::memory_order_release);
  }
  checks.store(kKeys, std::memory_order_release);  // releases a waiting writer if the loop ended early
  writer.join();
  EXPECT_GE(checked, kKeys / kChecksEvery);
}

}  // namespace
}  // namespace jigsaw
