// DBIter: the user-facing Iterator (include/jigsaw/iterator.h) over a merge
// of the engine's internal iterators: the newest version visible at a
// sequence number of each key, deletions hidden.
#ifndef JIGSAW_DB_DB_ITER_H_
#define JIGSAW_DB_DB_ITER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "format/internal_iterator.h"
#include "jigsaw/comparator.h"
#include "jigsaw/iterator.h"

namespace jigsaw {

// Told, when the iterator it watches is destroyed (on that thread), how
// many times the user positioned it: seeks, Next and Prev calls.
class IteratorObserver {
 public:
  virtual void Closed(uint64_t moves) const = 0;

 protected:
  ~IteratorObserver() = default;
};

// Shows the newest version visible at `sequence` of each key of `internal`
// (entries in internal-key order, typically a merging iterator), hiding
// deletions. `pins` keeps what `internal` reads (memtables, versions) alive
// as long as the iterator; `observer` (may be null; not owned -- keep it
// alive through `pins`) is told its moves.
std::unique_ptr<Iterator> NewDBIterator(const Comparator* comparator, std::unique_ptr<InternalIterator> internal,
                                        SequenceNumber sequence, std::vector<std::shared_ptr<const void>> pins,
                                        const IteratorObserver* observer = nullptr);

// Shows only the keys of `iter` in [*lower, *upper) (ReadOptions::
// iterate_lower_bound, iterate_upper_bound; either may be null: unbounded
// on that side). The bounds are copied. Seek below the lower bound seeks
// to it; SeekToLast starts below the upper bound. Without bounds, `iter`
// itself is returned.
std::unique_ptr<Iterator> NewBoundedIterator(const Comparator* comparator, std::unique_ptr<Iterator> iter,
                                             const Slice* lower, const Slice* upper);

}  // namespace jigsaw

#endif  // JIGSAW_DB_DB_ITER_H_
