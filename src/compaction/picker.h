// Compaction picking: which tables a compaction step takes, and where its
// outputs go. Pure functions of a Version, the options and the state passed
// in -- no locks, no I/O -- so that every rule is unit-tested on its own
// (tests/compaction/picker_test.cc).
#ifndef JIGSAW_COMPACTION_PICKER_H_
#define JIGSAW_COMPACTION_PICKER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "version/version.h"
#include "jigsaw/options.h"

namespace jigsaw {

// The inputs of one compaction step: tables of `level` and the tables of
// level + 1 they overlap, merged into level + 1.
struct Compaction {
  int level = 0;
  std::vector<TableRef> inputs[2];
  // A split step (CompactRange in a full pool): only keys <= split_key move
  // to level + 1 -- inputs[1] must end at or before it -- and the rest of
  // inputs[0] is rewritten at `level`, in one commit. pmem outputs only.
  bool split = false;
  std::string split_key;

  int output_level() const { return level + 1; }
  uint64_t InputBytes() const;  // bytes of all input tables
};

// Target bytes of `level` >= 1: level1_size x level_size_multiplier^(level-1).
uint64_t MaxBytesForLevel(const Options& options, int level);

// The automatic compaction, if a level is over its target: L0 scored by its
// table count over level0_compaction_trigger, deeper levels by bytes over
// their target; the highest score above 1 wins. L0 takes all its tables;
// a deeper level takes the table after compact_pointers[level] (round
// robin over its key space, with neighbours sharing a boundary key), and
// compact_pointers[level] moves on. When no level needs compaction and
// `l0_wanted_by_reads` (reads found L0 tables in their way often enough,
// docs/design/008-read-triggered-compactions.md), every L0 table goes
// into L1 however few they are. False if nothing is to be compacted.
bool PickCompaction(const Version& version, const Options& options, std::string compact_pointers[kNumLevels],
                    bool l0_wanted_by_reads, Compaction* compaction);

// The next step of CompactRange([begin, end]) at `level` (null bounds are
// open): L0 takes its oldest `l0_take` tables (all of them with SIZE_MAX --
// a newer L0 table may shadow an older one, so L0 moves from its oldest
// end); a deeper level the first table in range, with neighbours sharing a
// boundary key. False if no table of `level` is in range.
bool PickRangeStep(const Version& version, const Comparator* ucmp, int level, const Slice* begin, const Slice* end,
                   size_t l0_take, Compaction* compaction);

// A smaller split of a step whose outputs did not fit a full pool: takes the
// first *lower_count / 2 of `lower` (the step's original inputs[1]), moved
// back so that it does not end inside a key shared with the next table, and
// sets split_key to the last one's largest key. False when no smaller
// split exists. *lower_count is updated.
bool NextSplit(const Comparator* ucmp, const std::vector<TableRef>& lower, size_t* lower_count,
               Compaction* compaction);

// compaction->inputs[1]: the tables of level + 1 overlapping inputs[0].
void AddOverlappingInputs(const Version& version, const Comparator* ucmp, Compaction* compaction);

// Widens [*smallest, *largest] to cover `tables`; *any: the range holds a
// table already (false: it is empty).
void ExtendRange(const Comparator* ucmp, const std::vector<TableRef>& tables, std::string* smallest,
                 std::string* largest, bool* any);

// True if no table deeper than `level` can hold user_key (so a tombstone of
// it written to `level` may be dropped).
bool IsBaseLevelForKey(const Version& version, const Comparator* ucmp, int level, const Slice& user_key);

bool AllInPmem(const std::vector<TableRef>& tables);

// True if `compaction` may move its inputs down by a manifest edit alone --
// no byte read or written (LevelDB's trivial move): it is not a split step,
// nothing in the level below overlaps its inputs, the inputs do not overlap
// one another (L0 tables may), and each already lives in the tier its
// output would (`output_to_ssd`): pmem blocks into a pmem level, SSD tables
// into an SSD level. Nothing is dropped: shadowed versions and tombstones
// move along and go at a later merge.
bool IsTrivialMove(const Compaction& compaction, const Comparator* ucmp, bool output_to_ssd);

// True if `compaction` would be a trivial move but for the tier: its inputs
// are pmem blocks and its output level is on SSD (`output_to_ssd`). Such a
// compaction may migrate the blocks -- each written into a table file as
// its bytes -- instead of merging them, if their format lets SSD tables
// hold them unchanged (the caller's to check).
bool IsMigration(const Compaction& compaction, const Comparator* ucmp, bool output_to_ssd);

// Hybrid mode's placement: the bytes of pmem that blocks may use, the
// smaller of Options::pmem_budget (default: half the pool) and what the pool
// holds for blocks once the standby and the WAL segments of every memtable
// are set aside (docs/sizing.md).
uint64_t PmemBlockBudget(const Options& options, uint64_t pool_size);

// Whether a compaction into `output_level` producing about `bytes` writes
// SSD tables: always in disk-only mode, never in pmem-only mode; in hybrid
// mode when the pool is full (the SSD tier is the way out), or when the
// levels down to output_level at their target sizes exceed `budget`, or
// when the pmem blocks of `version` plus the output would.
bool OutputToSsd(const Version& version, const Options& options, uint64_t budget, bool pool_full, int output_level,
                 uint64_t bytes);

}  // namespace jigsaw

#endif  // JIGSAW_COMPACTION_PICKER_H_
