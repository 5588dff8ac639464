#include "format/bloom.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace jigsaw {
namespace {

std::string Key(int i) { return "key" + std::to_string(i); }

TEST(BloomTest, GeometryFollowsBitsPerKey) {
  EXPECT_EQ(bloom::ChooseGeometry(0, 10).lines, 0u);
  EXPECT_EQ(bloom::ChooseGeometry(100, 0).lines, 0u);
  bloom::Geometry g = bloom::ChooseGeometry(1000, 10);
  EXPECT_EQ(g.lines, (1000u * 10 + 511) / 512);
  EXPECT_EQ(g.probes, bloom::kProbes);
  EXPECT_EQ(bloom::ChooseGeometry(1, 10).lines, 1u);
  EXPECT_EQ(bloom::ChooseGeometry(10, 1000).lines, (10u * 1000 + 511) / 512);
}

TEST(BloomTest, NoFalseNegativesAndFewFalsePositives) {
  for (int n : {1, 10, 1000, 20000}) {
    bloom::Geometry g = bloom::ChooseGeometry(n, 10);
    std::vector<char> lines(g.lines * bloom::kLineBytes, 0);
    for (int i = 0; i < n; ++i) bloom::AddHash(lines.data(), g, bloom::KeyHash(Key(i)));
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(bloom::MayContainHash(lines.data(), g, bloom::KeyHash(Key(i)))) << "n=" << n << " i=" << i;
    }
    int false_positives = 0;
    const int probes = 10000;
    for (int i = 0; i < probes; ++i) {
      false_positives += bloom::MayContainHash(lines.data(), g, bloom::KeyHash(Key(i + 1000000000))) ? 1 : 0;
    }
    // A blocked filter at 10 bits/key is expected near 1%; 3% leaves room for
    // the small filters of tiny n without hiding a broken hash.
    if (n >= 1000) {
      EXPECT_LT(false_positives, probes * 3 / 100) << "n=" << n;
    }
  }
}

}  // namespace
}  // namespace jigsaw
