// CopyShort: memcpy for the few-dozen-byte pieces a block builder moves per
// entry (an entry, a value), without a call into the C library.
#ifndef JIGSAW_UTIL_SHORT_COPY_H_
#define JIGSAW_UTIL_SHORT_COPY_H_

#include <cstddef>
#include <cstring>

namespace jigsaw {

// Copies n bytes from src to dest (which must not overlap). Up to 256
// bytes as a few fixed-size moves, the last one overlapping the one
// before; longer copies call memcpy.
inline void CopyShort(char* dest, const char* src, size_t n) {
  if (n >= 32 && n <= 256) {
    for (size_t i = 0; i + 32 < n; i += 32) __builtin_memcpy(dest + i, src + i, 32);
    __builtin_memcpy(dest + n - 32, src + n - 32, 32);
  } else if (n >= 16 && n < 32) {
    __builtin_memcpy(dest, src, 16);
    __builtin_memcpy(dest + n - 16, src + n - 16, 16);
  } else if (n >= 8 && n < 16) {
    __builtin_memcpy(dest, src, 8);
    __builtin_memcpy(dest + n - 8, src + n - 8, 8);
  } else if (n > 0) {
    std::memcpy(dest, src, n);
  }
}

}  // namespace jigsaw

#endif  // JIGSAW_UTIL_SHORT_COPY_H_
