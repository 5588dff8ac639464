#include "bench/bench_key.h"

#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <limits>
#include <random>
#include <string>

namespace jigsaw::bench {
namespace {

// What db_bench makes of n: "%016" PRIu64, cut or padded with 'x'.
std::string DbBenchKey(uint64_t n, size_t key_size) {
  char buf[32];
  const int length = std::snprintf(buf, sizeof(buf), "%016" PRIu64, n);
  std::string key(buf, std::min<size_t>(static_cast<size_t>(length), key_size));
  if (key.size() < key_size) key.append(key_size - key.size(), 'x');
  return key;
}

TEST(BenchKeyTest, IsDbBenchsKey) {
  EXPECT_EQ(DbBenchKey(123456, 16), "0000000000123456");
  std::mt19937_64 rng(7);
  std::string key = "left over from an earlier, longer key";
  for (size_t key_size : {1, 8, 15, 16, 17, 20, 64, 1024}) {
    for (int i = 0; i < 20000; ++i) {
      const uint64_t n = i < 1000 ? static_cast<uint64_t>(i)
                         : i % 3 == 0 ? rng()
                                      : rng() % 100000000;
      MakeBenchKey(n, key_size, &key);
      ASSERT_EQ(key, DbBenchKey(n, key_size)) << "n " << n << ", key_size " << key_size;
    }
    for (uint64_t n : {uint64_t{9999999999999999}, uint64_t{10000000000000000}, std::numeric_limits<uint64_t>::max()}) {
      MakeBenchKey(n, key_size, &key);
      ASSERT_EQ(key, DbBenchKey(n, key_size)) << "n " << n << ", key_size " << key_size;
    }
  }
}

}  // namespace
}  // namespace jigsaw::bench
