// YCSB's key choosers for jigsaw_bench's ycsb workloads.
#ifndef JIGSAW_BENCH_ZIPFIAN_H_
#define JIGSAW_BENCH_ZIPFIAN_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

namespace jigsaw::bench {

// YCSB's Zipfian generator (Gray et al., "Quickly generating billion-record
// synthetic databases", SIGMOD'94), theta 0.99, items [0, n).
class Zipfian {
 public:
  explicit Zipfian(uint64_t n, double theta = 0.99) : n_(n) {
    for (uint64_t i = 1; i <= n; ++i) zetan_ += 1.0 / std::pow(static_cast<double>(i), theta);
    zeta2_ = 1.0 + 1.0 / std::pow(2.0, theta);
    alpha_ = 1.0 / (1.0 - theta);
    eta_ = (1.0 - std::pow(2.0 / static_cast<double>(n), 1.0 - theta)) / (1.0 - zeta2_ / zetan_);
  }
  uint64_t Next(std::mt19937_64* rng) const {
    const double u = std::uniform_real_distribution<double>(0, 1)(*rng);
    const double uz = u * zetan_;
    if (uz < 1.0) return 0;
    if (uz < zeta2_) return 1;
    const auto v = static_cast<uint64_t>(static_cast<double>(n_) * std::pow(eta_ * u - eta_ + 1.0, alpha_));
    return std::min(v, n_ - 1);
  }

 private:
  uint64_t n_;
  double zetan_ = 0, alpha_ = 0, eta_ = 0;
  double zeta2_ = 0;  // 1 + 2^-theta: below it, u * zeta(n) picks rank 0 or 1
};

// Scatters Zipfian ranks over the key space (YCSB's scrambled Zipfian), so
// that hot keys are not neighbours.
inline uint64_t Scramble(uint64_t rank, uint64_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a of the rank's bytes
  for (int i = 0; i < 8; ++i) {
    h ^= (rank >> (8 * i)) & 0xff;
    h *= 0x100000001b3ULL;
  }
  return h % n;
}

}  // namespace jigsaw::bench

#endif  // JIGSAW_BENCH_ZIPFIAN_H_
