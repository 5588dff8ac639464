#include "format/bloom.h"

#include <algorithm>
#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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

namespace {

#if defined(__x86_64__)
// The eight probes of a hash as two vectors of four words: the salted
// products' top six bits, each a shift of 1 -- LineBits, eight lanes at once.
__attribute__((target("avx2"))) void AddHashesAvx2(char* lines, const Geometry& geometry, const uint32_t* hashes,
                                                   size_t n) {
  const __m256i salts = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kSalts));
  const __m256i ones = _mm256_set1_epi64x(1);
  for (size_t k = 0; k < n; ++k) {
    auto* line = reinterpret_cast<__m256i*>(const_cast<char*>(LineFor(lines, geometry, hashes[k])));
    const auto h = static_cast<uint32_t>(SpreadHash(hashes[k]));
    const __m256i shifts = _mm256_srli_epi32(_mm256_mullo_epi32(_mm256_set1_epi32(static_cast<int>(h)), salts), 26);
    const __m256i low = _mm256_sllv_epi64(ones, _mm256_cvtepu32_epi64(_mm256_castsi256_si128(shifts)));
    const __m256i high = _mm256_sllv_epi64(ones, _mm256_cvtepu32_epi64(_mm256_extracti128_si256(shifts, 1)));
    _mm256_storeu_si256(line, _mm256_or_si256(_mm256_loadu_si256(line), low));
    _mm256_storeu_si256(line + 1, _mm256_or_si256(_mm256_loadu_si256(line + 1), high));
  }
}

bool CpuHasAvx2() {
  __builtin_cpu_init();  // may run before the library's own initialisation
  return __builtin_cpu_supports("avx2");
}
const bool kHasAvx2 = CpuHasAvx2();
#endif

}  // namespace

void AddHashes(char* lines, const Geometry& geometry, const uint32_t* hashes, size_t n) {
#if defined(__x86_64__)
  if (kHasAvx2) return AddHashesAvx2(lines, geometry, hashes, n);
#endif
  for (size_t k = 0; k < n; ++k) AddHash(lines, geometry, hashes[k]);
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
