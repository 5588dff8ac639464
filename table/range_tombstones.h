// Range tombstones: what DB::DeleteRange records. A tombstone [begin, end)
// of sequence s deletes every version of every user key k with
// begin <= k < end whose sequence is below s; a reader at a sequence below
// s does not see it. Tombstones are not entries of any block: a memtable
// keeps its own, a flush moves them into the Version (and so into the
// manifest), and they leave it once no table holds a version they cover
// (docs/design/027-range-deletes.md).
//
// RangeTombstoneSet holds a set of them cut into fragments for lookup:
// the begin and end keys of all of them split the key space into disjoint
// intervals, each with the sequences of the tombstones that cover all of
// it. Thread-safety: immutable once built; shared between threads.
#ifndef JIGSAW_TABLE_RANGE_TOMBSTONES_H_
#define JIGSAW_TABLE_RANGE_TOMBSTONES_H_

#include <memory>
#include <string>
#include <vector>

#include "format/dbformat.h"
#include "format/internal_iterator.h"
#include "jigsaw/comparator.h"

namespace jigsaw {

struct RangeTombstone {
  std::string begin;  // first user key covered
  std::string end;    // first user key after the range (not covered)
  SequenceNumber sequence = 0;
};

class RangeTombstoneSet {
 public:
  // `tombstones`: each with begin < end; sequences unique.
  RangeTombstoneSet(const Comparator* ucmp, std::vector<RangeTombstone> tombstones);

  // Sorted by sequence, oldest first.
  const std::vector<RangeTombstone>& tombstones() const { return tombstones_; }
  bool empty() const { return tombstones_.empty(); }

  // The largest sequence <= visible of a tombstone covering user_key; 0 if
  // there is none. A version of user_key is deleted for a reader at
  // `visible` when its sequence is below this.
  SequenceNumber Covering(const Slice& user_key, SequenceNumber visible) const;
  // Whether a tombstone of sequence <= visible covers a key of
  // [smallest, largest].
  bool Overlaps(const Slice& smallest, const Slice& largest, SequenceNumber visible) const;

  // The same set with `added` and without the tombstones of the sequences in
  // `removed`; null if that leaves none.
  std::shared_ptr<const RangeTombstoneSet> Changed(const std::vector<RangeTombstone>& added,
                                                   const std::vector<SequenceNumber>& removed) const;
  const Comparator* comparator() const { return ucmp_; }

 private:
  friend class RangeDeletionFilter;
  struct Fragment {
    std::string begin, end;
    std::vector<SequenceNumber> sequences;  // ascending
  };
  // The fragment holding user_key, or -1.
  ptrdiff_t FragmentOf(const Slice& user_key) const;
  static SequenceNumber Largest(const Fragment& f, SequenceNumber visible);

  const Comparator* const ucmp_;
  std::vector<RangeTombstone> tombstones_;
  std::vector<Fragment> fragments_;  // sorted, disjoint, each covered
};

// The tombstones of `a` and `b` (either may be null) together; null if none.
std::shared_ptr<const RangeTombstoneSet> MergeRangeTombstones(const Comparator* ucmp,
                                                              const std::shared_ptr<const RangeTombstoneSet>& a,
                                                              const std::shared_ptr<const RangeTombstoneSet>& b);

// The entries of `base` that no tombstone of `tombstones` with sequence <=
// `visible` deletes: an entry is hidden when its sequence is below
// tombstones->Covering(its key, visible). A reader passes the sequence it
// reads at; a compaction its smallest snapshot (what every reader sees
// deleted may go). `tombstones` must outlive the iterator. Offers no runs or
// windows: its reader steps entry by entry.
std::unique_ptr<InternalIterator> NewRangeDeletionFilter(std::unique_ptr<InternalIterator> base,
                                                         const RangeTombstoneSet* tombstones, SequenceNumber visible);

}  // namespace jigsaw

#endif  // JIGSAW_TABLE_RANGE_TOMBSTONES_H_
