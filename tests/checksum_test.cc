#include "format/checksum.h"

#include <gtest/gtest.h>

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
