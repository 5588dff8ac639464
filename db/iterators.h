// Internal iterators over (user key, sequence, type, value) entries in
// internal-key order, all implementing InternalIterator:
//  - MergingIterator merges children (memtables, L0 blocks, levels);
//  - LevelIterator concatenates the sorted blocks of one level >= 1.
// And DBIter, the user-facing Iterator over a merged internal iterator.
#ifndef JIGSAW_DB_ITERATORS_H_
#define JIGSAW_DB_ITERATORS_H_

#include <memory>
#include <string>
#include <vector>

#include "pmem/nvm_timing.h"
#include "format/block.h"
#include "jigsaw/iterator.h"
#include "util/profile_clock.h"
#include "version/version.h"

namespace jigsaw {

std::unique_ptr<InternalIterator> NewMergingIterator(const Comparator* comparator,
                                                  std::vector<std::unique_ptr<InternalIterator>> children);

// Forwards to `base`, timing its moves in *phase (the compaction profile's
// decode time): steps sampled, positioning exactly. `phase` must outlive the
// iterator.
std::unique_ptr<InternalIterator> NewTimedIterator(std::unique_ptr<InternalIterator> base, SampledPhase* phase);

// The entries of `base` whose user keys lie in (after, upto]; either bound
// may be null (unbounded). The bounds must outlive the iterator.
std::unique_ptr<InternalIterator> NewKeyRangeIterator(const Comparator* comparator, std::unique_ptr<InternalIterator> base,
                                                   const std::string* after, const std::string* upto);

// `blocks` must stay alive while the iterator is used (the caller pins them).
std::unique_ptr<InternalIterator> NewLevelIterator(const Comparator* comparator, std::vector<TableRef> blocks);
// The same over tables' scan iterators (Table::NewScanIterator, with
// `decode`, which may be null), for compaction inputs: one pass, one table
// open at a time.
std::unique_ptr<InternalIterator> NewLevelScanIterator(const Comparator* comparator, std::vector<TableRef> blocks,
                                                    SampledPhase* decode);

// Shows the newest version visible at `sequence` of each key, hiding
// deletions. `pins` keeps memtables and versions alive as long as the
// iterator. With a `timing` model, every seek charges `pmem_sources` random
// block reads (the L0 blocks and levels searched).
std::unique_ptr<Iterator> NewDBIterator(const Comparator* comparator, std::unique_ptr<InternalIterator> internal,
                                        SequenceNumber sequence, std::vector<std::shared_ptr<const void>> pins,
                                        const pmem::NvmTiming* timing = nullptr, int pmem_sources = 0);

}  // namespace jigsaw

#endif  // JIGSAW_DB_ITERATORS_H_
