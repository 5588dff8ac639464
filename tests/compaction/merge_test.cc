// The merge of a compaction (compaction/merge.h): the drop rules, and runs
// copied as bytes giving exactly the outputs that entry-by-entry merging
// gives.
#include "compaction/merge.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "table/merging_iterator.h"
#include "tests/support/block_test_util.h"
#include "tests/support/collecting_sink.h"

namespace jigsaw {
namespace {

using test::AlignedBuffer;
using test::TestEntry;
using CollectingSink = test::CollectingKeySetSink;

// Three overlapping blocks of random entries; sequence numbers unique
// across them (as in an LSM tree).
struct Inputs {
  std::vector<AlignedBuffer> buffers{3};
  std::vector<std::unique_ptr<BlockReader>> readers;
};

void MakeInputs(std::mt19937_64* rng, Inputs* inputs) {
  std::set<uint64_t> used_sequences;
  for (int b = 0; b < 3; ++b) {
    std::vector<TestEntry> entries;
    // Dense or sparse key ranges, so that runs of all lengths occur.
    const int stride = b == 0 ? 1 : b == 1 ? 7 : 3;
    for (int i = 0; i < 2000; i += stride) {
      if ((*rng)() % 3 == 0) continue;
      char key[16];
      std::snprintf(key, sizeof(key), "key%06d", i);
      const int versions = (*rng)() % 10 == 0 ? 2 : 1;
      for (int v = 0; v < versions; ++v) {
        uint64_t sequence;
        do {
          sequence = 1 + (*rng)() % 100000;
        } while (!used_sequences.insert(sequence).second);
        const bool deletion = (*rng)() % 8 == 0;
        entries.push_back({key, sequence, deletion ? ValueType::kDeletion : ValueType::kValue,
                           deletion ? "" : std::string((*rng)() % 60, static_cast<char>('a' + b))});
      }
    }
    test::SortInternal(&entries);
    size_t size = 0;
    ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, entries, {}, &inputs->buffers[b], &size).ok());
    std::unique_ptr<BlockReader> reader;
    ASSERT_TRUE(BlockReader::Open(BlockFormat::kKeySet, Slice(inputs->buffers[b].data(), size), {}, &reader).ok());
    inputs->readers.push_back(std::move(reader));
  }
}

std::vector<TestEntry> Merge(const Inputs& inputs, const MergeRules& rules, bool take_runs, size_t block_bytes,
                             uint64_t* spliced) {
  std::vector<std::unique_ptr<InternalIterator>> children;
  for (const auto& reader : inputs.readers) children.push_back(reader->NewIterator());
  auto input = NewMergingIterator(BytewiseComparator(), std::move(children));
  CollectingSink sink(take_runs, block_bytes);
  uint64_t read = 0;
  EXPECT_TRUE(MergeInto(input.get(), rules, &sink, nullptr, &read, spliced).ok());
  return sink.entries;
}

TEST(MergeTest, RunsGiveTheSameOutputsAsEntryByEntry) {
  std::mt19937_64 rng(77);
  for (int round = 0; round < 6; ++round) {
    Inputs inputs;
    MakeInputs(&rng, &inputs);
    MergeRules rules;
    rules.ucmp = BytewiseComparator();
    // Every version visible to every reader (shadowed ones dropped), or a
    // snapshot in the middle of the sequences (some kept).
    rules.smallest_snapshot = round % 2 == 0 ? 200000 : 50000;
    for (size_t block_bytes : {size_t{4096}, size_t{1} << 20}) {
      uint64_t spliced = 0, none = 0;
      const auto with_runs = Merge(inputs, rules, /*take_runs=*/true, block_bytes, &spliced);
      const auto without = Merge(inputs, rules, /*take_runs=*/false, block_bytes, &none);
      EXPECT_EQ(none, 0u);
      EXPECT_GT(spliced, 0u) << "no run was copied";
      ASSERT_EQ(with_runs.size(), without.size());
      for (size_t i = 0; i < without.size(); ++i) {
        ASSERT_EQ(with_runs[i].user_key, without[i].user_key) << i;
        ASSERT_EQ(with_runs[i].sequence, without[i].sequence) << i;
        ASSERT_EQ(with_runs[i].type, without[i].type) << i;
        ASSERT_EQ(with_runs[i].value, without[i].value) << i;
      }
    }
  }
}

TEST(MergeTest, ShadowedVersionsAreDroppedOnlyBelowTheOldestSnapshot) {
  std::vector<TestEntry> newer = {{"a", 30, ValueType::kValue, "a30"}, {"b", 31, ValueType::kValue, "b31"}};
  std::vector<TestEntry> older = {{"a", 10, ValueType::kValue, "a10"}, {"b", 11, ValueType::kValue, "b11"},
                                  {"c", 12, ValueType::kValue, "c12"}};
  Inputs inputs;
  inputs.buffers.resize(2);
  for (int b = 0; b < 2; ++b) {
    size_t size = 0;
    ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, b == 0 ? newer : older, {}, &inputs.buffers[b], &size).ok());
    std::unique_ptr<BlockReader> reader;
    ASSERT_TRUE(BlockReader::Open(BlockFormat::kKeySet, Slice(inputs.buffers[b].data(), size), {}, &reader).ok());
    inputs.readers.push_back(std::move(reader));
  }
  MergeRules rules;
  rules.ucmp = BytewiseComparator();
  rules.smallest_snapshot = 100;
  for (bool runs : {true, false}) {
    auto out = Merge(inputs, rules, runs, 1 << 20, nullptr);
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].value, "a30");
    EXPECT_EQ(out[1].value, "b31");
    EXPECT_EQ(out[2].value, "c12");
  }
  rules.smallest_snapshot = 20;  // a reader at 20 still sees a10 and b11
  EXPECT_EQ(Merge(inputs, rules, true, 1 << 20, nullptr).size(), 5u);
}

}  // namespace
}  // namespace jigsaw
