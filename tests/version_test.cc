#include "version/manifest.h"
#include "version/version.h"

#include <gtest/gtest.h>

#include "tests/block_test_util.h"

namespace jigsaw {
namespace {

ManifestState SampleState() {
  ManifestState state;
  state.generation = 42;
  state.last_sequence = 123456789;
  state.next_number = 77;
  state.wal_segments = {{4096, 1 << 20, 70}, {8192, 2 << 20, 75}};
  state.blocks = {{1 << 20, 5000, 10, 0}, {2 << 20, 6000, 11, 1}, {3 << 20, 7000, 12, 6}};
  return state;
}

TEST(ManifestTest, RoundTrip) {
  const ManifestState state = SampleState();
  test::AlignedBuffer buffer(ManifestSize(state));
  EncodeManifest(state, buffer.data());
  ManifestState decoded;
  ASSERT_TRUE(DecodeManifest(buffer.data(), buffer.size(), &decoded).ok());
  EXPECT_EQ(decoded.generation, 42u);
  EXPECT_EQ(decoded.last_sequence, 123456789u);
  EXPECT_EQ(decoded.next_number, 77u);
  ASSERT_EQ(decoded.wal_segments.size(), 2u);
  EXPECT_EQ(decoded.wal_segments[1].number, 75u);
  ASSERT_EQ(decoded.blocks.size(), 3u);
  EXPECT_EQ(decoded.blocks[2].level, 6);
  EXPECT_EQ(decoded.blocks[1].size, 6000u);
}

TEST(ManifestTest, EveryDamageIsDetected) {
  const ManifestState state = SampleState();
  test::AlignedBuffer buffer(ManifestSize(state));
  EncodeManifest(state, buffer.data());
  ManifestState decoded;
  for (size_t pos = 0; pos < buffer.size(); ++pos) {
    test::AlignedBuffer copy(buffer.size());
    std::memcpy(copy.data(), buffer.data(), buffer.size());
    copy.data()[pos] ^= 0x10;
    Status s = DecodeManifest(copy.data(), copy.size(), &decoded);
    EXPECT_TRUE(s.IsCorruption() || s.IsNotSupported()) << "byte " << pos;
  }
  for (size_t len = 0; len < buffer.size(); ++len) {
    EXPECT_FALSE(DecodeManifest(buffer.data(), len, &decoded).ok()) << "length " << len;
  }
}

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
