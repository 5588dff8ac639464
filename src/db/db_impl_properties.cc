// DBImpl's introspection: VerifyIntegrity's checks, GetApproximateSizes,
// and GetProperty's jigsaw.* properties, answered by families (the current
// version's tables, the storage, the counters, the summaries).
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "db/db_identity.h"
#include "db/db_impl.h"
#include "db/metrics.h"
#include "format/keyset_block.h"
#include "pmem/device.h"
#include "ssd/table.h"
#include "util/guarded_read.h"
#include "version/filename.h"

namespace jigsaw {

Status DBImpl::VerifyIntegrity() { return VerifyTables(nullptr); }

namespace {

LiveTableMetaData DescribeTable(const TableMeta& t, int level, const Slice& pmem_contents, const std::string& db) {
  LiveTableMetaData m;
  m.level = level;
  m.number = t.number;
  m.size = t.size;
  m.entries = t.entries;
  m.smallest_key = t.smallest;
  m.largest_key = t.largest;
  if (t.residence == Residence::kPmem && t.pmem_layout == PmemLayout::kKeySetBlock) {
    m.storage = TableStorage::kPmemBlock;
    m.block_format = TableFormat::kKeySet;
    m.pool_offset = t.offset;
    uint32_t version = 0;
    if (GuardedRead([&] { version = keyset::VersionOf(pmem_contents); })) m.format_version = version;
    return m;
  }
  const auto* ssd = dynamic_cast<const ssd::SsdTable*>(t.table.get());
  m.block_format = ssd != nullptr && ssd->format() == BlockFormat::kClassic ? TableFormat::kClassic : TableFormat::kKeySet;
  m.format_version = ssd::kTableFormatVersion;
  if (t.residence == Residence::kPmem) {
    m.storage = TableStorage::kPmemTableImage;
    m.pool_offset = t.offset;
  } else {
    m.storage = TableStorage::kSsdTable;
    m.file_name = TableFileName(db, t.number);
  }
  return m;
}

}  // namespace

void DBImpl::GetLiveTablesMetaData(std::vector<LiveTableMetaData>* tables) {
  const std::shared_ptr<const Version> version = CurrentVersion();
  tables->clear();
  for (int level = 0; level < kNumLevels; ++level) {
    for (const TableRef& t : version->levels[level]) {
      tables->push_back(DescribeTable(*t, level, PmemBlockContents(*t), name_));
    }
  }
}

Status DBImpl::GetTableContents(uint64_t number, std::string* contents) {
  contents->clear();
  const std::shared_ptr<const Version> version = CurrentVersion();  // keeps the table's bytes while they are read
  for (const auto& level : version->levels) {
    for (const TableRef& t : level) {
      if (t->number != number) continue;
      if (t->residence == Residence::kPmem) {
        const Slice bytes = PmemBlockContents(*t);
        if (!GuardedRead([&] { contents->assign(bytes.data(), bytes.size()); })) {
          contents->clear();
          return Status::Corruption("table " + std::to_string(number),
                                    "unreadable pool memory at " + DescribeUnreadable(bytes.data(), bytes.size()));
        }
        return Status::OK();
      }
      const std::string path = TableFileName(name_, number);
      std::unique_ptr<RandomAccessFile> file;
      Status s = tables_->fs()->NewRandomAccessFile(path, &file);
      if (!s.ok()) return s;
      contents->resize(file->Size());
      Slice read;
      s = file->Read(0, contents->size(), contents->data(), &read);
      if (s.ok() && read.size() != contents->size()) s = Status::IOError(path, "short read");
      if (!s.ok()) {
        contents->clear();
        return s;
      }
      if (read.data() != contents->data()) std::memmove(contents->data(), read.data(), read.size());
      return Status::OK();
    }
  }
  return Status::NotFound("no live table numbered " + std::to_string(number));
}

Status DBImpl::VerifyTables(std::vector<TableCheck>* checks) {
  const std::shared_ptr<const Version> version = CurrentVersion();
  if (checks != nullptr) checks->clear();
  Status first;
  for (int level = 0; level < kNumLevels; ++level) {
    for (size_t i = 0; i < version->levels[level].size(); ++i) {
      const TableMeta& t = *version->levels[level][i];
      Status s = VerifyTable(t);
      if (s.ok()) s = CheckTableShape(*version, ucmp_, level, i);
      if (!s.ok() && first.ok()) {
        first = Status::Corruption("table " + std::to_string(t.number) + " at level " + std::to_string(level),
                                   s.message());
        if (checks == nullptr) return first;
      }
      if (checks != nullptr) checks->push_back({DescribeTable(t, level, PmemBlockContents(t), name_), s});
    }
  }
  return first;
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

Metrics DBImpl::CollectMetrics(bool measure_tables) const {
  Metrics m;
  m.counters = counters_;
  if (measure_tables) m.MeasureTables(*versions_->current());
  m.memtables = 1 + imm_.size();
  m.syncs = tables_->sync_stats()->syncs.load();
  m.bytes_synced = tables_->sync_stats()->bytes.load();
  m.pending_compactions = pending_.size();
  m.block_cache_capacity = tables_->block_cache()->capacity();
  m.block_cache_usage = tables_->block_cache()->usage();
  m.block_cache_hits = tables_->block_cache()->hits();
  m.block_cache_misses = tables_->block_cache()->misses();
  if (pool() != nullptr) m.standby = tables_->space()->State();
  m.pool_full = pool_full_;
  return m;
}

bool DBImpl::GetTableProperty(const std::string& p, std::string* value) const {
  const Version& v = *versions_->current();
  // jigsaw.num-blocks-at-level<N>: the old name of num-tables-at-level<N>.
  size_t level_at = 0;  // where <N> starts, if p names a per-level count
  for (const char* prefix : {"jigsaw.num-tables-at-level", "jigsaw.num-blocks-at-level"}) {
    if (p.rfind(prefix, 0) == 0) level_at = std::strlen(prefix);
  }
  if (p == "jigsaw.levels") {
    *value = CollectMetrics(/*measure_tables=*/true).LevelsText();
  } else if (level_at > 0) {
    const std::string n = p.substr(level_at);
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
    *value = std::to_string(CollectMetrics(/*measure_tables=*/true).pmem_bytes);
  } else if (p == "jigsaw.ssd-bytes") {
    *value = std::to_string(CollectMetrics(/*measure_tables=*/true).ssd_bytes);
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
    *value = CollectMetrics(/*measure_tables=*/false).BlockCacheText();
  } else {
    return false;
  }
  return true;
}

bool DBImpl::GetCounterProperty(const std::string& p, std::string* value) const {
  if (p == "jigsaw.compaction-profile") {
    // CSV, one row per flush (level -1) or compaction.
    *value = CompactionProfileCsvHeader();
    for (const PhaseProfile& r : profiles_) *value += CompactionProfileCsvRow(r);
    return true;
  }
  const bool summary = p == "jigsaw.stats" || p == "jigsaw.stats-json";
  const Metrics m = CollectMetrics(/*measure_tables=*/summary);
  if (p == "jigsaw.stats") {
    *value = m.ToString();
  } else if (p == "jigsaw.stats-json") {
    *value = m.ToJson();
  } else if (p == "jigsaw.compactions") {
    *value = std::to_string(m.counters.compactions);
  } else if (p == "jigsaw.read-triggered-compactions") {
    *value = std::to_string(m.counters.read_triggered_compactions);
  } else if (p == "jigsaw.flushes") {
    *value = std::to_string(m.counters.flushes);
  } else if (p == "jigsaw.write-groups") {
    *value = m.WriteGroupsText();
  } else if (p == "jigsaw.stalls") {
    *value = m.StallsText();
  } else if (p == "jigsaw.sync-stats") {
    *value = m.SyncText();
  } else {
    return false;
  }
  return true;
}

bool DBImpl::GetProperty(const Slice& property, std::string* value) {
  MutexLock lock(&mutex_);
  const std::string p = property.ToString();
  return GetTableProperty(p, value) || GetStorageProperty(p, value) || GetCounterProperty(p, value);
}

}  // namespace jigsaw
