// The compaction picker (compaction/picker.h): pure functions over a
// Version and the options, tested on hand-made versions -- which level is
// scored over its target, which tables a step takes, where its outputs go,
// and when a step is a trivial move.
#include "compaction/picker.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "pmem/pool_sizing.h"

namespace jigsaw {
namespace {

const Comparator* const kBytewise = BytewiseComparator();

TableRef MakeTable(uint64_t number, const std::string& smallest, const std::string& largest, uint64_t size,
                   Residence residence = Residence::kPmem) {
  auto t = std::make_shared<TableMeta>();
  t->number = number;
  t->smallest = smallest;
  t->largest = largest;
  t->size = size;
  t->residence = residence;
  return t;
}

std::vector<uint64_t> Numbers(const std::vector<TableRef>& tables) {
  std::vector<uint64_t> numbers;
  for (const TableRef& t : tables) numbers.push_back(t->number);
  return numbers;
}

Options SmallOptions() {
  Options options;
  options.level0_compaction_trigger = 4;
  options.level1_size = 100;
  options.level_size_multiplier = 10;
  return options;
}

TEST(PickerTest, MaxBytesForLevelGrowsByTheMultiplier) {
  const Options options = SmallOptions();
  EXPECT_EQ(MaxBytesForLevel(options, 1), 100u);
  EXPECT_EQ(MaxBytesForLevel(options, 2), 1000u);
  EXPECT_EQ(MaxBytesForLevel(options, 4), 100000u);
}

TEST(PickerTest, NothingIsPickedWhileEveryLevelIsWithinItsTarget) {
  Version v;
  v.levels[0] = {MakeTable(1, "a", "z", 10), MakeTable(2, "a", "z", 10), MakeTable(3, "a", "z", 10)};
  v.levels[1] = {MakeTable(4, "a", "m", 50), MakeTable(5, "n", "z", 50)};  // exactly at target
  std::string pointers[kNumLevels];
  Compaction c;
  EXPECT_FALSE(PickCompaction(v, SmallOptions(), pointers, /*l0_wanted_by_reads=*/false, &c));
}

// Reads that keep meeting L0 tables ask for them to go down below the
// trigger -- but a level over its target still comes first, and an empty
// L0 gives nothing to do.
TEST(PickerTest, ReadsAskForLevelZeroBelowItsTriggerOnlyWhenNothingElseIsDue) {
  Version v;
  v.levels[0] = {MakeTable(2, "c", "f", 10), MakeTable(1, "a", "d", 10)};
  v.levels[1] = {MakeTable(4, "a", "b", 40), MakeTable(5, "e", "g", 40), MakeTable(6, "h", "k", 20)};
  std::string pointers[kNumLevels];
  Compaction c;
  EXPECT_FALSE(PickCompaction(v, SmallOptions(), pointers, /*l0_wanted_by_reads=*/false, &c));
  ASSERT_TRUE(PickCompaction(v, SmallOptions(), pointers, /*l0_wanted_by_reads=*/true, &c));
  EXPECT_EQ(c.level, 0);
  EXPECT_EQ(Numbers(c.inputs[0]), (std::vector<uint64_t>{2, 1}));
  EXPECT_EQ(Numbers(c.inputs[1]), (std::vector<uint64_t>{4, 5}));  // [a, f]

  v.levels[1].push_back(MakeTable(7, "l", "z", 100));  // L1 over its target
  ASSERT_TRUE(PickCompaction(v, SmallOptions(), pointers, /*l0_wanted_by_reads=*/true, &c));
  EXPECT_EQ(c.level, 1);

  Version empty_l0;
  empty_l0.levels[1] = {MakeTable(4, "a", "b", 40)};
  EXPECT_FALSE(PickCompaction(empty_l0, SmallOptions(), pointers, /*l0_wanted_by_reads=*/true, &c));
}

TEST(PickerTest, LevelZeroAtItsTriggerTakesAllItsTablesAndTheirOverlapBelow) {
  Version v;
  v.levels[0] = {MakeTable(4, "c", "f", 10), MakeTable(3, "a", "d", 10), MakeTable(2, "e", "g", 10),
                 MakeTable(1, "b", "c", 10)};
  v.levels[1] = {MakeTable(10, "a", "b", 10), MakeTable(11, "c", "e", 10), MakeTable(12, "h", "k", 10)};
  std::string pointers[kNumLevels];
  Compaction c;
  ASSERT_TRUE(PickCompaction(v, SmallOptions(), pointers, /*l0_wanted_by_reads=*/false, &c));
  EXPECT_EQ(c.level, 0);
  EXPECT_EQ(c.output_level(), 1);
  EXPECT_EQ(Numbers(c.inputs[0]), (std::vector<uint64_t>{4, 3, 2, 1}));
  EXPECT_EQ(Numbers(c.inputs[1]), (std::vector<uint64_t>{10, 11}));  // [a, g] overlaps 10 and 11, not 12
  EXPECT_EQ(c.InputBytes(), 60u);
}

TEST(PickerTest, TheLevelFurthestOverItsTargetWins) {
  Version v;
  v.levels[0] = {MakeTable(1, "a", "b", 1), MakeTable(2, "a", "b", 1), MakeTable(3, "a", "b", 1),
                 MakeTable(4, "a", "b", 1), MakeTable(5, "a", "b", 1)};  // score 5/4
  v.levels[1] = {MakeTable(6, "a", "c", 300)};                           // score 3
  v.levels[2] = {MakeTable(7, "a", "c", 1500)};                          // score 1.5
  std::string pointers[kNumLevels];
  Compaction c;
  ASSERT_TRUE(PickCompaction(v, SmallOptions(), pointers, /*l0_wanted_by_reads=*/false, &c));
  EXPECT_EQ(c.level, 1);
  EXPECT_EQ(Numbers(c.inputs[0]), (std::vector<uint64_t>{6}));
  EXPECT_EQ(Numbers(c.inputs[1]), (std::vector<uint64_t>{7}));
}

// A deeper level takes one table at a time, round robin over its key space:
// the table after the level's compact pointer, which then moves on.
TEST(PickerTest, DeeperLevelsTakeTablesRoundRobinAfterTheCompactPointer) {
  Version v;
  v.levels[1] = {MakeTable(1, "a", "c", 100), MakeTable(2, "d", "f", 100), MakeTable(3, "g", "i", 100)};
  std::string pointers[kNumLevels];
  std::vector<uint64_t> picked;
  for (int round = 0; round < 4; ++round) {
    Compaction c;
    ASSERT_TRUE(PickCompaction(v, SmallOptions(), pointers, /*l0_wanted_by_reads=*/false, &c));
    ASSERT_EQ(c.inputs[0].size(), 1u);
    picked.push_back(c.inputs[0][0]->number);
    EXPECT_EQ(pointers[1], c.inputs[0][0]->largest);
  }
  EXPECT_EQ(picked, (std::vector<uint64_t>{1, 2, 3, 1}));
}

// Neighbours that share a boundary user key hold versions of one key: they
// move together, or a newer version could land below an older one.
TEST(PickerTest, NeighboursSharingABoundaryKeyArePickedTogether) {
  Version v;
  v.levels[1] = {MakeTable(1, "a", "c", 100), MakeTable(2, "c", "e", 100), MakeTable(3, "e", "g", 100),
                 MakeTable(4, "h", "i", 100)};
  std::string pointers[kNumLevels];
  Compaction c;
  ASSERT_TRUE(PickCompaction(v, SmallOptions(), pointers, /*l0_wanted_by_reads=*/false, &c));
  EXPECT_EQ(Numbers(c.inputs[0]), (std::vector<uint64_t>{1, 2, 3}));
  EXPECT_EQ(pointers[1], "g");
}

TEST(PickerTest, OverlapAndRangeExtension) {
  Version v;
  v.levels[2] = {MakeTable(1, "b", "d", 1), MakeTable(2, "f", "h", 1), MakeTable(3, "j", "l", 1)};
  Compaction c;
  c.level = 1;
  c.inputs[0] = {MakeTable(9, "c", "e", 1), MakeTable(8, "g", "g", 1)};
  AddOverlappingInputs(v, kBytewise, &c);
  EXPECT_EQ(Numbers(c.inputs[1]), (std::vector<uint64_t>{1, 2}));

  std::string smallest, largest;
  bool any = false;
  ExtendRange(kBytewise, {}, &smallest, &largest, &any);
  EXPECT_FALSE(any);
  ExtendRange(kBytewise, c.inputs[0], &smallest, &largest, &any);
  EXPECT_TRUE(any);
  EXPECT_EQ(smallest, "c");
  EXPECT_EQ(largest, "g");
  ExtendRange(kBytewise, {MakeTable(7, "a", "b", 1)}, &smallest, &largest, &any);
  EXPECT_EQ(smallest, "a");
  EXPECT_EQ(largest, "g");
}

TEST(PickerTest, BaseLevelForKeyLooksAtEveryDeeperLevel) {
  Version v;
  v.levels[2] = {MakeTable(1, "b", "d", 1)};
  v.levels[5] = {MakeTable(2, "m", "p", 1)};
  EXPECT_FALSE(IsBaseLevelForKey(v, kBytewise, 1, "c"));
  EXPECT_TRUE(IsBaseLevelForKey(v, kBytewise, 2, "c"));  // only deeper levels count
  EXPECT_FALSE(IsBaseLevelForKey(v, kBytewise, 1, "n"));
  EXPECT_TRUE(IsBaseLevelForKey(v, kBytewise, 1, "e"));
  EXPECT_TRUE(IsBaseLevelForKey(v, kBytewise, 5, "n"));
}

TEST(PickerTest, RangeStepsTakeTheOldestLevelZeroTablesOrTheFirstTableInRange) {
  Version v;
  v.levels[0] = {MakeTable(5, "a", "z", 1), MakeTable(4, "a", "z", 1), MakeTable(3, "a", "z", 1)};
  v.levels[1] = {MakeTable(1, "a", "c", 1), MakeTable(2, "c", "f", 1), MakeTable(6, "g", "k", 1)};
  Compaction c;
  ASSERT_TRUE(PickRangeStep(v, kBytewise, 0, nullptr, nullptr, 2, &c));
  EXPECT_EQ(Numbers(c.inputs[0]), (std::vector<uint64_t>{4, 3}));  // the two oldest
  ASSERT_TRUE(PickRangeStep(v, kBytewise, 0, nullptr, nullptr, SIZE_MAX, &c));
  EXPECT_EQ(Numbers(c.inputs[0]), (std::vector<uint64_t>{5, 4, 3}));

  const Slice begin("b"), end("d");
  ASSERT_TRUE(PickRangeStep(v, kBytewise, 1, &begin, &end, SIZE_MAX, &c));
  EXPECT_EQ(c.level, 1);
  // Table 1 is the first in range; table 2 shares its boundary key "c".
  EXPECT_EQ(Numbers(c.inputs[0]), (std::vector<uint64_t>{1, 2}));
  const Slice after("l");
  EXPECT_FALSE(PickRangeStep(v, kBytewise, 1, &after, nullptr, SIZE_MAX, &c));
  EXPECT_FALSE(PickRangeStep(v, kBytewise, 3, nullptr, nullptr, SIZE_MAX, &c));
}

// A split step halves the lower inputs, never ending inside a key that the
// next table shares, and records the key it splits at.
TEST(PickerTest, SplitsHalveTheLowerInputsAtAKeyBoundary) {
  const std::vector<TableRef> lower = {MakeTable(1, "a", "b", 1), MakeTable(2, "c", "d", 1),
                                       MakeTable(3, "d", "e", 1), MakeTable(4, "f", "g", 1),
                                       MakeTable(5, "h", "i", 1)};
  Compaction c;
  size_t count = lower.size();
  ASSERT_TRUE(NextSplit(kBytewise, lower, &count, &c));
  // 5 / 2 = 2 would end at "d", which table 3 shares: back to 1.
  EXPECT_EQ(count, 1u);
  EXPECT_TRUE(c.split);
  EXPECT_EQ(c.split_key, "b");
  EXPECT_EQ(Numbers(c.inputs[1]), (std::vector<uint64_t>{1}));
  EXPECT_FALSE(NextSplit(kBytewise, lower, &count, &c));  // nothing smaller

  size_t four = 4;
  const std::vector<TableRef> disjoint = {MakeTable(1, "a", "b", 1), MakeTable(2, "c", "d", 1),
                                          MakeTable(3, "e", "f", 1), MakeTable(4, "g", "h", 1)};
  ASSERT_TRUE(NextSplit(kBytewise, disjoint, &four, &c));
  EXPECT_EQ(four, 2u);
  EXPECT_EQ(c.split_key, "d");
}

TEST(PickerTest, TrivialMoveNeedsNoOverlapBelowDisjointInputsAndTheSameTier) {
  Compaction c;
  c.level = 1;
  c.inputs[0] = {MakeTable(1, "a", "c", 1)};
  EXPECT_TRUE(IsTrivialMove(c, kBytewise, /*output_to_ssd=*/false));
  EXPECT_FALSE(IsTrivialMove(c, kBytewise, /*output_to_ssd=*/true));  // pmem block into an SSD level

  c.inputs[0] = {MakeTable(1, "a", "c", 1, Residence::kSsd)};
  EXPECT_TRUE(IsTrivialMove(c, kBytewise, /*output_to_ssd=*/true));
  EXPECT_FALSE(IsTrivialMove(c, kBytewise, /*output_to_ssd=*/false));

  c.inputs[0] = {MakeTable(1, "a", "c", 1)};
  c.inputs[1] = {MakeTable(2, "b", "d", 1)};
  EXPECT_FALSE(IsTrivialMove(c, kBytewise, false));  // something below overlaps

  // L0 tables may overlap each other: then they must be merged.
  c.level = 0;
  c.inputs[1].clear();
  c.inputs[0] = {MakeTable(3, "d", "f", 1), MakeTable(1, "a", "c", 1)};
  EXPECT_TRUE(IsTrivialMove(c, kBytewise, false));  // disjoint, in any order
  c.inputs[0] = {MakeTable(3, "c", "f", 1), MakeTable(1, "a", "c", 1)};
  EXPECT_FALSE(IsTrivialMove(c, kBytewise, false));  // share "c"

  c.inputs[0] = {MakeTable(1, "a", "c", 1)};
  c.split = true;
  EXPECT_FALSE(IsTrivialMove(c, kBytewise, false));
  c.split = false;
  c.inputs[0].clear();
  EXPECT_FALSE(IsTrivialMove(c, kBytewise, false));
}

TEST(PickerTest, AMigrationIsATrivialMoveOfPmemBlocksIntoAnSsdLevel) {
  Compaction c;
  c.level = 1;
  c.inputs[0] = {MakeTable(1, "a", "c", 1)};
  EXPECT_TRUE(IsMigration(c, kBytewise, /*output_to_ssd=*/true));
  EXPECT_FALSE(IsMigration(c, kBytewise, /*output_to_ssd=*/false));  // a trivial move
  c.inputs[0] = {MakeTable(1, "a", "c", 1, Residence::kSsd)};
  EXPECT_FALSE(IsMigration(c, kBytewise, true));  // already on SSD: a trivial move
  c.inputs[0] = {MakeTable(1, "a", "c", 1), MakeTable(2, "d", "e", 1, Residence::kSsd)};
  EXPECT_FALSE(IsMigration(c, kBytewise, true));  // mixed tiers: merged
  c.inputs[0] = {MakeTable(1, "a", "c", 1)};
  c.inputs[1] = {MakeTable(2, "b", "d", 1, Residence::kSsd)};
  EXPECT_FALSE(IsMigration(c, kBytewise, true));  // something below overlaps
  c.level = 0;
  c.inputs[1].clear();
  c.inputs[0] = {MakeTable(3, "d", "f", 1), MakeTable(1, "a", "c", 1)};
  EXPECT_TRUE(IsMigration(c, kBytewise, true));
  c.inputs[0] = {MakeTable(3, "c", "f", 1), MakeTable(1, "a", "c", 1)};
  EXPECT_FALSE(IsMigration(c, kBytewise, true));  // L0 tables that overlap are merged
  c.inputs[0] = {MakeTable(1, "a", "c", 1)};
  c.split = true;
  EXPECT_FALSE(IsMigration(c, kBytewise, true));
}

TEST(PickerTest, PlacementByStorageMode) {
  Version v;
  Options options = SmallOptions();
  options.storage_mode = StorageMode::kDisk;
  EXPECT_TRUE(OutputToSsd(v, options, 1 << 30, false, 1, 10));
  options.storage_mode = StorageMode::kPmem;
  EXPECT_FALSE(OutputToSsd(v, options, 0, true, 6, 1 << 30));
}

// Hybrid mode keeps a level in pmem only while the levels down to it fit
// the budget at their targets and the output fits what is left now.
TEST(PickerTest, HybridPlacementFollowsTheBudget) {
  Options options = SmallOptions();
  options.storage_mode = StorageMode::kHybrid;
  options.memtable_size = 1 << 20;
  options.level0_stop_trigger = 4;
  options.level1_size = 4 << 20;
  Version v;
  const uint64_t budget = 64 << 20;
  EXPECT_FALSE(OutputToSsd(v, options, budget, false, 1, 1 << 20));   // 4 + 4 MiB of targets
  EXPECT_FALSE(OutputToSsd(v, options, budget, false, 2, 1 << 20));   // + 40 MiB
  EXPECT_TRUE(OutputToSsd(v, options, budget, false, 3, 1 << 20));    // + 400 MiB: over
  EXPECT_TRUE(OutputToSsd(v, options, budget, /*pool_full=*/true, 1, 1 << 20));
  // Blocks already in pmem count against the budget.
  v.levels[2] = {MakeTable(1, "a", "z", 60 << 20)};
  EXPECT_TRUE(OutputToSsd(v, options, budget, false, 1, 8 << 20));
  v.levels[2][0]->residence = Residence::kSsd;
  EXPECT_FALSE(OutputToSsd(v, options, budget, false, 1, 8 << 20));
}

TEST(PickerTest, PmemBlockBudgetIsTheOptionOrHalfThePoolAndNeverMoreThanTheRoom) {
  Options options;
  options.pmem_budget = 0;
  const uint64_t pool = uint64_t{1} << 30;
  const uint64_t half = PmemBlockBudget(options, pool);
  EXPECT_EQ(half, pool / 2);
  options.pmem_budget = 100 << 20;
  EXPECT_EQ(PmemBlockBudget(options, pool), uint64_t{100} << 20);
  options.pmem_budget = uint64_t{4} << 30;  // more than the pool holds
  EXPECT_LT(PmemBlockBudget(options, pool), pool);
}

// L0 at its trigger (score exactly 1) is picked, and wins a tie with a
// deeper level: a deeper level must score strictly higher to be preferred.
TEST(PickerTest, LevelZeroWinsATieWithADeeperLevel) {
  Version v;
  for (uint64_t n = 1; n <= 8; ++n) v.levels[0].push_back(MakeTable(n, "a", "b", 1));  // score 8/4 = 2
  v.levels[1] = {MakeTable(10, "c", "d", 200)};                                         // score 200/100 = 2
  std::string pointers[kNumLevels];
  Compaction c;
  ASSERT_TRUE(PickCompaction(v, SmallOptions(), pointers, /*l0_wanted_by_reads=*/false, &c));
  EXPECT_EQ(c.level, 0);
  EXPECT_EQ(c.inputs[0].size(), 8u);
  EXPECT_TRUE(c.inputs[1].empty());  // [a, b] does not reach [c, d]
  EXPECT_TRUE(pointers[1].empty());  // an L0 pick moves no compact pointer

  v.levels[1][0]->size = 201;  // now L1 is strictly further over
  ASSERT_TRUE(PickCompaction(v, SmallOptions(), pointers, /*l0_wanted_by_reads=*/false, &c));
  EXPECT_EQ(c.level, 1);
}

// L0 below its trigger is left alone while a deeper level over its target
// is compacted; the last level has no level below and is never scored.
TEST(PickerTest, LevelZeroBelowTriggerYieldsAndTheLastLevelIsNeverPicked) {
  Version v;
  v.levels[0] = {MakeTable(1, "a", "z", 1000), MakeTable(2, "a", "z", 1000), MakeTable(3, "a", "z", 1000)};
  v.levels[2] = {MakeTable(4, "a", "m", 1001)};  // target 1000
  std::string pointers[kNumLevels];
  Compaction c;
  ASSERT_TRUE(PickCompaction(v, SmallOptions(), pointers, /*l0_wanted_by_reads=*/false, &c));
  EXPECT_EQ(c.level, 2);
  EXPECT_EQ(c.output_level(), 3);
  EXPECT_EQ(Numbers(c.inputs[0]), (std::vector<uint64_t>{4}));

  Version last;
  last.levels[kNumLevels - 1] = {MakeTable(5, "a", "z", uint64_t{1} << 40)};
  EXPECT_FALSE(PickCompaction(last, SmallOptions(), pointers, /*l0_wanted_by_reads=*/false, &c));
}

// A compact pointer that falls inside a table's range (the table it named
// was since replaced) picks that table: the first whose largest key is
// after the pointer.
TEST(PickerTest, ACompactPointerInsideATablePicksThatTable) {
  Version v;
  v.levels[1] = {MakeTable(1, "a", "c", 100), MakeTable(2, "d", "f", 100), MakeTable(3, "g", "i", 100)};
  std::string pointers[kNumLevels];
  pointers[1] = "e";
  Compaction c;
  ASSERT_TRUE(PickCompaction(v, SmallOptions(), pointers, /*l0_wanted_by_reads=*/false, &c));
  EXPECT_EQ(Numbers(c.inputs[0]), (std::vector<uint64_t>{2}));
  EXPECT_EQ(pointers[1], "f");
  pointers[1] = "z";  // past every table: wraps to the first
  ASSERT_TRUE(PickCompaction(v, SmallOptions(), pointers, /*l0_wanted_by_reads=*/false, &c));
  EXPECT_EQ(Numbers(c.inputs[0]), (std::vector<uint64_t>{1}));
}

// A deeper level's pick takes every table of the level below that touches
// its range, boundary keys included, and nothing else.
TEST(PickerTest, APickTakesTheTablesBelowThatTouchItsRange) {
  Version v;
  v.levels[1] = {MakeTable(1, "c", "e", 300)};
  v.levels[2] = {MakeTable(5, "a", "b", 1), MakeTable(6, "b", "c", 1), MakeTable(7, "d", "d", 1),
                 MakeTable(8, "e", "e", 1), MakeTable(9, "ea", "h", 1)};
  std::string pointers[kNumLevels];
  Compaction c;
  ASSERT_TRUE(PickCompaction(v, SmallOptions(), pointers, /*l0_wanted_by_reads=*/false, &c));
  EXPECT_EQ(c.level, 1);
  EXPECT_EQ(Numbers(c.inputs[1]), (std::vector<uint64_t>{6, 7, 8}));
}

// A table below that ends in a key shared with the next one holds that key's
// newer versions; the next one, its older versions, is taken with it (the
// output level is not searched for a tombstone's base, IsBaseLevelForKey).
TEST(PickerTest, TablesBelowSharingTheLastOverlappedKeyComeAlong) {
  Version v;
  v.levels[2] = {MakeTable(5, "a", "m", 1), MakeTable(6, "m", "m", 1), MakeTable(7, "m", "p", 1),
                 MakeTable(8, "q", "r", 1)};
  Compaction c;
  c.level = 1;
  c.inputs[0] = {MakeTable(1, "b", "c", 1)};
  AddOverlappingInputs(v, kBytewise, &c);
  EXPECT_EQ(Numbers(c.inputs[1]), (std::vector<uint64_t>{5, 6, 7}));
}

// Overlap is computed over the whole range the inputs span, so a table
// below that lies between two inputs (and overlaps neither) is taken too.
TEST(PickerTest, OverlapCoversTheGapBetweenInputs) {
  Version v;
  v.levels[1] = {MakeTable(1, "a", "a", 1), MakeTable(2, "c", "c", 1), MakeTable(3, "g", "h", 1)};
  Compaction c;
  c.level = 0;
  c.inputs[0] = {MakeTable(10, "e", "f", 1), MakeTable(11, "b", "b", 1)};
  AddOverlappingInputs(v, kBytewise, &c);
  EXPECT_EQ(Numbers(c.inputs[1]), (std::vector<uint64_t>{2}));  // [b, f] holds "c"

  Compaction none;
  none.level = 0;
  AddOverlappingInputs(v, kBytewise, &none);  // no inputs: nothing below
  EXPECT_TRUE(none.inputs[1].empty());
}

// A key at a table's boundary is in that table, so the level is not the
// base level for it.
TEST(PickerTest, BaseLevelForKeyCountsBoundaryKeys) {
  Version v;
  v.levels[1] = {MakeTable(1, "b", "d", 1)};
  EXPECT_FALSE(IsBaseLevelForKey(v, kBytewise, 0, "b"));
  EXPECT_FALSE(IsBaseLevelForKey(v, kBytewise, 0, "d"));
  EXPECT_TRUE(IsBaseLevelForKey(v, kBytewise, 0, "a"));
  EXPECT_TRUE(IsBaseLevelForKey(v, kBytewise, 0, "da"));
  EXPECT_TRUE(IsBaseLevelForKey(Version(), kBytewise, 0, "b"));
}

// A range step at a deeper level widens only forwards: an earlier neighbour
// sharing the first table's smallest key holds the newer versions of it and
// may stay, but a later neighbour holds older ones and must come along.
TEST(PickerTest, RangeStepsWidenOnlyOverLaterNeighbours) {
  Version v;
  v.levels[1] = {MakeTable(1, "a", "c", 1), MakeTable(2, "c", "f", 1), MakeTable(3, "f", "h", 1),
                 MakeTable(4, "j", "k", 1)};
  v.levels[2] = {MakeTable(7, "g", "g", 1), MakeTable(8, "i", "i", 1)};
  const Slice begin("d");
  Compaction c;
  ASSERT_TRUE(PickRangeStep(v, kBytewise, 1, &begin, nullptr, SIZE_MAX, &c));
  EXPECT_EQ(Numbers(c.inputs[0]), (std::vector<uint64_t>{2, 3}));
  EXPECT_EQ(Numbers(c.inputs[1]), (std::vector<uint64_t>{7}));

  // A range that falls in a gap between tables has no step.
  const Slice gap_begin("ha"), gap_end("i");
  EXPECT_FALSE(PickRangeStep(v, kBytewise, 1, &gap_begin, &gap_end, SIZE_MAX, &c));
}

// L0 moves from its oldest end: once any L0 table is in range, the step
// takes the oldest l0_take tables, even if only a newer one is in range.
TEST(PickerTest, LevelZeroRangeStepsAlwaysTakeTheOldestTables) {
  Version v;
  v.levels[0] = {MakeTable(3, "x", "z", 1), MakeTable(2, "m", "n", 1), MakeTable(1, "a", "b", 1)};
  const Slice begin("x"), end("y");
  Compaction c;
  ASSERT_TRUE(PickRangeStep(v, kBytewise, 0, &begin, &end, 1, &c));
  EXPECT_EQ(Numbers(c.inputs[0]), (std::vector<uint64_t>{1}));
  const Slice after("zz");
  EXPECT_FALSE(PickRangeStep(v, kBytewise, 0, &after, nullptr, 1, &c));
}

// When every boundary of the lower inputs is shared, no split point exists.
TEST(PickerTest, NoSplitWhenEveryBoundaryKeyIsShared) {
  const std::vector<TableRef> chained = {MakeTable(1, "a", "b", 1), MakeTable(2, "b", "c", 1),
                                         MakeTable(3, "c", "d", 1), MakeTable(4, "d", "e", 1)};
  Compaction c;
  size_t count = chained.size();
  EXPECT_FALSE(NextSplit(kBytewise, chained, &count, &c));
  EXPECT_EQ(count, 0u);
  EXPECT_FALSE(c.split);

  size_t one = 1;
  EXPECT_FALSE(NextSplit(kBytewise, chained, &one, &c));
  EXPECT_EQ(one, 1u);
}

// Successive splits keep halving, each a prefix of the original lower
// inputs; the upper inputs are left as they were.
TEST(PickerTest, SuccessiveSplitsHalveAgain) {
  std::vector<TableRef> lower;
  for (uint64_t n = 0; n < 8; ++n) {
    const std::string k(1, static_cast<char>('a' + 2 * n));
    lower.push_back(MakeTable(n + 1, k, k + "z", 1));
  }
  Compaction c;
  c.level = 1;
  c.inputs[0] = {MakeTable(100, "a", "p", 1)};
  size_t count = lower.size();
  std::vector<size_t> counts;
  while (NextSplit(kBytewise, lower, &count, &c)) {
    counts.push_back(count);
    EXPECT_EQ(c.inputs[1].size(), count);
    EXPECT_EQ(c.split_key, lower[count - 1]->largest);
    EXPECT_EQ(Numbers(c.inputs[0]), (std::vector<uint64_t>{100}));
  }
  EXPECT_EQ(counts, (std::vector<size_t>{4, 2, 1}));
}

// IsTrivialMove on what PickCompaction picks: one table with nothing below
// moves; one with a table below, or neighbours picked together because they
// share a boundary key, are merged; so is a pmem table bound for SSD.
TEST(PickerTest, TrivialMovesOfPickedCompactions) {
  std::string pointers[kNumLevels];
  Compaction c;

  Version alone;
  alone.levels[1] = {MakeTable(1, "a", "c", 300)};
  alone.levels[2] = {MakeTable(2, "d", "f", 1)};
  ASSERT_TRUE(PickCompaction(alone, SmallOptions(), pointers, /*l0_wanted_by_reads=*/false, &c));
  EXPECT_TRUE(c.inputs[1].empty());
  EXPECT_TRUE(IsTrivialMove(c, kBytewise, /*output_to_ssd=*/false));
  EXPECT_FALSE(IsTrivialMove(c, kBytewise, /*output_to_ssd=*/true));  // the tier would change

  Version overlapped;
  overlapped.levels[1] = {MakeTable(1, "a", "c", 300)};
  overlapped.levels[2] = {MakeTable(2, "b", "b", 1), MakeTable(3, "c", "f", 1)};
  pointers[1].clear();
  ASSERT_TRUE(PickCompaction(overlapped, SmallOptions(), pointers, /*l0_wanted_by_reads=*/false, &c));
  EXPECT_EQ(Numbers(c.inputs[1]), (std::vector<uint64_t>{2, 3}));
  EXPECT_FALSE(IsTrivialMove(c, kBytewise, false));

  Version shared;
  shared.levels[1] = {MakeTable(1, "a", "c", 150), MakeTable(2, "c", "e", 150)};
  pointers[1].clear();
  ASSERT_TRUE(PickCompaction(shared, SmallOptions(), pointers, /*l0_wanted_by_reads=*/false, &c));
  EXPECT_EQ(Numbers(c.inputs[0]), (std::vector<uint64_t>{1, 2}));
  EXPECT_TRUE(c.inputs[1].empty());
  EXPECT_FALSE(IsTrivialMove(c, kBytewise, false));

  // Mixed tiers among the inputs: no single tier to stay in.
  Compaction mixed;
  mixed.level = 0;
  mixed.inputs[0] = {MakeTable(1, "a", "b", 1), MakeTable(2, "c", "d", 1, Residence::kSsd)};
  EXPECT_FALSE(IsTrivialMove(mixed, kBytewise, false));
  EXPECT_FALSE(IsTrivialMove(mixed, kBytewise, true));
}

// Blocks already in pmem count in the whole pool chunks they occupy, not
// their bytes, and so does room for one more chunk.
TEST(PickerTest, HybridPlacementCountsPmemBlocksInWholeChunks) {
  Options options = SmallOptions();
  options.storage_mode = StorageMode::kHybrid;
  options.memtable_size = 1 << 10;
  options.level0_stop_trigger = 4;
  options.level1_size = 4 << 10;  // targets: 8 KiB down to L1
  const uint64_t budget = 4 * kPoolChunk;
  Version v;
  v.levels[1] = {MakeTable(1, "a", "b", 1), MakeTable(2, "c", "d", 1)};
  EXPECT_FALSE(OutputToSsd(v, options, budget, false, 1, 1));  // 2 chunks + 1 byte + a chunk fit 4
  v.levels[1].push_back(MakeTable(3, "e", "f", 1));
  EXPECT_TRUE(OutputToSsd(v, options, budget, false, 1, 1));  // 3 chunks + 1 byte + a chunk do not
  v.levels[1][2]->residence = Residence::kSsd;                  // SSD tables do not count
  EXPECT_FALSE(OutputToSsd(v, options, budget, false, 1, 1));
}

// The room for blocks is what the pool's heap holds once the standby and
// the WAL segments are set aside: more memtables or larger ones leave less.
TEST(PickerTest, PmemBlockBudgetShrinksWithTheWalSpace) {
  const uint64_t pool = uint64_t{1} << 30;
  Options options;
  options.pmem_budget = uint64_t{1} << 40;  // never the limit: the room is
  options.memtable_size = 4 << 20;
  const uint64_t small = PmemBlockBudget(options, pool);
  options.memtable_size = 64 << 20;
  const uint64_t large = PmemBlockBudget(options, pool);
  EXPECT_LT(large, small);
  EXPECT_EQ(small % kPoolChunk, 0u);
  EXPECT_LE(small, PoolHeapChunks(pool) * kPoolChunk);
  options.max_immutable_memtables += 2;
  EXPECT_LT(PmemBlockBudget(options, pool), large);
}

TEST(PickerTest, AllInPmem) {
  EXPECT_TRUE(AllInPmem({}));
  EXPECT_TRUE(AllInPmem({MakeTable(1, "a", "b", 1)}));
  EXPECT_FALSE(AllInPmem({MakeTable(1, "a", "b", 1), MakeTable(2, "c", "d", 1, Residence::kSsd)}));
}

}  // namespace
}  // namespace jigsaw
