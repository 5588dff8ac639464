// Little-endian fixed-width and varint encodings.
//
// All JigsawDB formats are little-endian. The KeySet format only uses the
// fixed-width helpers on naturally aligned fields; the varint helpers exist
// for the classic (LevelDB-style) block codec.
#ifndef JIGSAW_UTIL_CODING_H_
#define JIGSAW_UTIL_CODING_H_

#include <cstdint>
#include <cstring>
#include <string>

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "JigsawDB formats are little-endian and the code assumes a little-endian host");

namespace jigsaw {

inline void EncodeFixed32(char* dst, uint32_t v) { std::memcpy(dst, &v, sizeof(v)); }
inline void EncodeFixed64(char* dst, uint64_t v) { std::memcpy(dst, &v, sizeof(v)); }
inline uint32_t DecodeFixed32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
inline uint64_t DecodeFixed64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

// Writes v as a varint32 at dst (at most 5 bytes); returns the byte after it.
inline char* EncodeVarint32(char* dst, uint32_t v) {
  auto* p = reinterpret_cast<uint8_t*>(dst);
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return reinterpret_cast<char*>(p);
}

inline int VarintLength(uint64_t v) {
  int len = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++len;
  }
  return len;
}

// Parses a varint32 from [p, limit). Returns the byte after it, or nullptr if
// the encoding is truncated or longer than 5 bytes.
inline const char* DecodeVarint32(const char* p, const char* limit, uint32_t* value) {
  uint32_t result = 0;
  for (uint32_t shift = 0; shift <= 28 && p < limit; shift += 7) {
    uint32_t byte = static_cast<uint8_t>(*p++);
    if (byte & 0x80) {
      result |= (byte & 0x7f) << shift;
    } else {
      result |= byte << shift;
      *value = result;
      return p;
    }
  }
  return nullptr;
}

inline constexpr uint64_t AlignUp8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }
inline constexpr uint64_t AlignUp64(uint64_t n) { return (n + 63) & ~uint64_t{63}; }

}  // namespace jigsaw

#endif  // JIGSAW_UTIL_CODING_H_
