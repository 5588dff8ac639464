#include "util/key_prefix.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace jigsaw {
namespace {

int Sign(int v) { return v < 0 ? -1 : v > 0 ? 1 : 0; }

// Keys that stress the prefix: every length around 8 and 16, zero bytes
// (which the padding imitates), 0xff bytes (sign of char), shared starts.
std::vector<std::string> TrickyKeys() {
  std::vector<std::string> keys = {"", std::string(1, '\0'), std::string(16, '\0'), std::string(17, '\0')};
  std::mt19937 rng(11);
  const std::string alphabet("\0\1\x7f\x80\xff" "a", 6);
  for (int i = 0; i < 400; ++i) {
    const size_t size = rng() % 24;
    std::string key = i % 3 == 0 ? std::string("0000000000") : std::string();
    while (key.size() < size) key.push_back(alphabet[rng() % alphabet.size()]);
    key.resize(size);
    keys.push_back(key);
    keys.push_back(key + std::string(1, '\0'));  // the same key plus a zero byte
  }
  return keys;
}

TEST(KeyPrefixTest, ComparesLikeBytewiseOrder) {
  const std::vector<std::string> keys = TrickyKeys();
  for (const std::string& a : keys) {
    for (const std::string& b : keys) {
      const int expected = Sign(Slice(a).compare(Slice(b)));
      const int got = Sign(CompareWithPrefixes(a, LoadKeyPrefix(a), b, LoadKeyPrefix(b)));
      ASSERT_EQ(got, expected) << "a size " << a.size() << " b size " << b.size();
    }
  }
}

TEST(KeyPrefixTest, PrefixOrderNeverContradictsKeyOrder) {
  const std::vector<std::string> keys = TrickyKeys();
  for (const std::string& a : keys) {
    for (const std::string& b : keys) {
      const KeyPrefix pa = LoadKeyPrefix(a), pb = LoadKeyPrefix(b);
      const bool prefix_less = pa.high < pb.high || (pa.high == pb.high && pa.low < pb.low);
      if (prefix_less) {
        ASSERT_LT(Slice(a).compare(Slice(b)), 0);
      }
    }
  }
}

}  // namespace
}  // namespace jigsaw
