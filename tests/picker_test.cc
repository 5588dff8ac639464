// The compaction picker (compaction/picker.h): pure functions over a
// Version and the options, tested on hand-made versions -- which level is
// scored over its target, which tables a step takes, where its outputs go,
// and when a step is a trivial move.
#include "compaction/picker.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

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
  EXPECT_FALSE(PickCompaction(v, SmallOptions(), pointers, &c));
}

TEST(PickerTest, LevelZeroAtItsTriggerTakesAllItsTablesAndTheirOverlapBelow) {
  Version v;
  v.levels[0] = {MakeTable(4, "c", "f", 10), MakeTable(3, "a", "d", 10), MakeTable(2, "e", "g", 10),
                 MakeTable(1, "b", "c", 10)};
  v.levels[1] = {MakeTable(10, "a", "b", 10), MakeTable(11, "c", "e", 10), MakeTable(12, "h", "k", 10)};
  std::string pointers[kNumLevels];
  Compaction c;
  ASSERT_TRUE(PickCompaction(v, SmallOptions(), pointers, &c));
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
  ASSERT_TRUE(PickCompaction(v, SmallOptions(), pointers, &c));
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
    ASSERT_TRUE(PickCompaction(v, SmallOptions(), pointers, &c));
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
  ASSERT_TRUE(PickCompaction(v, SmallOptions(), pointers, &c));
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

TEST(PickerTest, AllInPmem) {
  EXPECT_TRUE(AllInPmem({}));
  EXPECT_TRUE(AllInPmem({MakeTable(1, "a", "b", 1)}));
  EXPECT_FALSE(AllInPmem({MakeTable(1, "a", "b", 1), MakeTable(2, "c", "d", 1, Residence::kSsd)}));
}

}  // namespace
}  // namespace jigsaw
