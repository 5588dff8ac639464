// DBIter: the user-facing Iterator (include/jigsaw/iterator.h) over a merge
// of the engine's internal iterators: the newest version visible at a
// sequence number of each key, deletions hidden.
#ifndef JIGSAW_DB_DB_ITER_H_
#define JIGSAW_DB_DB_ITER_H_

#include <cstdint>
#include <memory>
#include <string>
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
// alive through `pins`) is told its moves. Refresh: NotSupported.
std::unique_ptr<Iterator> NewDBIterator(const Comparator* comparator, std::unique_ptr<InternalIterator> internal,
                                        SequenceNumber sequence, std::vector<std::shared_ptr<const void>> pins,
                                        const IteratorObserver* observer = nullptr);

// A DBIter's read view (NewProbingDBIterator): point lookups for its
// seeks, the merge it reads, and the view a refreshed iterator reads.
class SeekProbe {
 public:
  virtual ~SeekProbe() = default;
  // Looks `key` up as DB::Get does: true, with *value, if it is a live key.
  // False if it is absent or deleted, or the lookup failed (the merge then
  // reports what is wrong when it reads there).
  virtual bool Probe(const Slice& key, std::string* value) = 0;
  // The merge the iterator reads otherwise (as NewDBIterator's `internal`),
  // asked for once, when first needed; it reads what the probe pins.
  virtual std::unique_ptr<InternalIterator> NewMerge() = 0;
  // Iterator::Refresh: nullptr if the database's read view for the same
  // options is still the one this probe reads (the same memtables, tables
  // and sequence: a merge of it reads what a new one would), else a probe
  // of that view.
  virtual std::unique_ptr<SeekProbe> Renew() = 0;
  // The sequence number the view reads at, and the observer of iterators
  // over it (may be null; kept alive by the probe).
  virtual SequenceNumber sequence() const = 0;
  virtual const IteratorObserver* observer() const = 0;
};

// As NewDBIterator, the merge built by `probe` when first needed, at the
// probe's sequence, told to its observer; Refresh takes the probe's
// renewal. With a bytewise comparator a Seek first asks the probe: when
// its target is a live key -- then the first key at or after it is the
// target itself -- the iterator stands there with the value found, and the
// merge is neither built nor sought. (Under another comparator a key found
// equal to the target may be stored with other bytes: no probes.) A step from there seeks the merge to the same entry
// first. Since a probe is wasted when the target is absent or the iterator
// steps on from it (a scan), each thread keeps a credit of what its probes
// paid lately and probes while it is not negative (and one seek in 16
// otherwise, to notice when they would pay again).
std::unique_ptr<Iterator> NewProbingDBIterator(const Comparator* comparator, std::unique_ptr<SeekProbe> probe);

// Shows only the keys of `iter` in [*lower, *upper) (ReadOptions::
// iterate_lower_bound, iterate_upper_bound; either may be null: unbounded
// on that side). The bounds are copied. Seek below the lower bound seeks
// to it; SeekToLast starts below the upper bound. Without bounds, `iter`
// itself is returned.
std::unique_ptr<Iterator> NewBoundedIterator(const Comparator* comparator, std::unique_ptr<Iterator> iter,
                                             const Slice* lower, const Slice* upper);

}  // namespace jigsaw

#endif  // JIGSAW_DB_DB_ITER_H_
