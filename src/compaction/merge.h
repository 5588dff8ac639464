// The merge of a compaction: which entries of its inputs survive, and how
// they reach the output sink.
//
// One loop (merge.cc, MergeLoop) walks the inputs' entries in internal-key
// order and applies the drop rule (DropRule, below) to each; two input
// strategies feed it:
//  - MergeInto reads any InternalIterator (every block format, bounded key
//    ranges, a redo at recovery). Survivors are added entry by entry; where
//    the sink takes runs and the iterator offers them (KeySet blocks,
//    InternalIterator::PeekRun), a run in which the merge would decide
//    nothing -- one version per key, no tombstone, nothing of another input
//    in between -- goes to the sink as bytes, and only its ends are visited.
//  - MergeBlockScans reads KeySet blocks in place through entry cursors, no
//    iterator stack: consecutive survivors of one input block that lie back
//    to back (values too) form a run handed to the sink as bytes; only a
//    surviving tombstone, and an older version kept for a snapshot, are
//    added entry by entry. From the newest version of a key that is no
//    tombstone the cursor gallops: the entries after it that are new keys,
//    no tombstones and below every other input's entry join the run
//    without a visit of the loop each.
// Both keep the same entries of the same inputs; the strategies differ in
// where an output may end (below) and so in how entries fall into blocks.
//
// Where outputs end: the sink's CloseIfFull ends an output before the
// first entry of a user key, never inside a run. MergeInto asks before every
// new key, MergeBlockScans before each surviving one. A pmem output block
// that cannot take the next version of a key is ended there
// (PmemBlockSink::Add): one key's versions may then span two blocks.
//
// Thread-safety: one call per thread; the inputs and the sink are its own.
#ifndef JIGSAW_COMPACTION_MERGE_H_
#define JIGSAW_COMPACTION_MERGE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "compaction/output_sink.h"
#include "compaction/picker.h"
#include "format/internal_iterator.h"
#include "table/range_tombstones.h"
#include "table/table.h"
#include "util/profile_clock.h"

namespace jigsaw {

struct MergeRules {
  const Comparator* ucmp = nullptr;
  SequenceNumber smallest_snapshot = 0;
  // The version the inputs come from, to tell whether a tombstone may go;
  // null keeps every tombstone (a pending compaction redone at recovery).
  const Version* base = nullptr;
  int output_level = 1;
  // Range tombstones (base's; may be null): a version below one of them
  // whose sequence is at or below smallest_snapshot is dropped -- every
  // reader sees it deleted. MergeCompaction applies them.
  const RangeTombstoneSet* range_tombstones = nullptr;
};

// The drop rule (LevelDB's), written here once. Of one user key's versions,
// newest first:
//   1. a version is dropped when a newer version of its key is visible to
//      every reader: that newer version's sequence is at or below the
//      smallest snapshot, so no reader can see this one;
//   2. a tombstone is dropped when it is itself visible to every reader and
//      no level below the output can hold the key (rules.base; without a
//      base every tombstone stays): it has nothing left to hide.
// Everything else survives.
class DropRule {
 public:
  explicit DropRule(const MergeRules& rules) : rules_(rules), smallest_snapshot_(rules.smallest_snapshot) {}

  // The next version passed to Drops is the newest of a new user key.
  void NewKey() { newer_sequence_ = kMaxSequenceNumber; }
  // Whether the next version of the current key is dropped. Each version of
  // the key goes through here (or through Passed), newest first.
  bool Drops(const Slice& user_key, SequenceNumber sequence, ValueType type) {
    const bool drop = newer_sequence_ <= smallest_snapshot_ ||                // rule 1
                      (type == ValueType::kDeletion && sequence <= smallest_snapshot_ &&  // rule 2
                       rules_.base != nullptr &&
                       IsBaseLevelForKey(*rules_.base, rules_.ucmp, rules_.output_level, user_key));
    newer_sequence_ = sequence;
    return drop;
  }
  // Whether rule 1 keeps the newest version of every user key (it always
  // does unless the smallest snapshot is the largest sequence): then a newest
  // version that is not a tombstone survives without a decision.
  static bool KeepsNewestVersions(const MergeRules& rules) { return rules.smallest_snapshot < kMaxSequenceNumber; }
  // The current key's newest version, of `sequence`, survived without a
  // decision (it ended a run spliced as bytes, whose entries the merge
  // passes unseen: each the only version of its key in the run).
  void Passed(SequenceNumber sequence) { newer_sequence_ = sequence; }

