// MergingIterator: one InternalIterator over several whose entries
// interleave -- the memtables, the L0 tables and the levels of a read or a
// compaction.
#ifndef JIGSAW_TABLE_MERGING_ITERATOR_H_
#define JIGSAW_TABLE_MERGING_ITERATOR_H_

#include <memory>
#include <vector>

#include "format/internal_iterator.h"
#include "jigsaw/comparator.h"

namespace jigsaw {

// Merges `children` in internal-key order (no two children may hold the same
// (user key, sequence)). status() is the first child's error.
std::unique_ptr<InternalIterator> NewMergingIterator(const Comparator* comparator,
                                                     std::vector<std::unique_ptr<InternalIterator>> children);

}  // namespace jigsaw

#endif  // JIGSAW_TABLE_MERGING_ITERATOR_H_
