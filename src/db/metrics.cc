#include "db/metrics.h"

#include <cinttypes>
#include <cstdio>

#include <nlohmann/json.hpp>

namespace jigsaw {

void Metrics::MeasureTables(const Version& v) {
  pmem_bytes = pmem_hash_index_bytes = ssd_bytes = 0;
  for (int level = 0; level < kNumLevels; ++level) {
    levels[level] = Level{v.levels[level].size(), v.LevelBytes(level)};
    for (const TableRef& t : v.levels[level]) {
      if (t->residence == Residence::kPmem) {
        pmem_bytes += t->size;
        pmem_hash_index_bytes += t->table->MemoryUsage();
      } else {
        ssd_bytes += t->size;
      }
    }
  }
}

std::string Metrics::LevelsText() const {
  std::string out = "level  tables       bytes\n";
  char line[80];
  for (int level = 0; level < kNumLevels; ++level) {
    std::snprintf(line, sizeof(line), "%5d %7" PRIu64 " %11" PRIu64 "\n", level, levels[level].tables,
                  levels[level].bytes);
    out += line;
  }
  return out;
}

std::string Metrics::WriteGroupsText() const {
  const Counters& c = counters;
  return "batches " + std::to_string(c.write_batches) + " groups " + std::to_string(c.write_groups) + " synced " +
         std::to_string(c.synced_groups) + " pipelined " + std::to_string(c.pipelined_groups) + " self_inserted " +
         std::to_string(c.self_inserted_batches);
}

std::string Metrics::StallsText() const {
  const Counters& c = counters;
  return "slowdowns " + std::to_string(c.slowdowns) + " stops " + std::to_string(c.stops) + " stall_micros " +
         std::to_string(c.stall_micros) + " flushes_within_compactions " +
         std::to_string(c.flushes_within_compactions);
}

std::string Metrics::SyncText() const {
  const Counters& c = counters;
  return "syncs " + std::to_string(syncs) + " bytes_synced " + std::to_string(bytes_synced) + " pending_compactions " +
         std::to_string(pending_compactions) + " redone_at_recovery " + std::to_string(c.redone_compactions) +
         " tracker_rounds " + std::to_string(c.tracker_rounds) + " durable_compactions " +
         std::to_string(c.tracker_compactions);
}

std::string Metrics::BlockCacheText() const {
  return "capacity " + std::to_string(block_cache_capacity) + " usage " + std::to_string(block_cache_usage) +
         " hits " + std::to_string(block_cache_hits) + " misses " + std::to_string(block_cache_misses);
}

std::string Metrics::ToString() const {
  const Counters& c = counters;
  return LevelsText() + "pmem bytes " + std::to_string(pmem_bytes) + "\npmem hash index " +
         std::to_string(pmem_hash_index_bytes) + " bytes of DRAM\nssd bytes " + std::to_string(ssd_bytes) +
         "\nflushes " + std::to_string(c.flushes) + "\ncompactions " + std::to_string(c.compactions) + " (read " +
         std::to_string(c.compaction_bytes_read) + " bytes, wrote " + std::to_string(c.compaction_bytes_written) +
         " bytes; " + std::to_string(c.split_steps) + " split steps; " + std::to_string(c.compaction_entries_read) +
         " entries merged, " + std::to_string(c.compaction_entries_spliced) + " of them copied as bytes in runs; " +
         std::to_string(c.read_triggered_compactions) + " of L0 asked for by reads)\ntrivial moves: " +
         std::to_string(c.tables_moved) + " tables, " + std::to_string(c.bytes_moved) +
         " bytes moved by reference\nmigrations: " + std::to_string(c.tables_migrated) + " pmem blocks, " +
         std::to_string(c.bytes_migrated) + " bytes written to SSD tables as their bytes\n" + StallsText() +
         "\nwrites: " + std::to_string(c.write_batches) + " batches in " + std::to_string(c.write_groups) +
         " WAL records (" + std::to_string(c.synced_groups) + " synced; " + std::to_string(c.pipelined_groups) +
         " inserted beside other groups); " + std::to_string(c.self_inserted_batches) +
         " batches inserted by their own writer\n" + SyncText() + "\nblock cache " + BlockCacheText() +
         "\nmemtables " + std::to_string(memtables) + "\nstandby chunks " + standby +
         (pool_full ? " (pool full)" : "") + "\n";
}

std::string Metrics::ToJson() const {
  const Counters& c = counters;
  nlohmann::json j;
  for (const Level& level : levels) j["levels"].push_back({{"tables", level.tables}, {"bytes", level.bytes}});
  j["pmem_bytes"] = pmem_bytes;
  j["pmem_hash_index_bytes"] = pmem_hash_index_bytes;
  j["ssd_bytes"] = ssd_bytes;
  j["flushes"] = c.flushes;
  j["compactions"] = {{"count", c.compactions},
                      {"bytes_read", c.compaction_bytes_read},
                      {"bytes_written", c.compaction_bytes_written},
                      {"split_steps", c.split_steps},
                      {"entries_merged", c.compaction_entries_read},
                      {"entries_spliced", c.compaction_entries_spliced},
                      {"read_triggered", c.read_triggered_compactions}};
  j["trivial_moves"] = {{"tables", c.tables_moved}, {"bytes", c.bytes_moved}};
  j["migrations"] = {{"tables", c.tables_migrated}, {"bytes", c.bytes_migrated}};
  j["stalls"] = {{"slowdowns", c.slowdowns},
                 {"stops", c.stops},
                 {"micros", c.stall_micros},
                 {"flushes_within_compactions", c.flushes_within_compactions}};
  j["writes"] = {{"batches", c.write_batches},
                 {"groups", c.write_groups},
                 {"synced_groups", c.synced_groups},
                 {"pipelined_groups", c.pipelined_groups},
                 {"self_inserted", c.self_inserted_batches}};
  j["memtables"] = memtables;
  j["sync"] = {{"calls", syncs},
               {"bytes", bytes_synced},
               {"pending_compactions", pending_compactions},
               {"redone_at_recovery", c.redone_compactions},
               {"tracker_rounds", c.tracker_rounds},
               {"durable_compactions", c.tracker_compactions}};
  j["block_cache"] = {{"capacity", block_cache_capacity},
                      {"usage", block_cache_usage},
                      {"hits", block_cache_hits},
                      {"misses", block_cache_misses}};
  j["standby"] = standby;
  j["pool_full"] = pool_full;
  return j.dump();
}

}  // namespace jigsaw
