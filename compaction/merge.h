// The merge of a compaction: which entries of its inputs survive.
//
// Rules (LevelDB's): of one user key's versions, newest first, a version is
// dropped when a newer one is already visible to every reader (its sequence
// is at or below the smallest snapshot); a tombstone is dropped when it is
// visible to every reader and no deeper level can hold the key. Outputs end
// only between user keys.
#ifndef JIGSAW_COMPACTION_MERGE_H_
#define JIGSAW_COMPACTION_MERGE_H_

#include <cstdint>
#include <functional>
#include <memory>

#include "compaction/output_sink.h"
#include "compaction/picker.h"
#include "format/internal_iterator.h"
#include "util/profile_clock.h"

namespace jigsaw {

struct MergeRules {
  const Comparator* ucmp = nullptr;
  SequenceNumber smallest_snapshot = 0;
  // The version the inputs come from, to tell whether a tombstone may go;
  // null keeps every tombstone (a pending compaction redone at recovery).
  const Version* base = nullptr;
  int output_level = 1;
};

// Feeds the surviving entries of `input` (internal-key order) to `sink`,
// then finishes it. Where the sink takes runs and the input offers them
// (KeySet version 2 blocks, InternalIterator::PeekRun), maximal runs in
// which the merge decides nothing go to the sink as bytes; entries are
// visited one by one only around them. `after_output` (may be empty) runs
// each time an output ended before the last; an error from it stops the
// merge. *entries (may be null) counts the entries read, *spliced (may be
// null) those of them copied in runs. On error the sink is left for the
// caller to Abandon.
Status MergeInto(InternalIterator* input, const MergeRules& rules, OutputSink* sink,
                 const std::function<Status()>& after_output, uint64_t* entries, uint64_t* spliced = nullptr);

// The merged inputs of `compaction`: one child per L0 table (they overlap),
// one concatenating iterator per deeper level (sorted, disjoint), over the
// first `input_sets` (1 or 2) of its input sets. Scan iterators: with
// `decode` (may be null) the block format's work is charged to it.
std::unique_ptr<InternalIterator> NewCompactionInput(const Comparator* ucmp, const Compaction& compaction,
                                                     int input_sets, SampledPhase* decode);

}  // namespace jigsaw

#endif  // JIGSAW_COMPACTION_MERGE_H_
