#include "version/version.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/block_test_util.h"

namespace jigsaw {
namespace {

TEST(VersionTest, OverlappingAndLevelBytes) {
  Version v;
  auto block = [](const char* smallest, const char* largest, uint64_t size) {
    auto b = std::make_shared<TableMeta>();
    b->smallest = smallest;
    b->largest = largest;
    b->size = size;
    return b;
  };
  v.levels[1] = {block("a", "c", 10), block("d", "f", 20), block("g", "k", 30)};
  EXPECT_EQ(v.LevelBytes(1), 60u);
  EXPECT_EQ(v.Overlapping(BytewiseComparator(), 1, "c", "d").size(), 2u);
  EXPECT_EQ(v.Overlapping(BytewiseComparator(), 1, "ca", "cz").size(), 0u);
  EXPECT_EQ(v.Overlapping(BytewiseComparator(), 1, "a", "z").size(), 3u);
  EXPECT_EQ(v.Overlapping(BytewiseComparator(), 2, "a", "z").size(), 0u);
}

TableRef Table(uint64_t number, const char* smallest, const char* largest) {
  auto t = std::make_shared<TableMeta>();
  t->number = number;
  t->smallest = smallest;
  t->largest = largest;
  return t;
}

std::vector<uint64_t> Numbers(const std::vector<TableRef>& tables) {
  std::vector<uint64_t> numbers;
  for (const TableRef& t : tables) numbers.push_back(t->number);
  return numbers;
}

// Tables added to a deeper level, in any order, come out sorted by their
// smallest key among the ones already there.
TEST(VersionTest, ApplyEditKeepsDeeperLevelsSorted) {
  Version base;
  base.levels[1] = {Table(1, "b", "c"), Table(2, "k", "m")};
  VersionEdit edit;
  edit.Add(1, Table(3, "x", "z"));
  edit.Add(1, Table(4, "a", "a"));
  edit.Add(1, Table(5, "e", "g"));
  edit.Add(3, Table(7, "q", "r"));
  edit.Add(3, Table(6, "d", "e"));
  auto v = ApplyEdit(base, edit, BytewiseComparator());
  EXPECT_EQ(Numbers(v->levels[1]), (std::vector<uint64_t>{4, 1, 5, 2, 3}));
  EXPECT_EQ(Numbers(v->levels[3]), (std::vector<uint64_t>{6, 7}));
  EXPECT_EQ(Numbers(base.levels[1]), (std::vector<uint64_t>{1, 2}));  // the base is not changed
}

// A removal takes out exactly the named tables, from whatever level holds
// them; a number no table has changes nothing.
// Tables that share a boundary key (one key's versions overflowed a block)
// hold that key's versions newest first: a sort by smallest key alone must
// not swap them, however many tables the level holds.
TEST(VersionTest, ApplyEditKeepsTablesSharingABoundaryKeyInOrder) {
  Version base;
  std::vector<std::string> keys;
  for (int i = 0; i < 40; ++i) keys.push_back("k" + std::to_string(100 + i));
  uint64_t number = 1;
  for (int i = 0; i < 40; ++i) {
    // Every fourth key spans three tables: [k, k], [k, k], [k, k'].
    if (i % 4 == 0) {
      base.levels[1].push_back(Table(number++, keys[i].c_str(), keys[i].c_str()));
      base.levels[1].push_back(Table(number++, keys[i].c_str(), keys[i].c_str()));
    }
    base.levels[1].push_back(Table(number++, keys[i].c_str(), (keys[i] + "z").c_str()));
  }
  const std::vector<uint64_t> before = Numbers(base.levels[1]);
  VersionEdit edit;
  edit.Add(1, Table(number, "a", "a"));
  auto v = ApplyEdit(base, edit, BytewiseComparator());
  std::vector<uint64_t> expected{number};
  expected.insert(expected.end(), before.begin(), before.end());
  EXPECT_EQ(Numbers(v->levels[1]), expected);
}

TEST(VersionTest, ApplyEditRemovesExactlyTheNamedTables) {
  Version base;
  base.levels[0] = {Table(9, "a", "z"), Table(8, "a", "z"), Table(7, "a", "z")};
  base.levels[2] = {Table(1, "a", "b"), Table(2, "c", "d"), Table(3, "e", "f")};
  base.levels[5] = {Table(4, "a", "z")};
  VersionEdit edit;
  edit.Remove({base.levels[0][1], base.levels[2][1]});
  edit.removed.push_back(100);
  auto v = ApplyEdit(base, edit, BytewiseComparator());
  EXPECT_EQ(Numbers(v->levels[0]), (std::vector<uint64_t>{9, 7}));
  EXPECT_EQ(Numbers(v->levels[2]), (std::vector<uint64_t>{1, 3}));
  EXPECT_EQ(Numbers(v->levels[5]), (std::vector<uint64_t>{4}));
  EXPECT_EQ(v->levels[2][0], base.levels[2][0]);  // kept tables are shared, not copied
}

// Removals apply before additions: a table removed from one level and added
// to the next in the same edit (a trivial move) ends up only in the next.
TEST(VersionTest, ApplyEditMovesATableDownALevel) {
  Version base;
  base.levels[1] = {Table(1, "a", "b"), Table(2, "c", "d")};
  base.levels[2] = {Table(3, "e", "f")};
  VersionEdit edit;
  edit.Remove({base.levels[1][0]});
  edit.Add(2, base.levels[1][0]);
  auto v = ApplyEdit(base, edit, BytewiseComparator());
  EXPECT_EQ(Numbers(v->levels[1]), (std::vector<uint64_t>{2}));
  EXPECT_EQ(Numbers(v->levels[2]), (std::vector<uint64_t>{1, 3}));
}

// L0 is newest first: added tables go in front (a flush), or behind every
// table there when the edit says they are the oldest (a split remainder).
TEST(VersionTest, ApplyEditPlacesLevelZeroTablesByAge) {
  Version base;
  base.levels[0] = {Table(5, "a", "z"), Table(4, "a", "z")};
  VersionEdit flush;
  flush.Add(0, Table(6, "m", "n"));
  EXPECT_EQ(Numbers(ApplyEdit(base, flush, BytewiseComparator())->levels[0]), (std::vector<uint64_t>{6, 5, 4}));

  VersionEdit remainder;
  remainder.l0_added_are_oldest = true;
  remainder.Add(0, Table(7, "b", "c"));
  EXPECT_EQ(Numbers(ApplyEdit(base, remainder, BytewiseComparator())->levels[0]),
            (std::vector<uint64_t>{5, 4, 7}));
}

}  // namespace
}  // namespace jigsaw
