// Bytewise key order decided mostly by integer comparisons.
//
// A key's prefix is its first 16 bytes read as two big-endian words,
// zero-padded. Bytewise order of keys implies the order of their prefixes,
// so two keys with different prefixes compare by them; with equal prefixes
// the bytes from 16 on (or the sizes) settle it. The skiplist memtable and
// the merging iterator compare a precomputed prefix of the key they look
// for against each candidate instead of calling memcmp through the
// comparator -- 16 bytes, not 8, because keys often share a long start (the
// benchmarks' zero-padded numbers share their first 8 bytes).
#ifndef JIGSAW_UTIL_KEY_PREFIX_H_
#define JIGSAW_UTIL_KEY_PREFIX_H_

#include <cstdint>
#include <cstring>

#include "jigsaw/comparator.h"
#include "jigsaw/slice.h"

namespace jigsaw {

struct KeyPrefix {
  uint64_t high = 0;  // bytes [0, 8), big-endian
  uint64_t low = 0;   // bytes [8, 16)
};

inline KeyPrefix LoadKeyPrefix(const Slice& key) {
  uint64_t high = 0, low = 0;
  if (key.size() >= 16) {  // the common case: two plain loads
    std::memcpy(&high, key.data(), 8);
    std::memcpy(&low, key.data() + 8, 8);
  } else {
    char bytes[16] = {};
    std::memcpy(bytes, key.data(), key.size());
    std::memcpy(&high, bytes, 8);
    std::memcpy(&low, bytes + 8, 8);
  }
  return KeyPrefix{__builtin_bswap64(high), __builtin_bswap64(low)};
}

// Bytewise comparison of a and b (<0, 0, >0), given their prefixes.
inline int CompareWithPrefixes(const Slice& a, const KeyPrefix& pa, const Slice& b, const KeyPrefix& pb) {
  if (pa.high != pb.high) return pa.high < pb.high ? -1 : 1;
  if (pa.low != pb.low) return pa.low < pb.low ? -1 : 1;
  if (a.size() <= 16 || b.size() <= 16) {
    // Equal prefixes and one key within them: it is a prefix of the other
    // (the other's bytes up to 16 beyond it are the zero padding).
    return a.size() < b.size() ? -1 : a.size() > b.size() ? 1 : 0;
  }
  return Slice(a.data() + 16, a.size() - 16).compare(Slice(b.data() + 16, b.size() - 16));
}

// One key to compare others with under `comparator`: by prefixes, inline,
// when the order is bytewise; through the comparator otherwise. For binary
// searches that compare many keys with the same target.
class KeyTarget {
 public:
  KeyTarget(const Comparator* comparator, const Slice& target)
      : comparator_(comparator),
        bytewise_(comparator == BytewiseComparator()),
        target_(target),
        prefix_(bytewise_ ? LoadKeyPrefix(target) : KeyPrefix{}) {}

  bool bytewise() const { return bytewise_; }
  // <0, 0, >0 as `key` sorts before, with, after the target.
  int Compare(const Slice& key) const {
    return bytewise_ ? CompareWithPrefixes(key, LoadKeyPrefix(key), target_, prefix_) : comparator_->Compare(key, target_);
  }
  // The same with the key's prefix already loaded (bytewise only).
  int Compare(const Slice& key, const KeyPrefix& key_prefix) const {
    return CompareWithPrefixes(key, key_prefix, target_, prefix_);
  }
  // The same for a key known by its prefix, fetched through key_of() only
  // when the prefixes are equal (bytewise only).
  template <typename KeyOf>
  int CompareLazily(const KeyPrefix& key_prefix, KeyOf&& key_of) const {
    if (key_prefix.high != prefix_.high) return key_prefix.high < prefix_.high ? -1 : 1;
    if (key_prefix.low != prefix_.low) return key_prefix.low < prefix_.low ? -1 : 1;
    return Compare(key_of(), key_prefix);
  }

 private:
  const Comparator* const comparator_;
  const bool bytewise_;
  const Slice target_;
  const KeyPrefix prefix_;
};

}  // namespace jigsaw

#endif  // JIGSAW_UTIL_KEY_PREFIX_H_
