#include "util/checksum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace jigsaw {
namespace {

TEST(Crc32cTest, StandardVectors) {
  // Check values from RFC 3720 (iSCSI) and the common "123456789" vector.
  EXPECT_EQ(crc32c::Value("123456789", 9), 0xE3069283u);
  std::string zeros(32, '\0');
  EXPECT_EQ(crc32c::Value(zeros.data(), zeros.size()), 0x8A9136AAu);
  std::string ones(32, '\xff');
  EXPECT_EQ(crc32c::Value(ones.data(), ones.size()), 0x62A8AB43u);
  std::string ascending(32, '\0');
  for (int i = 0; i < 32; ++i) ascending[i] = static_cast<char>(i);
  EXPECT_EQ(crc32c::Value(ascending.data(), ascending.size()), 0x46DD794Eu);
  EXPECT_EQ(crc32c::Value("", 0), 0u);
}

TEST(Crc32cTest, ExtendEqualsWhole) {
  std::string data = "hello persistent memory world";
  for (size_t split = 0; split <= data.size(); ++split) {
    uint32_t crc = crc32c::Extend(crc32c::Value(data.data(), split), data.data() + split, data.size() - split);
    EXPECT_EQ(crc, crc32c::Value(data.data(), data.size()));
  }
}

// Small inputs take the CPU's crc32 instruction, large ones ISA-L: the same
// CRC whichever way a buffer is cut, on both sides of the switch.
TEST(Crc32cTest, SmallAndLargeInputsAgree) {
  std::string data(3000, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 131 + (i >> 7));
  for (size_t size : {size_t{1}, size_t{7}, size_t{8}, size_t{130}, size_t{511}, size_t{512}, size_t{513},
                      size_t{1000}, size_t{3000}}) {
    const uint32_t whole = crc32c::Value(data.data(), size);
    for (size_t piece : {size_t{1}, size_t{5}, size_t{64}, size_t{500}}) {
      uint32_t crc = 0;
      for (size_t at = 0; at < size; at += piece) crc = crc32c::Extend(crc, data.data() + at, std::min(piece, size - at));
      ASSERT_EQ(crc, whole) << "size " << size << " piece " << piece;
    }
  }
}

TEST(Crc32cTest, DetectsSingleBitFlips) {
  std::string data(100, 'x');
  const uint32_t base = crc32c::Value(data.data(), data.size());
  for (size_t i = 0; i < data.size(); ++i) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string flipped = data;
      flipped[i] = static_cast<char>(flipped[i] ^ (1 << bit));
      EXPECT_NE(crc32c::Value(flipped.data(), flipped.size()), base);
    }
  }
}

}  // namespace
}  // namespace jigsaw
