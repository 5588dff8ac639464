#include "format/checksum.h"

#include <isa-l/crc.h>

#include <climits>

namespace jigsaw::crc32c {

uint32_t Extend(uint32_t crc, const char* data, size_t n) {
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
