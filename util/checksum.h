// CRC32C (Castagnoli), the checksum of every JigsawDB on-media format.
// Backed by Intel ISA-L's crc32_iscsi (hardware-accelerated where available).
#ifndef JIGSAW_UTIL_CHECKSUM_H_
#define JIGSAW_UTIL_CHECKSUM_H_

#include <cstddef>
#include <cstdint>

namespace jigsaw::crc32c {

// Returns the CRC32C of data[0, n) continued from `crc`, the CRC32C of the
// bytes before it (0 for none). Extend(Extend(0, a), b) == Value(a ++ b).
uint32_t Extend(uint32_t crc, const char* data, size_t n);

inline uint32_t Value(const char* data, size_t n) { return Extend(0, data, n); }

}  // namespace jigsaw::crc32c

#endif  // JIGSAW_UTIL_CHECKSUM_H_
