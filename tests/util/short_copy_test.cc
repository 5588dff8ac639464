#include "util/short_copy.h"

#include <gtest/gtest.h>

#include <string>

namespace jigsaw {
namespace {

// Every length a builder may pass, at every alignment within a word: the
// bytes copied are exactly [0, n), and nothing around them is touched.
TEST(ShortCopyTest, CopiesExactlyTheBytesAskedFor) {
  std::string source(400, '\0');
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<char>('!' + i % 90);
  for (size_t n = 0; n <= 300; ++n) {
    for (size_t shift = 0; shift < 8; ++shift) {
      std::string dest(n + 32, '#');
      CopyShort(dest.data() + 8, source.data() + shift, n);
      ASSERT_EQ(dest.substr(0, 8), std::string(8, '#')) << n;
      ASSERT_EQ(dest.substr(8, n), source.substr(shift, n)) << n << " " << shift;
      ASSERT_EQ(dest.substr(8 + n), std::string(24, '#')) << n;
    }
  }
}

}  // namespace
}  // namespace jigsaw
