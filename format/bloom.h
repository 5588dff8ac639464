// Blocked Bloom filter stored inside a KeySet block.
//
// The filter is an array of 64-byte lines, each eight little-endian u64
// words. A key selects one line from its 64-bit hash and sets/tests one bit in
// each of the eight words (a "split block" Bloom filter), so a lookup costs
// one cache line and no data-dependent branch. Layout and hashing are part of
// the KeySet format (docs/format.md, "Bloom filter").
#ifndef JIGSAW_FORMAT_BLOOM_H_
#define JIGSAW_FORMAT_BLOOM_H_

#include <cstddef>
#include <cstdint>

#include "jigsaw/slice.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace jigsaw::bloom {

inline constexpr size_t kLineBytes = 64;
inline constexpr uint32_t kProbes = 8;  // one bit per 64-bit word of a line

// The 32-bit key hash: the low 32 bits of XXH3-64 of the user key, seed 0.
// It is computed once per key and stored in the key's KeySet entry, so that
// flush and compaction rebuild filters without rehashing keys.
inline uint32_t KeyHash(const Slice& user_key) {
  return static_cast<uint32_t>(XXH3_64bits(user_key.data(), user_key.size()));
}

struct Geometry {
  uint32_t lines = 0;   // 0 means "no filter"
  uint32_t probes = 0;  // kProbes whenever lines > 0
};

// Filter shape for `num_keys` keys at `bits_per_key` bits each (0 = no filter).
Geometry ChooseGeometry(uint64_t num_keys, int bits_per_key);
// Just the line count of ChooseGeometry (cheap enough to call per entry).
inline uint32_t LinesFor(uint64_t num_keys, int bits_per_key) {
  if (num_keys == 0 || bits_per_key <= 0) return 0;
  const uint64_t bits = num_keys * static_cast<uint64_t>(bits_per_key);
  return static_cast<uint32_t>((bits + kLineBytes * 8 - 1) / (kLineBytes * 8));
}

// `lines` points to geometry.lines * kLineBytes bytes.
void AddHash(char* lines, const Geometry& geometry, uint32_t hash);
// AddHash for each of hashes[0, n): the same bits, set eight at a time
// with AVX2 where the CPU has it.
void AddHashes(char* lines, const Geometry& geometry, const uint32_t* hashes, size_t n);
bool MayContainHash(const char* lines, const Geometry& geometry, uint32_t hash);

// The two halves of MayContainHash, so that a lookup can prefetch the line
// and do other work while it arrives.
// The key hash is spread over 64 bits by one multiplication; the line comes
// from the high half (multiply-shift range reduction), the bit positions from
// the low half.
inline uint64_t SpreadHash(uint32_t hash) { return hash * 0x9E3779B97F4A7C15ULL; }
inline const char* LineFor(const char* lines, const Geometry& geometry, uint32_t hash) {
  return lines + static_cast<size_t>((SpreadHash(hash) >> 32) * geometry.lines >> 32) * kLineBytes;
}
bool LineMayContain(const char* line, uint32_t hash);

// The same filter over memory the caller manages (the memtable's filter
// lives in atomics): which line `hash` selects, and the bit it sets in each
// of that line's eight words.
inline uint32_t LineIndex(const Geometry& geometry, uint32_t hash) {
  return static_cast<uint32_t>((SpreadHash(hash) >> 32) * geometry.lines >> 32);
}
void LineBits(uint32_t hash, uint64_t bits[kProbes]);

}  // namespace jigsaw::bloom

#endif  // JIGSAW_FORMAT_BLOOM_H_
