// Internal-key vocabulary shared by every block format and the engine.
//
// Each stored entry carries a user key, a sequence number and a type. Entries
// are ordered by user key ascending (per the comparator), then by sequence
// number descending, then by type descending, so that the newest version of a
// key comes first -- the same order as LevelDB's internal keys.
#ifndef JIGSAW_FORMAT_DBFORMAT_H_
#define JIGSAW_FORMAT_DBFORMAT_H_

#include <cstdint>

#include "jigsaw/comparator.h"
#include "jigsaw/slice.h"

namespace jigsaw {

using SequenceNumber = uint64_t;

// Sequence numbers use 56 bits so that (sequence << 8 | type) fits a u64.
inline constexpr SequenceNumber kMaxSequenceNumber = (uint64_t{1} << 56) - 1;

// Stored as one byte in every format. Values are part of the on-media formats.
enum class ValueType : uint8_t {
  kDeletion = 0,
  kValue = 1,
};
inline constexpr uint8_t kMaxValueTypeByte = 1;

// Largest user key and value any block format accepts (documented in
// docs/format.md; the engine may impose smaller limits).
inline constexpr size_t kMaxKeySize = 64 * 1024;
inline constexpr size_t kMaxValueSize = 64 * 1024 * 1024;

// The 8-byte tag stored with each key: sequence << 8 | type.
inline constexpr uint64_t PackTag(SequenceNumber seq, ValueType type) {
  return (seq << 8) | static_cast<uint8_t>(type);
}
inline constexpr SequenceNumber TagSequence(uint64_t tag) { return tag >> 8; }
inline constexpr ValueType TagType(uint64_t tag) { return static_cast<ValueType>(tag & 0xff); }

// Compares (user_key_a, tag_a) with (user_key_b, tag_b) in internal-key order.
inline int CompareInternal(const Comparator* ucmp, const Slice& a, uint64_t tag_a,
                           const Slice& b, uint64_t tag_b) {
  int r = ucmp->Compare(a, b);
  if (r != 0) return r;
  if (tag_a > tag_b) return -1;  // larger tag (newer) sorts first
  if (tag_a < tag_b) return 1;
  return 0;
}

}  // namespace jigsaw

#endif  // JIGSAW_FORMAT_DBFORMAT_H_
