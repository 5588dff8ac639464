#include "format/bloom.h"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace jigsaw::bloom {

uint64_t KeyHash(const Slice& user_key) { return XXH3_64bits(user_key.data(), user_key.size()); }

Geometry ChooseGeometry(uint64_t num_keys, int bits_per_key) {
  Geometry g;
  if (num_keys == 0 || bits_per_key <= 0) return g;
  g.lines = LinesFor(num_keys, bits_per_key);
  // k = bits_per_key * ln 2 minimises the false-positive rate.
  g.probes = static_cast<uint32_t>(std::clamp(std::lround(bits_per_key * 0.69), 1L, long{kMaxProbes}));
  return g;
}

namespace {
// The line is chosen from the low 32 bits (multiply-shift range reduction),
// the bit positions from the high 32 bits by double hashing inside the line.
inline uint32_t LineIndex(uint64_t hash, uint32_t lines) {
  return static_cast<uint32_t>((static_cast<uint64_t>(static_cast<uint32_t>(hash)) * lines) >> 32);
}
inline uint32_t Rotate(uint32_t h) { return (h >> 17) | (h << 15); }
}  // namespace

void AddHash(char* lines, const Geometry& geometry, uint64_t hash) {
  // The line is updated as eight little-endian u64 words in a local copy;
  // bit b of the line is bit (b % 64) of word b / 64, i.e. byte b / 8, bit b % 8.
  char* line = lines + size_t{LineIndex(hash, geometry.lines)} * kLineBytes;
  uint64_t words[kLineBytes / 8];
  std::memcpy(words, line, kLineBytes);
  uint32_t h = static_cast<uint32_t>(hash >> 32);
  const uint32_t delta = Rotate(h);
  for (uint32_t i = 0; i < geometry.probes; ++i) {
    const uint32_t bit = h & (kLineBytes * 8 - 1);
    words[bit >> 6] |= uint64_t{1} << (bit & 63);
    h += delta;
  }
  std::memcpy(line, words, kLineBytes);
}

bool MayContainHash(const char* lines, const Geometry& geometry, uint64_t hash) {
  const auto* line =
      reinterpret_cast<const uint8_t*>(lines) + size_t{LineIndex(hash, geometry.lines)} * kLineBytes;
  uint32_t h = static_cast<uint32_t>(hash >> 32);
  const uint32_t delta = Rotate(h);
  for (uint32_t i = 0; i < geometry.probes; ++i) {
    const uint32_t bit = h & (kLineBytes * 8 - 1);
    if ((line[bit >> 3] & (1u << (bit & 7))) == 0) return false;
    h += delta;
  }
  return true;
}

}  // namespace jigsaw::bloom
