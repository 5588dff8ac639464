#include "version/version.h"

#include <gtest/gtest.h>

#include "tests/block_test_util.h"

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

}  // namespace
}  // namespace jigsaw
