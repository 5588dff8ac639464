// DBImpl's introspection: VerifyIntegrity's checks, GetApproximateSizes,
// and GetProperty's jigsaw.* properties, answered by families (the current
// version's tables, the storage, the counters, the summaries).
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>

#include "db/db_identity.h"
#include "db/db_impl.h"
#include "pmem/device.h"
#include "ssd/table.h"
#include "util/guarded_read.h"

namespace jigsaw {

namespace {

// jigsaw.levels: each level's tables and bytes, one line per level.
std::string LevelsText(const Version& v) {
  std::string out = "level  blocks       bytes\n";
  char line[80];
  for (int level = 0; level < kNumLevels; ++level) {
    std::snprintf(line, sizeof(line), "%5d %7zu %11" PRIu64 "\n", level, v.levels[level].size(), v.LevelBytes(level));
    out += line;
  }
  return out;
}

// The bytes of a version's pmem tables, and the DRAM their hash indexes hold.
struct PmemUsage {
  uint64_t bytes = 0;
  uint64_t index_bytes = 0;
};

PmemUsage MeasurePmem(const Version& v) {
  PmemUsage usage;
  for (const auto& level : v.levels) {
    for (const TableRef& b : level) {
      if (b->residence == Residence::kPmem) {
        usage.bytes += b->size;
        usage.index_bytes += b->table->MemoryUsage();
      }
    }
  }
  return usage;
}

}  // namespace

Status DBImpl::VerifyIntegrity() {
  std::shared_ptr<const Version> version;
  {
    MutexLock lock(&mutex_);
    version = versions_->current();
  }
  for (int level = 0; level < kNumLevels; ++level) {
    for (const TableRef& table : version->levels[level]) {
      Status s = VerifyTable(*table);
      if (!s.ok()) {
        return Status::Corruption("block " + std::to_string(table->number) + " at level " + std::to_string(level),
                                  s.ToString());
      }
    }
  }
  return CheckLevelShape(*version, ucmp_);
}

Slice DBImpl::PmemBlockContents(const TableMeta& table) const {
  if (table.residence != Residence::kPmem || pool() == nullptr) return Slice();
  return Slice(pool()->Direct(table.offset), table.size);
}

Status DBImpl::VerifyTable(const TableMeta& table) const {
  if (table.residence == Residence::kPmem && table.pmem_layout == PmemLayout::kKeySetBlock) {
    BlockReadOptions options;
    options.comparator = ucmp_;
    std::unique_ptr<BlockReader> checked;  // a fresh reader verifies the checksum
    const Slice contents = PmemBlockContents(table);
    Status s;
    // Guarded (util/guarded_read.h): a media error is reported with every
    // unreadable stretch of the block. An abandoned check leaks its reader.
    if (!GuardedRead([&] {
          s = BlockReader::Open(BlockFormat::kKeySet, contents, options, &checked);
          if (s.ok()) s = checked->Validate();
        })) {
      (void)checked.release();
      return Status::Corruption("unreadable pool memory at " + DescribeUnreadable(contents.data(), contents.size()));
    }
    return s;
  }
  // An SSD table or a pmem table image: reads every block afresh and checks it.
  return table.table->Validate();
}

void DBImpl::GetApproximateSizes(const Range* ranges, int n, uint64_t* sizes) {
  std::shared_ptr<const Version> version;
  {
    MutexLock lock(&mutex_);
    version = versions_->current();
  }
  // Bytes of table t before user_key.
  auto offset_in = [&](const TableMeta& t, const Slice& user_key) -> double {
    if (ucmp_->Compare(user_key, t.smallest) <= 0) return 0;
    if (ucmp_->Compare(user_key, t.largest) > 0) return static_cast<double>(t.size);
    return t.table->ApproximatePosition(user_key) * static_cast<double>(t.size);
  };
  for (int i = 0; i < n; ++i) {
    double bytes = 0;
    if (ucmp_->Compare(ranges[i].start, ranges[i].limit) < 0) {
      for (const auto& level : version->levels) {
        for (const TableRef& t : level) {
          const double end = offset_in(*t, ranges[i].limit), begin = offset_in(*t, ranges[i].start);
          if (end > begin) bytes += end - begin;
        }
      }
    }
    sizes[i] = static_cast<uint64_t>(bytes);
  }
}

std::string DBImpl::StatsJson(uint64_t pmem_bytes, uint64_t index_bytes) const {
  const Version& v = *versions_->current();
  nlohmann::json j;
  uint64_t ssd_bytes = 0;
  for (int level = 0; level < kNumLevels; ++level) {
    j["levels"].push_back({{"tables", v.levels[level].size()}, {"bytes", v.LevelBytes(level)}});
    for (const TableRef& t : v.levels[level]) {
      if (t->residence == Residence::kSsd) ssd_bytes += t->size;
    }
  }
  j["pmem_bytes"] = pmem_bytes;
  j["pmem_hash_index_bytes"] = index_bytes;
  j["ssd_bytes"] = ssd_bytes;
  j["flushes"] = flushes_;
  j["compactions"] = {{"count", compactions_},
                      {"bytes_read", compaction_bytes_read_},
                      {"bytes_written", compaction_bytes_written_},
                      {"split_steps", split_steps_},
                      {"entries_merged", compaction_entries_read_},
                      {"entries_spliced", compaction_entries_spliced_},
                      {"read_triggered", read_triggered_compactions_}};
  j["trivial_moves"] = {{"tables", tables_moved_}, {"bytes", bytes_moved_}};
  j["migrations"] = {{"tables", tables_migrated_}, {"bytes", bytes_migrated_}};
  j["stalls"] = {{"slowdowns", slowdowns_}, {"stops", stops_}, {"micros", stall_micros_},
                 {"flushes_within_compactions", flushes_within_compactions_}};
  j["writes"] = {{"batches", write_batches_},
                {"groups", write_groups_},
                {"synced_groups", synced_groups_},
                {"pipelined_groups", pipelined_groups_},
                {"self_inserted", self_inserted_batches_}};
  j["memtables"] = 1 + imm_.size();
  j["sync"] = {{"calls", tables_->sync_stats()->syncs.load()},
               {"bytes", tables_->sync_stats()->bytes.load()},
               {"pending_compactions", pending_.size()},
               {"redone_at_recovery", redone_compactions_},
               {"tracker_rounds", tracker_rounds_},
               {"durable_compactions", tracker_compactions_}};
  j["block_cache"] = {{"capacity", tables_->block_cache()->capacity()},
                      {"usage", tables_->block_cache()->usage()},
                      {"hits", tables_->block_cache()->hits()},
                      {"misses", tables_->block_cache()->misses()}};
  j["pool_full"] = pool_full_;
  return j.dump();
}

bool DBImpl::GetTableProperty(const std::string& p, std::string* value) const {
  const Version& v = *versions_->current();
  if (p == "jigsaw.levels") {
    *value = LevelsText(v);
  } else if (p.rfind("jigsaw.num-blocks-at-level", 0) == 0) {
    const std::string n = p.substr(std::strlen("jigsaw.num-blocks-at-level"));
    if (n.size() != 1 || n[0] < '0' || n[0] >= '0' + kNumLevels) return false;
    *value = std::to_string(v.levels[n[0] - '0'].size());
  } else if (p == "jigsaw.num-range-tombstones") {
    size_t n = v.range_tombstones != nullptr ? v.range_tombstones->tombstones().size() : 0;
    std::vector<const MemTable*> mems{mem_.get()};
    for (const Immutable& imm : imm_) mems.push_back(imm.mem.get());
    for (const MemTable* mem : mems) {
      if (auto set = mem->range_tombstones()) n += set->tombstones().size();
    }
    *value = std::to_string(n);
  } else if (p == "jigsaw.pmem-bytes") {
    *value = std::to_string(MeasurePmem(v).bytes);
  } else if (p == "jigsaw.ssd-bytes") {
    uint64_t bytes = 0;
    for (const auto& level : v.levels) {
      for (const TableRef& b : level) {
        if (b->residence == Residence::kSsd) bytes += b->size;
      }
    }
    *value = std::to_string(bytes);
  } else if (p == "jigsaw.table-formats") {
    uint64_t keyset_blocks = 0, images = 0, ssd_keyset = 0, ssd_classic = 0;
    for (const auto& level : v.levels) {
      for (const TableRef& t : level) {
        if (t->residence == Residence::kPmem) {
          ++(t->pmem_layout == PmemLayout::kTableImage ? images : keyset_blocks);
        } else {
          const auto* table = static_cast<const ssd::SsdTable*>(t->table.get());
          ++(table->format() == BlockFormat::kClassic ? ssd_classic : ssd_keyset);
        }
      }
    }
    *value = "pmem " + std::to_string(keyset_blocks) + " KeySet blocks, " + std::to_string(images) +
             " table images of classic blocks\nssd " + std::to_string(ssd_keyset) + " tables of KeySet blocks, " +
             std::to_string(ssd_classic) + " of classic blocks\n";
  } else {
    return false;
  }
  return true;
}

bool DBImpl::GetStorageProperty(const std::string& p, std::string* value) const {
  if ((p == "jigsaw.pool-used-bytes" || p == "jigsaw.pmem-device") && pool() == nullptr) {
    *value = p == "jigsaw.pool-used-bytes" ? "0" : "no pmem pool (disk-only mode)";
  } else if (p == "jigsaw.pool-used-bytes") {
    // The pool's counter, not a walk of its objects: any thread that drops a
    // table's last reference frees its object, without this mutex.
    *value = std::to_string(pool()->used_bytes());
  } else if (p == "jigsaw.pmem-device") {
    *value = "pool " + PoolPathFor(options_, name_) + " (" + pool()->persistence() + ")" +
             (pool()->timing() != nullptr ? " with an NVM timing model" : "") +
             ", numa node " + std::to_string(pmem::NumaNodeForPath(PoolPathFor(options_, name_))) +
             ", background thread on node " + std::to_string(numa_node_) + "\n";
    for (const pmem::PmemDevice& d : pmem::ListPmemDevices()) {
      *value += d.namespace_name + " " + d.mode + " " + d.device_path + " " + std::to_string(d.size) +
                " bytes, numa node " + std::to_string(d.numa_node) + "\n";
    }
  } else if (p == "jigsaw.io") {
    const ssd::UringStallCounts stalls = ssd::UringStalls();
    *value = io_description_ + "; io_uring rings given up in this process: table writes " +
             std::to_string(stalls.table_writes) + ", reads " + std::to_string(stalls.reads);
  } else if (p == "jigsaw.wal-recovery") {
    *value = wal_recovery_;
  } else if (p == "jigsaw.set-aside-tables") {
    *value = set_aside_;
  } else if (p == "jigsaw.block-cache") {
    *value = "capacity " + std::to_string(tables_->block_cache()->capacity()) + " usage " +
             std::to_string(tables_->block_cache()->usage()) + " hits " +
             std::to_string(tables_->block_cache()->hits()) + " misses " +
             std::to_string(tables_->block_cache()->misses());
  } else {
    return false;
  }
  return true;
}

bool DBImpl::GetCounterProperty(const std::string& p, std::string* value) const {
  if (p == "jigsaw.compactions") {
    *value = std::to_string(compactions_);
  } else if (p == "jigsaw.read-triggered-compactions") {
    *value = std::to_string(read_triggered_compactions_);
  } else if (p == "jigsaw.flushes") {
    *value = std::to_string(flushes_);
  } else if (p == "jigsaw.write-groups") {
    *value = "batches " + std::to_string(write_batches_) + " groups " + std::to_string(write_groups_) + " synced " +
             std::to_string(synced_groups_) + " pipelined " + std::to_string(pipelined_groups_) + " self_inserted " +
             std::to_string(self_inserted_batches_);
  } else if (p == "jigsaw.stalls") {
    *value = "slowdowns " + std::to_string(slowdowns_) + " stops " + std::to_string(stops_) + " stall_micros " +
             std::to_string(stall_micros_) + " flushes_within_compactions " +
             std::to_string(flushes_within_compactions_);
  } else if (p == "jigsaw.sync-stats") {
    *value = "syncs " + std::to_string(tables_->sync_stats()->syncs.load()) + " bytes_synced " +
             std::to_string(tables_->sync_stats()->bytes.load()) +
             " pending_compactions " + std::to_string(pending_.size()) + " redone_at_recovery " +
             std::to_string(redone_compactions_) + " tracker_rounds " + std::to_string(tracker_rounds_) +
             " durable_compactions " + std::to_string(tracker_compactions_);
  } else if (p == "jigsaw.compaction-profile") {
    // CSV, one row per flush (level -1) or compaction.
    *value = CompactionProfileCsvHeader();
    for (const PhaseProfile& r : profiles_) *value += CompactionProfileCsvRow(r);
  } else {
    return false;
  }
  return true;
}

bool DBImpl::GetSummaryProperty(const std::string& p, std::string* value) const {
  if (p != "jigsaw.stats" && p != "jigsaw.stats-json") return false;
  const Version& v = *versions_->current();
  const PmemUsage pmem = MeasurePmem(v);
  if (p == "jigsaw.stats-json") {
    *value = StatsJson(pmem.bytes, pmem.index_bytes);
    return true;
  }
  *value = LevelsText(v) + "pmem bytes " + std::to_string(pmem.bytes) + "\npmem hash index " +
           std::to_string(pmem.index_bytes) + " bytes of DRAM\nflushes " + std::to_string(flushes_) +
           "\ncompactions " + std::to_string(compactions_) + " (read " + std::to_string(compaction_bytes_read_) +
           " bytes, wrote " + std::to_string(compaction_bytes_written_) + " bytes; " +
           std::to_string(split_steps_) + " split steps; " + std::to_string(compaction_entries_read_) +
           " entries merged, " + std::to_string(compaction_entries_spliced_) +
           " of them copied as bytes in runs; " + std::to_string(read_triggered_compactions_) +
           " of L0 asked for by reads)\ntrivial moves: " + std::to_string(tables_moved_) + " tables, " +
           std::to_string(bytes_moved_) + " bytes moved by reference\nmigrations: " +
           std::to_string(tables_migrated_) + " pmem blocks, " + std::to_string(bytes_migrated_) +
           " bytes written to SSD tables as their bytes\nslowdowns " + std::to_string(slowdowns_) + " stops " +
           std::to_string(stops_) + " stall_micros " + std::to_string(stall_micros_) + "\nwrites: " +
           std::to_string(write_batches_) + " batches in " + std::to_string(write_groups_) + " WAL records (" +
           std::to_string(synced_groups_) + " synced; " + std::to_string(pipelined_groups_) +
           " inserted beside other groups); " + std::to_string(self_inserted_batches_) +
           " batches inserted by their own writer\nmemtables " + std::to_string(1 + imm_.size()) +
           "\nstandby chunks " + (pool() != nullptr ? tables_->space()->State() : std::string("0/0")) +
           (pool_full_ ? " (pool full)" : "") + "\n";
  return true;
}

bool DBImpl::GetProperty(const Slice& property, std::string* value) {
  MutexLock lock(&mutex_);
  const std::string p = property.ToString();
  return GetTableProperty(p, value) || GetStorageProperty(p, value) || GetCounterProperty(p, value) ||
         GetSummaryProperty(p, value);
}

}  // namespace jigsaw
