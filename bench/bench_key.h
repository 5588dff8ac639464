// db_bench's keys, shared by jigsaw_bench and jigsaw_profile.
#ifndef JIGSAW_BENCH_BENCH_KEY_H_
#define JIGSAW_BENCH_BENCH_KEY_H_

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>

namespace jigsaw::bench {

// db_bench's key for integer n into *key (its buffer reused): n as 16
// zero-padded decimal digits ("%016" PRIu64), cut to `key_size` bytes or
// padded to it with 'x'. Formatted with std::to_chars: snprintf's format
// parsing cost ~45 ns per key, a cost of the harness that every engine paid.
inline void MakeBenchKey(uint64_t n, size_t key_size, std::string* key) {
  constexpr size_t kDigits = 16;
  char digits[24];
  const size_t length = static_cast<size_t>(std::to_chars(digits, digits + sizeof(digits), n).ptr - digits);
  key->assign(std::min(length < kDigits ? kDigits - length : 0, key_size), '0');
  key->append(digits, std::min(length, key_size - key->size()));
  if (key->size() < key_size) key->append(key_size - key->size(), 'x');
}

}  // namespace jigsaw::bench

#endif  // JIGSAW_BENCH_BENCH_KEY_H_
