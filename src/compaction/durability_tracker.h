// NobLSM-style durability of compaction outputs on SSD (docs/durability.md):
// a compaction into SSD tables commits without syncing them; its inputs stay
// in the manifest as unserved shadows until the tracker thread has synced
// the outputs and committed again. Recovery keeps intact outputs of a
// pending compaction (and syncs them) and redoes the others from the
// shadows.
//
// This file holds the pieces the engine's tracker loop and recovery use;
// the loop itself runs in DBImpl.
#ifndef JIGSAW_COMPACTION_DURABILITY_TRACKER_H_
#define JIGSAW_COMPACTION_DURABILITY_TRACKER_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "compaction/picker.h"
#include "version/manifest.h"
#include "version/table_store.h"

namespace jigsaw {

// A compaction whose SSD outputs are in the version but not yet durable.
struct PendingCompaction {
  int64_t profile = -1;  // its row of the compaction profile, or -1
  int output_level = 0;
  std::vector<TableRef> outputs;
  std::vector<TableRef> shadows;                      // its inputs, kept unserved
  std::vector<int> shadow_levels;                     // the level each shadow was in
  std::vector<std::unique_ptr<WritableFile>> files;  // the outputs, open for fdatasync
};

// The manifest's record of `pending` without its `skip_oldest` first
// entries, and with `added` (may be null) after them.
std::vector<ManifestState::PendingCompaction> PendingManifestEntries(const std::deque<PendingCompaction>& pending,
                                                                     size_t skip_oldest = 0,
                                                                     const PendingCompaction* added = nullptr);

// True if `compaction` must wait for a pending one: it would consume an
// output a crash could still lose, or write into the key range that a redo
// of a pending compaction into the same level may fill (a redo keeps every
// tombstone, so its output can be wider than the original's).
bool ConflictsWithPending(const Comparator* ucmp, const Compaction& compaction,
                          const std::deque<PendingCompaction>& pending);

// Makes `files` and their directory entries durable: with one
// FileSystem::SyncFileSystem call where the file system has one, else a
// sync of each file and then of the directory (stopping at the first
// error). Counts the calls in the store's SyncStats.
Status SyncOutputFiles(TableStore* store, const std::vector<std::unique_ptr<WritableFile>>& files);

// Recovery of the compactions a crash left pending. `loaded`: the tables
// the manifest names, by number (a lost output is absent). A compaction
// whose outputs are all intact has them synced; any other is redone from its
// shadows into new SSD tables (every version and tombstone kept, synced
// inline), replacing its outputs in `version`. Tables that leave the tree
// -- shadows, replaced outputs -- are marked obsolete and appended to
// *discarded (their storage goes once the caller commits and drops them).
// *redone counts the redone compactions.
Status ResolvePendingCompactions(TableStore* store, const std::vector<ManifestState::PendingCompaction>& pending,
                                 std::map<uint64_t, TableRef>* loaded, Version* version,
                                 std::vector<TableRef>* discarded, uint64_t* redone);

}  // namespace jigsaw

#endif  // JIGSAW_COMPACTION_DURABILITY_TRACKER_H_
