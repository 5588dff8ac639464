// What a database counts and measures, in one struct: the counters DBImpl
// keeps since the open, and a snapshot of the tree and its storage taken
// with them. Every statistics property (db.h, "Properties") is one of its
// forms: jigsaw.stats is ToString(), jigsaw.stats-json ToJson(), and the
// one-line properties (jigsaw.stalls, jigsaw.write-groups, ...) its parts.
#ifndef JIGSAW_DB_METRICS_H_
#define JIGSAW_DB_METRICS_H_

#include <array>
#include <cstdint>
#include <string>

#include "version/version.h"

namespace jigsaw {

// The engine's counters, since the open. DBImpl keeps one, under its mutex.
struct Counters {
  uint64_t flushes = 0;
  uint64_t flushes_within_compactions = 0;  // run by a compaction between its outputs
  uint64_t compactions = 0;
  uint64_t read_triggered_compactions = 0;  // L0 compactions started because reads asked
  uint64_t split_steps = 0;                 // CompactRange steps split to fit a full pool
  uint64_t compaction_bytes_read = 0;
  uint64_t compaction_bytes_written = 0;
  uint64_t compaction_entries_read = 0;     // by merging compactions
  uint64_t compaction_entries_spliced = 0;  // of them, copied as bytes in runs
  uint64_t tables_moved = 0;                // by trivial moves
  uint64_t bytes_moved = 0;
  uint64_t tables_migrated = 0;  // pmem blocks written to SSD tables as their bytes
  uint64_t bytes_migrated = 0;
  uint64_t slowdowns = 0;
  uint64_t stops = 0;
  uint64_t stall_micros = 0;
  uint64_t write_batches = 0;          // batches written
  uint64_t write_groups = 0;           // WAL records holding them, written by group leaders
  uint64_t synced_groups = 0;          // of the groups, those persisted or synced on return
  uint64_t pipelined_groups = 0;       // groups inserted beside other groups
  uint64_t self_inserted_batches = 0;  // batches inserted by their own writer
  uint64_t redone_compactions = 0;     // compactions not yet durable at a crash, redone at recovery
  uint64_t tracker_rounds = 0;         // the durability tracker's sync-and-commit rounds
  uint64_t tracker_compactions = 0;    // compactions those rounds made durable
};

struct Metrics {
  Counters counters;

  struct Level {
    uint64_t tables = 0;
    uint64_t bytes = 0;
  };
  std::array<Level, kNumLevels> levels{};
  uint64_t pmem_bytes = 0;             // the pmem tables' bytes
  uint64_t pmem_hash_index_bytes = 0;  // DRAM their hash indexes hold
  uint64_t ssd_bytes = 0;              // the SSD tables' bytes
  uint64_t memtables = 0;              // the mutable one and the immutable ones
  uint64_t syncs = 0;                  // SSD file syncs
  uint64_t bytes_synced = 0;
  uint64_t pending_compactions = 0;  // committed, waiting for the durability tracker
  uint64_t block_cache_capacity = 0;
  uint64_t block_cache_usage = 0;
  uint64_t block_cache_hits = 0;
  uint64_t block_cache_misses = 0;
  std::string standby = "0/0";  // the standby space's chunks, taken/kept
  bool pool_full = false;

  // The storage figures of version `v`: levels, pmem, hash index and SSD bytes.
  void MeasureTables(const Version& v);

  std::string ToString() const;  // jigsaw.stats
  std::string ToJson() const;    // jigsaw.stats-json
  std::string LevelsText() const;
  std::string WriteGroupsText() const;
  std::string StallsText() const;
  std::string SyncText() const;
  std::string BlockCacheText() const;
};

}  // namespace jigsaw

#endif  // JIGSAW_DB_METRICS_H_
