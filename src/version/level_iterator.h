// Iterators over one level >= 1: its tables are sorted and disjoint, so the
// level reads as their concatenation (table/concatenating_iterator.h), one
// table open at a time.
#ifndef JIGSAW_VERSION_LEVEL_ITERATOR_H_
#define JIGSAW_VERSION_LEVEL_ITERATOR_H_

#include <memory>
#include <span>
#include <vector>

#include "version/version.h"
#include "format/internal_iterator.h"
#include "jigsaw/options.h"
#include "util/profile_clock.h"

namespace jigsaw {

// Over the tables' iterators (Table::NewIterator with `options`). `tables`
// are not copied (a user's scan sets up one per level): they, and what they
// read, must outlive the iterator (the caller pins the version holding them).
std::unique_ptr<InternalIterator> NewLevelIterator(const Comparator* comparator, std::span<const TableRef> tables,
                                                   const ReadOptions& options);
// The same over the tables' scan iterators (Table::NewScanIterator, with
// `decode`, which may be null), for compaction inputs: one pass. `tables`
// are kept alive by the iterator.
std::unique_ptr<InternalIterator> NewLevelScanIterator(const Comparator* comparator, std::vector<TableRef> tables,
                                                       SampledPhase* decode);

}  // namespace jigsaw

#endif  // JIGSAW_VERSION_LEVEL_ITERATOR_H_
