#include "format/bloom.h"

#include <algorithm>
#include <cstring>

namespace jigsaw::bloom {

Geometry ChooseGeometry(uint64_t num_keys, int bits_per_key) {
  Geometry g;
  g.lines = LinesFor(num_keys, bits_per_key);
  g.probes = g.lines > 0 ? kProbes : 0;
  return g;
}

namespace {

// Odd 32-bit multipliers, one per 64-bit word of a line ("split block"
// Bloom filter): each probe sets one bit in its own word, chosen by the top
// six bits of (hash * salt).
constexpr uint32_t kSalts[kProbes] = {0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU,
                                      0x705495c7U, 0x2df1424bU, 0x9efc4947U, 0x5c6bfb31U};

}  // namespace

void AddHash(char* lines, const Geometry& geometry, uint32_t hash) {
  char* line = const_cast<char*>(LineFor(lines, geometry, hash));
  const auto h = static_cast<uint32_t>(SpreadHash(hash));
#pragma GCC unroll 8
  for (uint32_t i = 0; i < kProbes; ++i) {
    uint64_t word;
    std::memcpy(&word, line + 8 * i, 8);
    word |= uint64_t{1} << ((h * kSalts[i]) >> 26);
    std::memcpy(line + 8 * i, &word, 8);
  }
}

void LineBits(uint32_t hash, uint64_t bits[kProbes]) {
  const auto h = static_cast<uint32_t>(SpreadHash(hash));
  for (uint32_t i = 0; i < kProbes; ++i) bits[i] = uint64_t{1} << ((h * kSalts[i]) >> 26);
}

bool MayContainHash(const char* lines, const Geometry& geometry, uint32_t hash) {
  return LineMayContain(LineFor(lines, geometry, hash), hash);
}

bool LineMayContain(const char* line, uint32_t hash) {
  const auto h = static_cast<uint32_t>(SpreadHash(hash));
  uint64_t missing = 0;
#pragma GCC unroll 8
  for (uint32_t i = 0; i < kProbes; ++i) {
    uint64_t word;
    std::memcpy(&word, line + 8 * i, 8);
    missing |= ~word & (uint64_t{1} << ((h * kSalts[i]) >> 26));
  }
  return missing == 0;
}

}  // namespace jigsaw::bloom
