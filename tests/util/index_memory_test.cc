// Index memory (util/index_memory.h): zeroed, aligned, non-overlapping
// allocations carved from 2 MiB slabs, reused after they are freed, slabs
// unmapped when empty, and allocations larger than a slab.
#include "util/index_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace jigsaw {
namespace {

constexpr size_t kSlab = size_t{2} << 20;

// Fills `words` with a pattern naming allocation `id`, then checks it: two
// allocations that overlapped would overwrite each other's.
void Fill(IndexWords& words, size_t count, uint64_t id) {
  for (size_t i = 0; i < count; ++i) words[i] = id << 32 | i;
}
void ExpectFilled(const IndexWords& words, size_t count, uint64_t id) {
  for (size_t i = 0; i < count; ++i) ASSERT_EQ(words[i], id << 32 | i) << "allocation " << id << " word " << i;
}

TEST(IndexMemoryTest, AllocationsAreZeroedAlignedAndApart) {
  const size_t before = IndexMemoryMappedBytes();
  std::mt19937_64 rng(3);
  std::vector<IndexWords> allocations;
  std::vector<size_t> counts;
  for (uint64_t id = 0; id < 60; ++id) {
    // From a few words to a whole slab and beyond (one in ten).
    const size_t count = id % 10 == 9 ? kSlab / 8 + 1 + rng() % 100000 : 1 + rng() % 40000;
    IndexWords words = AllocateIndexWords(count);
    ASSERT_NE(words, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(words.get()) % 64, 0u);
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(words[i], 0u) << "allocation " << id << " word " << i;
    Fill(words, count, id);
    allocations.push_back(std::move(words));
    counts.push_back(count);
  }
  EXPECT_GT(IndexMemoryMappedBytes(), before);
  for (uint64_t id = 0; id < allocations.size(); ++id) ExpectFilled(allocations[id], counts[id], id);

  // Free every other one; new allocations reuse their units, zeroed again,
  // and leave the survivors intact.
  for (size_t i = 0; i < allocations.size(); i += 2) allocations[i].reset();
  const size_t mapped = IndexMemoryMappedBytes();
  for (size_t i = 0; i < allocations.size(); i += 2) {
    const size_t count = 1 + rng() % 8000;  // 64 KiB or less: fits a freed unit
    allocations[i] = AllocateIndexWords(count);
    ASSERT_NE(allocations[i], nullptr);
    for (size_t w = 0; w < count; ++w) ASSERT_EQ(allocations[i][w], 0u) << "reused allocation " << i;
    Fill(allocations[i], count, 1000 + i);
    counts[i] = count;
  }
  EXPECT_LE(IndexMemoryMappedBytes(), mapped);  // no new slab was needed
  for (uint64_t id = 0; id < allocations.size(); ++id) {
    ExpectFilled(allocations[id], counts[id], id % 2 == 0 ? 1000 + id : id);
  }

  // Everything freed: every slab and large mapping is unmapped.
  allocations.clear();
  EXPECT_EQ(IndexMemoryMappedBytes(), before);
}

TEST(IndexMemoryTest, AnEmptyRequestGetsNothing) {
  EXPECT_EQ(AllocateIndexWords(0), nullptr);
  EXPECT_EQ(AllocateIndexWords(SIZE_MAX / 4), nullptr);  // its bytes overflow
}

}  // namespace
}  // namespace jigsaw
