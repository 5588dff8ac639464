#include "util/checksum.h"

#include <isa-l/crc.h>

#include <climits>
#include <cstring>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define JIGSAW_HAVE_CRC32_INSTRUCTION 1
#endif

namespace jigsaw::crc32c {

namespace {

#ifdef JIGSAW_HAVE_CRC32_INSTRUCTION
// Below this size the CPU's crc32 instruction, 8 bytes at a time, beats
// ISA-L: its folding code uses AVX-512 registers, whose warm-up and
// transitions cost more than the checksum of a WAL record or a key
// (measured: 8.7% of a Put went to ISA-L for ~130-byte records).
// Chosen at run time, so portable builds (JIGSAW_HOST_ISA=OFF) use it too.
constexpr size_t kSmallInput = 512;
bool HaveCrc32Instruction() {
  static const bool have = [] {
    __builtin_cpu_init();  // may run before the runtime's own initialisation
    return __builtin_cpu_supports("sse4.2") != 0;
  }();
  return have;
}

__attribute__((target("sse4.2"))) uint32_t ExtendSmall(uint32_t crc, const char* data, size_t n) {
  uint64_t state = ~crc;
  for (; n >= 8; n -= 8, data += 8) {
    uint64_t word;
    std::memcpy(&word, data, 8);
    state = _mm_crc32_u64(state, word);
  }
  auto state32 = static_cast<uint32_t>(state);
  for (; n > 0; --n, ++data) state32 = _mm_crc32_u8(state32, static_cast<unsigned char>(*data));
  return ~state32;
}
#endif

}  // namespace

uint32_t Extend(uint32_t crc, const char* data, size_t n) {
#ifdef JIGSAW_HAVE_CRC32_INSTRUCTION
  if (n < kSmallInput && HaveCrc32Instruction()) return ExtendSmall(crc, data, n);
#endif
  // ISA-L keeps the CRC register un-inverted between calls; the standard
  // CRC32C inverts on entry and exit.
  unsigned int state = ~crc;
  auto* p = reinterpret_cast<unsigned char*>(const_cast<char*>(data));
  while (n > 0) {
    const int chunk = n > static_cast<size_t>(INT_MAX) ? INT_MAX : static_cast<int>(n);
    state = crc32_iscsi(p, chunk, state);
    p += chunk;
    n -= static_cast<size_t>(chunk);
  }
  return ~state;
}

}  // namespace jigsaw::crc32c
