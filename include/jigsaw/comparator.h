// Comparator: the total order of user keys.
//
// A comparator's Name() is stored with the data (in every block built with it
// and, later, in the database manifest) and checked when the data is read
// back, so that data ordered by one comparator is never read with another.
// Change the name whenever the order changes.
//
// Keys that compare equal must be equal bytes: the Bloom filters of blocks,
// tables and the memtable hash key bytes, so an order in which different
// byte strings are equal (case-insensitive, say) would make lookups miss.
//
// Thread-safety: Compare() is called concurrently from many threads; an
// implementation must be thread-safe and must not change its order over time.
#ifndef JIGSAW_INCLUDE_JIGSAW_COMPARATOR_H_
#define JIGSAW_INCLUDE_JIGSAW_COMPARATOR_H_

#include "jigsaw/export.h"
#include "jigsaw/slice.h"

namespace jigsaw {

class JIGSAW_EXPORT Comparator {
 public:
  virtual ~Comparator();

  // Three-way comparison: <0 iff a < b, 0 iff a == b, >0 iff a > b.
  virtual int Compare(const Slice& a, const Slice& b) const = 0;

  // Identifies the order. Names starting with "jigsaw." are reserved.
  virtual const char* Name() const = 0;
};

// Lexicographic order of unsigned bytes (memcmp, shorter prefix first).
// The returned object is a process-wide singleton; do not delete it.
// Named "jigsaw.BytewiseComparator".
JIGSAW_EXPORT const Comparator* BytewiseComparator();

}  // namespace jigsaw

#endif  // JIGSAW_INCLUDE_JIGSAW_COMPARATOR_H_