 private:
  const MergeRules& rules_;
  const SequenceNumber smallest_snapshot_;
  SequenceNumber newer_sequence_ = kMaxSequenceNumber;  // of the key's last version seen
};

// Feeds the surviving entries of `input` (internal-key order) to `sink`,
// then finishes it. `after_output` (may be empty) runs each time an output
// ended before the last; an error from it stops the merge. *entries (may
// be null) is increased by the entries read, *spliced (may be null) by
// those of them copied in runs. On error the sink is left for the caller
// to Abandon.
Status MergeInto(InternalIterator* input, const MergeRules& rules, OutputSink* sink,
                 const std::function<Status()>& after_output, uint64_t* entries, uint64_t* spliced = nullptr);

// The same over `inputs`, scans of KeySet blocks (each in internal-key
// order; entries of one key in different inputs have different sequence
// numbers). `sink` must take runs (TakesRuns()); *spliced counts every
// entry appended as bytes, alone or in a longer run. With `decode` (may be
// null) stepping the cursors is charged to it (sampled). NotSupported if
// an input block's entries are not in the layout the cursors read --
// possibly after outputs were made: the caller Abandons the sink and
// merges through iterators (MergeInto).
Status MergeBlockScans(std::vector<std::unique_ptr<BlockScan>> inputs, const MergeRules& rules, OutputSink* sink,
                       const std::function<Status()>& after_output, SampledPhase* decode, uint64_t* entries,
                       uint64_t* spliced);

// The merge of a compaction step: the entries of the first `input_sets`
// (1 or 2) input sets of `compaction` whose user keys lie in (after, upto]
// (either bound may be null: unbounded) into `sink`, with MergeInto's
// `after_output`, *entries and *spliced. As bytes (MergeBlockScans) when
// the range is unbounded, every input table offers a block scan and the
// sink takes runs; through iterators (MergeInto) otherwise -- and again
// through iterators, into the sink emptied by Abandon, if the bytes merge
// meets a block its cursors cannot read (that attempt's counts are left
// out; its time stays in the profile's phases). With `decode` (may be null)
// the block format's work is charged to it. Where rules.range_tombstones
// covers a key of the inputs, through iterators, the versions it deletes
// filtered out (NewRangeDeletionFilter). On error the sink is left for the
// caller to Abandon.
Status MergeCompaction(const Compaction& compaction, int input_sets, const std::string* after,
                       const std::string* upto, const MergeRules& rules, OutputSink* sink,
                       const std::function<Status()>& after_output, SampledPhase* decode, uint64_t* entries,
                       uint64_t* spliced);

// The merged inputs of `compaction`: one child per L0 table (they overlap),
// one concatenating iterator per deeper level (sorted, disjoint), over the
// first `input_sets` (1 or 2) of its input sets. Scan iterators: with
// `decode` (may be null) the block format's work is charged to it.
std::unique_ptr<InternalIterator> NewCompactionInput(const Comparator* ucmp, const Compaction& compaction,
                                                     int input_sets, SampledPhase* decode);

// The block scans of the same inputs: one per L0 table, one per deeper
// level (its tables' blocks one after another). False if a table has no
// block scan (classic blocks; pmem blocks the cursors cannot read): merge
// through iterators then. With `decode` (may be null) opening blocks is
// charged to it.
bool NewCompactionBlockScans(const Compaction& compaction, int input_sets, SampledPhase* decode,
                             std::vector<std::unique_ptr<BlockScan>>* scans);

}  // namespace jigsaw

#endif  // JIGSAW_COMPACTION_MERGE_H_
