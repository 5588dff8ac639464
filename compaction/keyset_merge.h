// The merge of a compaction over KeySet version 2 blocks read as bytes:
// MergeInto's rules (compaction/merge.h) without an iterator stack. Each
// input is a scan of blocks (Table::NewBlockScan) walked by an entry cursor
// in place (keyset::v2::EntryCursor); the merge compares keys where they
// lie, decides what survives, and hands surviving entries to the sink as
// runs of bytes (OutputSink::AppendRun): consecutive survivors of one input
// block that lie back to back, values too, form one run; a survivor that
// does not continue the run starts the next one. Only a tombstone that
// survives, and a second version of one key kept for a snapshot, are added
// entry by entry.
//
// Thread-safety: one call per thread; the inputs and the sink are its own.
#ifndef JIGSAW_COMPACTION_KEYSET_MERGE_H_
#define JIGSAW_COMPACTION_KEYSET_MERGE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "compaction/merge.h"
#include "compaction/output_sink.h"
#include "compaction/picker.h"
#include "table/table.h"
#include "util/profile_clock.h"

namespace jigsaw {

// The block scans of the first `input_sets` (1 or 2) input sets of
// `compaction`: one per L0 table (they overlap), one per deeper level (its
// tables' blocks one after another). False if a table has no block scan
// (classic blocks, version 1 blocks in pmem): merge through iterators then.
// With `decode` (may be null) opening blocks is charged to it.
bool NewCompactionBlockScans(const Compaction& compaction, int input_sets, SampledPhase* decode,
                             std::vector<std::unique_ptr<BlockScan>>* scans);

// Feeds the surviving entries of the merged `inputs` (each in internal-key
// order; entries of one key in different inputs have different sequence
// numbers) to `sink` under `rules`, then finishes it -- the same outputs
// MergeInto makes of the same entries. `sink` must take runs (TakesRuns()).
// `after_output`, *entries and *spliced as for MergeInto; here *spliced
// counts every entry appended as bytes, alone or in a longer run. With
// `decode` (may be null), stepping the cursors is charged to it (sampled).
// NotSupported if an input block is not a KeySet version 2 block -- possibly
// after outputs were made: the caller Abandons the sink and merges through
// iterators. On any other error the sink is left for the caller to Abandon.
Status MergeKeySetBlocks(std::vector<std::unique_ptr<BlockScan>> inputs, const MergeRules& rules, OutputSink* sink,
                         const std::function<Status()>& after_output, SampledPhase* decode, uint64_t* entries,
                         uint64_t* spliced);

}  // namespace jigsaw

#endif  // JIGSAW_COMPACTION_KEYSET_MERGE_H_
