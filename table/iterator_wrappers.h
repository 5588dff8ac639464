// Iterators that forward one other InternalIterator: TimedIterator charges
// its moves to a profile phase, KeyRangeIterator shows the entries inside
// user-key bounds.
#ifndef JIGSAW_TABLE_ITERATOR_WRAPPERS_H_
#define JIGSAW_TABLE_ITERATOR_WRAPPERS_H_

#include <memory>
#include <string>

#include "format/internal_iterator.h"
#include "jigsaw/comparator.h"
#include "util/profile_clock.h"

namespace jigsaw {

// Forwards to `base`, timing its moves in *phase (the compaction profile's
// decode time): steps sampled, positioning exactly. `phase` must outlive the
// iterator.
std::unique_ptr<InternalIterator> NewTimedIterator(std::unique_ptr<InternalIterator> base, SampledPhase* phase);

// The entries of `base` whose user keys lie in (after, upto]; either bound
// may be null (unbounded). The bounds must outlive the iterator.
std::unique_ptr<InternalIterator> NewKeyRangeIterator(const Comparator* comparator,
                                                      std::unique_ptr<InternalIterator> base,
                                                      const std::string* after, const std::string* upto);

}  // namespace jigsaw

#endif  // JIGSAW_TABLE_ITERATOR_WRAPPERS_H_
