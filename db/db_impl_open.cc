// DBImpl's open, recovery and close: DB::Open and DestroyDB (identity and
// locking, src/db_identity.h), the recovery of the persistent state
// (pool or MANIFEST file, blocks and tables, orphan sweep, pending
// compactions, WAL replay, the recovery commit) and the disk-only MANIFEST
// file. The write path, reads and background work are in db_impl.cc.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "util/coding.h"
#include "pmem/device.h"
#include "db/db_identity.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "db/pool_sizing.h"
#include "util/profile_clock.h"
#include "db/write_batch_internal.h"
#include "ssd/table.h"
#include "table/merging_iterator.h"

namespace jigsaw {

namespace {

Status ValidateOptions(const Options& o) {
  auto bad = [](const char* option, const char* rule) { return Status::InvalidArgument(option, rule); };
  if (o.comparator == nullptr) return bad("comparator", "must not be null");
  if (o.memtable_size < (64 << 10) || o.memtable_size > (size_t{1} << 30)) {
    return bad("memtable_size", "must be between 64 KiB and 1 GiB");
  }
  if (o.max_immutable_memtables < 1 || o.max_immutable_memtables > 16) {
    return bad("max_immutable_memtables", "must be between 1 and 16");
  }
  if (o.level0_compaction_trigger < 1 || o.level0_slowdown_trigger < o.level0_compaction_trigger ||
      o.level0_stop_trigger < o.level0_slowdown_trigger) {
    return bad("level0_compaction_trigger",
               "triggers must satisfy 1 <= compaction <= slowdown <= stop (level0_*_trigger)");
  }
  if (o.level1_size < (uint64_t{1} << 20)) return bad("level1_size", "must be at least 1 MiB");
  if (o.level_size_multiplier < 2 || o.level_size_multiplier > 100) {
    return bad("level_size_multiplier", "must be between 2 and 100");
  }
  if (o.block_size < (64 << 10) || o.block_size > (size_t{256} << 20)) {
    return bad("block_size", "must be between 64 KiB and 256 MiB");
  }
  if (o.bloom_bits_per_key < 0 || o.bloom_bits_per_key > 64) {
    return bad("bloom_bits_per_key", "must be between 0 and 64");
  }
  if (o.numa_node < -1 || o.numa_node >= 1024) return bad("numa_node", "must be -1 or a node number");
  if (o.pmem_emulation != PmemEmulation::kAuto && o.pmem_emulation != PmemEmulation::kForce &&
      o.pmem_emulation != PmemEmulation::kOff) {
    return bad("pmem_emulation", "must be kAuto, kForce or kOff");
  }
  if (o.storage_mode != StorageMode::kPmem && o.storage_mode != StorageMode::kHybrid &&
      o.storage_mode != StorageMode::kDisk) {
    return bad("storage_mode", "must be kPmem, kHybrid or kDisk");
  }
  if (o.pmem_budget > o.pmem_pool_size) return bad("pmem_budget", "must not exceed pmem_pool_size");
  if (o.ssd_io != SsdIo::kAuto && o.ssd_io != SsdIo::kUring && o.ssd_io != SsdIo::kPread) {
    return bad("ssd_io", "must be kAuto, kUring or kPread");
  }
  if (o.ssd_block_size < (4 << 10) || o.ssd_block_size > (size_t{4} << 20)) {
    return bad("ssd_block_size", "must be between 4 KiB and 4 MiB");
  }
  if (o.wal_recovery_mode != WalRecoveryMode::kTolerateCorruptedTailRecords &&
      o.wal_recovery_mode != WalRecoveryMode::kAbsoluteConsistency &&
      o.wal_recovery_mode != WalRecoveryMode::kPointInTimeRecovery &&
      o.wal_recovery_mode != WalRecoveryMode::kSkipAnyCorruptedRecords) {
    return bad("wal_recovery_mode",
               "must be kTolerateCorruptedTailRecords, kAbsoluteConsistency, kPointInTimeRecovery or "
               "kSkipAnyCorruptedRecords");
  }
  Status s = pmem::ValidateTimingModel(o.nvm_timing);
  if (!s.ok()) return s;
  // Last: the rule reads the fields checked above (src/pool_sizing.h).
  return CheckPoolSize(o);
}

}  // namespace

// ---------------------------------------------------------------------------
// Open, recovery, close

namespace {

// The directories create_directories would make for `path`, outermost first.
std::vector<std::filesystem::path> MissingDirectories(const std::filesystem::path& path) {
  std::vector<std::filesystem::path> missing;
  std::error_code ec;
  for (std::filesystem::path p = path; !p.empty() && !std::filesystem::exists(p, ec); p = p.parent_path()) {
    missing.insert(missing.begin(), p);
    if (p == p.parent_path()) break;
  }
  return missing;
}

}  // namespace

Status DB::Open(const Options& options, const std::string& name, std::unique_ptr<DB>* db) {
  db->reset();
  Status s = ValidateOptions(options);
  if (!s.ok()) return s;
  if (name.empty()) return Status::InvalidArgument("database name is empty");
  FileSystem* fs = options.file_system != nullptr ? options.file_system : FileSystem::Default();

  // What this open creates -- directories, files, the pool -- it removes
  // again if it fails; nothing that was there before is touched.
  const std::vector<std::filesystem::path> new_dirs = MissingDirectories(name);
  if (!new_dirs.empty()) {
    if (!options.create_if_missing) return Status::InvalidArgument(name, "does not exist (create_if_missing is false)");
    std::error_code ec;
    std::filesystem::create_directories(name, ec);
    if (ec) return Status::IOError("cannot create " + name, ec.message());
  }
  const std::string lock_path = name + "/LOCK";
  const bool lock_existed = fs->FileExists(lock_path);
  std::unique_ptr<FileLock> lock;
  OpenPlan plan;
  s = fs->LockFile(lock_path, &lock);
  if (s.ok()) s = PlanOpen(fs, options, name, &plan);
  if (s.ok() && plan.clear_leftovers) {
    // Debris of a disk-mode creation a crash interrupted: no MANIFEST ever
    // named these files, and no write was acknowledged.
    for (const std::string& child : plan.children_before) {
      if (child != "LOCK" && child != "IDENTITY" && IsDatabaseFileName(child)) (void)fs->RemoveFile(name + "/" + child);
    }
  }
  DatabaseIdentity identity = plan.identity;
  if (s.ok() && plan.creating) {
    identity.creating = true;
    s = WriteIdentity(fs, name, identity);
  }
  bool created_pool = false;
  if (s.ok()) {
    // Recovery may flush or compact: the profile's clock is calibrated first,
    // so its first timed interval does not carry the calibration.
    if (options.profile_compactions) ProfileClock::Calibrate();
    auto impl = std::make_unique<DBImpl>(options, name, identity.database_id);
    s = impl->Recover();
    created_pool = impl->created_pool();
    if (s.ok() && (!plan.identity_exists || plan.creating || plan.identity_outdated || plan.identity.creating)) {
      identity.creating = false;
      s = WriteIdentity(fs, name, identity);
    }
    if (s.ok()) {
      impl->HoldLock(std::move(lock));
      *db = std::move(impl);
      return Status::OK();
    }
  }
  // Failed: remove what this open made (the lock is still held).
  if (plan.creating) {
    if (created_pool) (void)pmem::DestroyPool(PoolPathFor(options, name));
    std::vector<std::string> children;
    if (fs->GetChildren(name, &children).ok()) {
      for (const std::string& child : children) {
        const bool was_there = std::find(plan.children_before.begin(), plan.children_before.end(), child) !=
                               plan.children_before.end();
        if (!was_there && child != "LOCK" && IsDatabaseFileName(child)) (void)fs->RemoveFile(name + "/" + child);
      }
    }
  }
  if (!lock_existed && lock != nullptr) (void)fs->RemoveFile(lock_path);
  lock.reset();
  for (auto it = new_dirs.rbegin(); it != new_dirs.rend(); ++it) {
    std::error_code ec;
    std::filesystem::remove(*it, ec);  // only if empty
  }
  return s;
}

Status DestroyDB(const std::string& name, const Options& options) {
  FileSystem* fs = options.file_system != nullptr ? options.file_system : FileSystem::Default();
  const std::string pool_path = PoolPathFor(options, name);
  std::error_code ec;
  if (!std::filesystem::is_directory(name, ec)) {
    // No directory: nothing is destroyed but a pool of a version without
    // identities, which records no database id.
    pmem::PoolOptions pool_options;
    pool_options.path = pool_path;
    pool_options.comparator_name = options.comparator->Name();
    pmem::Pool::Facts facts;
    Status s = pmem::Pool::Inspect(pool_options, &facts);
    if (s.IsNotFound()) return Status::OK();
    if (!s.ok()) return s;
    if (!facts.database_id.empty()) {
      return Status::InvalidArgument("pmem_path", pool_path + " is the pool of database " + facts.database_id +
                                                      ", whose directory " + name + " does not exist");
    }
    return pmem::DestroyPool(pool_path);
  }
  // The same lock as DB::Open: a database in use is never destroyed.
  std::unique_ptr<FileLock> lock;
  Status s = fs->LockFile(name + "/LOCK", &lock);
  if (!s.ok()) return s;
  DatabaseIdentity identity;
  s = ReadIdentity(fs, name, &identity);
  const bool identified = s.ok();
  if (!s.ok() && !s.IsNotFound()) return s;
  if (!identified || identity.uses_pool) {
    pmem::PoolOptions pool_options;
    pool_options.path = pool_path;
    pool_options.comparator_name = options.comparator->Name();
    pool_options.database_id = identified ? identity.database_id : "";
    pmem::Pool::Facts facts;
    s = pmem::Pool::Inspect(pool_options, &facts);
    if (s.ok() && !identified && !facts.database_id.empty() && facts.has_manifest) {
      return Status::InvalidArgument("pmem_path", pool_path + " is the pool of database " + facts.database_id +
                                                      ", whose directory is not " + name + " (it has no IDENTITY)");
    }
    // A damaged pool where the identity says this database's pool is goes
    // too; a foreign file anywhere else stays.
    const bool own_damaged_pool = s.IsCorruption() && identified && identity.pool_path == pool_path;
    if (s.ok() || own_damaged_pool) {
      s = pmem::DestroyPool(pool_path);
      if (!s.ok()) return s;
    } else if (!s.IsNotFound()) {
      return s;
    } else if (identified && identity.pool_path != pool_path && std::filesystem::exists(identity.pool_path, ec)) {
      // Destroying the directory would strand the pool it names.
      return Status::InvalidArgument("pmem_path", pool_path + " does not exist; " + name +
                                                      "'s pool is at " + identity.pool_path);
    }
  }
  // The database's own files (SSD tables, disk-only WAL and manifest, the
  // identity); other files in the directory stay. LOCK goes last.
  std::vector<std::string> children;
  if (fs->GetChildren(name, &children).ok()) {
    for (const std::string& child : children) {
      if (child == "LOCK" || !IsDatabaseFileName(child)) continue;
      s = fs->RemoveFile(name + "/" + child);
      if (!s.ok()) return s;
    }
  }
  (void)fs->RemoveFile(name + "/LOCK");
  lock.reset();
  std::filesystem::remove(name, ec);  // only if empty; a user's files stay
  return Status::OK();
}

DBImpl::DBImpl(const Options& options, const std::string& name, std::string database_id)
    : options_(options),
      name_(name),
      database_id_(std::move(database_id)),
      ucmp_(options.comparator),
      fs_(options.file_system != nullptr ? options.file_system : FileSystem::Default()),
      block_cache_(std::make_unique<ssd::BlockCache>(options.block_cache_capacity)) {}

namespace {

// The MANIFEST file of disk-only mode (docs/manifest.md): a 256-byte header
// naming the comparator, then one manifest record.
constexpr uint64_t kManifestFileMagic = 0x4B5349445753474AULL;  // bytes "JGSWDISK"
constexpr uint32_t kManifestFileVersion = 1;
constexpr size_t kManifestFileHeader = 256;

}  // namespace

Status DBImpl::ReadManifestFile(ManifestState* state, bool* exists) {
  const std::string path = name_ + "/MANIFEST";
  if (std::strlen(ucmp_->Name()) > kManifestFileHeader - 16) {
    return Status::InvalidArgument("comparator", "name longer than 240 bytes");
  }
  *exists = fs_->FileExists(path);
  if (!*exists) {
    if (!options_.create_if_missing) {
      return Status::InvalidArgument(name_, "does not exist (create_if_missing is false)");
    }
    return fs_->CreateDirIfMissing(name_);
  }
  if (options_.error_if_exists) return Status::InvalidArgument(name_, "exists (error_if_exists is true)");
  std::unique_ptr<RandomAccessFile> file;
  Status s = fs_->NewRandomAccessFile(path, &file);
  if (!s.ok()) return s;
  std::vector<uint64_t> buffer(file->Size() / 8 + 1);
  Slice contents;
  s = file->Read(0, file->Size(), reinterpret_cast<char*>(buffer.data()), &contents);
  if (!s.ok()) return s;
  if (contents.size() < kManifestFileHeader || DecodeFixed64(contents.data()) != kManifestFileMagic) {
    return Status::Corruption(path, "not a JigsawDB manifest file");
  }
  const uint32_t version = DecodeFixed32(contents.data() + 8);
  if (version > kManifestFileVersion) {
    return Status::NotSupported(path, "manifest file version " + std::to_string(version) + " is newer than " +
                                          std::to_string(kManifestFileVersion));
  }
  const uint32_t name_size = DecodeFixed32(contents.data() + 12);
  if (name_size > kManifestFileHeader - 16) return Status::Corruption(path, "bad comparator name");
  const std::string stored(contents.data() + 16, name_size);
  if (stored != ucmp_->Name()) {
    return Status::InvalidArgument("comparator mismatch", "database uses " + stored + ", options give " + ucmp_->Name());
  }
  s = DecodeManifest(contents.data() + kManifestFileHeader, contents.size() - kManifestFileHeader, state);
  if (!s.ok()) return Status::Corruption(path, s.ToString());
  return Status::OK();
}

Status DBImpl::WriteManifestFile(const ManifestState& state) {
  // Written whole beside the old one, synced, then renamed over it: the
  // rename is the atomic commit, the directory sync makes it durable.
  std::string contents(kManifestFileHeader + ManifestSize(state), '\0');
  EncodeFixed64(contents.data(), kManifestFileMagic);
  EncodeFixed32(contents.data() + 8, kManifestFileVersion);
  const std::string comparator = ucmp_->Name();
  EncodeFixed32(contents.data() + 12, static_cast<uint32_t>(comparator.size()));
  std::memcpy(contents.data() + 16, comparator.data(), std::min(comparator.size(), kManifestFileHeader - 16));
  EncodeManifest(state, contents.data() + kManifestFileHeader);
  const std::string tmp = name_ + "/MANIFEST.tmp";
  std::unique_ptr<WritableFile> file;
  Status s = fs_->NewWritableFile(tmp, &file);
  if (s.ok()) s = file->Append(contents);
  if (s.ok()) s = file->Sync();
  if (s.ok()) s = file->Close();
  if (s.ok()) s = fs_->RenameFile(tmp, name_ + "/MANIFEST");
  syncs_ += 2;
  bytes_synced_ += contents.size();
  if (!s.ok()) {
    (void)fs_->RemoveFile(tmp);
    return s;
  }
  // Renamed: the new manifest is the database now, even if the directory
  // sync fails. Callers must not undo their change (that would delete files
  // it names); later writes get the error instead.
  Status dir = fs_->SyncDir(name_);
  if (!dir.ok() && bg_error_.ok()) bg_error_ = dir;
  return Status::OK();
}

DBImpl::~DBImpl() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    shutting_down_ = true;
    bg_cv_.notify_all();
  }
  if (bg_thread_.joinable()) bg_thread_.join();
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tracker_stop_ = true;  // the tracker makes every pending output durable first
    tracker_cv_.notify_all();
  }
  if (tracker_thread_.joinable()) tracker_thread_.join();
  pending_.clear();
  for (pmem::Reservation& chunk : standby_) pool_->Cancel(&chunk);
  standby_.clear();
  // A clean close makes even unsynced writes durable.
  if (wal_ != nullptr) (void)wal_->Sync();  // an error here leaves the records to the WAL's own checks
  wal_.reset();
  imm_.clear();
  has_imm_ = false;
  mem_.reset();
  version_.reset();  // frees obsolete blocks no iterator holds
  pool_.reset();
  lock_.reset();  // last: the database is closed
}

Status DBImpl::Recover() {
  pmem::PoolOptions pool_options;
  pool_options.path = PoolPathFor(options_, name_);
  pool_options.size = options_.pmem_pool_size;
  pool_options.create_if_missing = options_.create_if_missing;
  pool_options.error_if_exists = options_.error_if_exists;
  pool_options.comparator_name = ucmp_->Name();
  pool_options.database_id = database_id_;
  pool_options.emulation = options_.pmem_emulation;
  pool_options.timing = options_.nvm_timing;
  Status s;
  ManifestState file_state;
  bool file_manifest = false;
  io_ = ssd::ChooseIoEngine(options_.ssd_io, name_, &io_description_);
  // io_uring table writes only when asked for: they measured no faster than
  // pwrite (docs/decisions.md, "Bounded io_uring waits").
  async_table_writes_ = options_.ssd_io == SsdIo::kUring && io_->is_uring();
  if (options_.file_system != nullptr) {
    io_description_ += "; table writes: through Options::file_system";
  } else {
    io_description_ += async_table_writes_ ? "; table writes: io_uring from 256 KiB buffers"
                                           : "; table writes: pwrite from 256 KiB buffers";
  }
  if (disk_mode()) {
    s = ReadManifestFile(&file_state, &file_manifest);
  } else {
    s = pmem::Pool::Open(pool_options, &pool_);
  }
  if (!s.ok()) return s;

  auto version = std::make_shared<Version>();
  auto recovered = NewMemTable();
  std::set<uint64_t> live_tables;    // SSD tables the manifest references
  std::vector<TableRef> discarded;   // storage to release once the recovery commit is durable
  // Unless that commit happens, the manifest on media still names it: keep it.
  struct KeepUnlessCommitted {
    std::vector<TableRef>* blocks;
    ~KeepUnlessCommitted() {
      for (TableRef& b : *blocks) b->obsolete = false;
    }
  } keep_discarded{&discarded};
  bool had_pending = false;
  std::vector<uint64_t> old_wal_segments;
  std::vector<WalSegmentMeta> state_wals;
  std::set<uint64_t> live_logs;  // disk-only mode: log files the manifest lists
  // Point-in-time recovery dropped logs: the recovery commit must replace
  // them, or the next open would stop at the same damage and drop every
  // write made after this one.
  bool replay_stopped_early = false;
  const uint64_t manifest = disk_mode() ? (file_manifest ? 1 : 0) : pool_->manifest_offset();
  if (manifest != 0) {
    ManifestState state = file_state;
    if (!disk_mode()) {
      s = DecodeManifest(pool_->Direct(manifest), pool_->ObjectSize(manifest), &state);
      if (!s.ok()) return s;
      manifest_offset_ = manifest;
    }
    manifest_generation_ = state.generation;
    next_number_ = state.next_number;
    last_sequence_ = state.last_sequence;
    std::set<uint64_t> live;
    live.insert(manifest);
    std::set<uint64_t> pending_outputs;
    for (const auto& p : state.pending) pending_outputs.insert(p.outputs.begin(), p.outputs.end());
    std::map<uint64_t, TableRef> loaded;
    for (const auto& b : state.blocks) {
      TableRef block;
      if (b.residence == Residence::kPmem) {
        live.insert(b.offset);
        s = OpenPmemTable(pool_.get(), ucmp_, b.number, b.offset, b.size, b.level, /*verify_checksum=*/true, &block);
        if (s.ok()) block->disposer = &disposer_;
      } else {
        live_tables.insert(b.number);
        s = OpenSsdTable(b.number, b.level, &block);
      }
      if (!s.ok()) {
        if (pending_outputs.count(b.number) > 0) continue;  // lost in a crash: redone from its shadows below
        return s;
      }
      loaded[b.number] = block;
      version->levels[b.level].push_back(std::move(block));
    }
    for (const auto& p : state.pending) {
      for (const auto& shadow : p.shadows) {
        if (shadow.residence == Residence::kPmem) {
          live.insert(shadow.offset);
        } else {
          live_tables.insert(shadow.number);
        }
      }
    }
    // Table and log files the manifest does not reference: outputs of a
    // compaction a crash interrupted before its commit, logs a commit
    // dropped. Swept before pending compactions are redone, whose new
    // outputs the old manifest cannot know.
    for (const WalSegmentMeta& w : state.wal_segments) live_logs.insert(w.number);
    std::vector<std::string> children;
    if (fs_->GetChildren(name_, &children).ok()) {
      for (const std::string& child : children) {
        FileType type;
        uint64_t number = 0;
        if (!ParseFileName(child, &type, &number)) continue;
        const bool stale_table = type == FileType::kTable && live_tables.count(number) == 0;
        const bool stale_log = disk_mode() && type == FileType::kLog && live_logs.count(number) == 0;
        // Only numbers the manifest proves this database handed out: a
        // file numbered at or past next_number is no file of its history
        // (an uncommitted output's number is handed out again, and the file
        // rewritten, or swept once a later commit passes it).
        if ((stale_table || stale_log) && number < state.next_number) (void)fs_->RemoveFile(name_ + "/" + child);
      }
    }
    had_pending = !state.pending.empty();
    s = ResolvePendingCompactions(state.pending, &loaded, version.get(), &discarded);
    if (!s.ok()) return s;
    // Replay the WAL segments, oldest first, into one memtable. Damage is
    // handled as options_.wal_recovery_mode says (docs/durability.md); no
    // mode but kSkipAnyCorruptedRecords replays a log over a hole in an
    // older one.
    state_wals = state.wal_segments;
    const WalRecoveryMode wal_mode = options_.wal_recovery_mode;
    const WalDamage on_damage =
        wal_mode == WalRecoveryMode::kSkipAnyCorruptedRecords ? WalDamage::kSkip : WalDamage::kStop;
    const size_t wal_count = state.wal_segments.size();
    size_t history_end = wal_count;  // point-in-time: logs from here on are not replayed
    uint64_t replayed_records = 0;
    std::string tolerated;  // damage the mode let pass, for jigsaw.wal-recovery
    for (size_t i = 0; i < wal_count; ++i) {
      const WalSegmentMeta& w = state.wal_segments[i];
      live.insert(w.offset);
      old_wal_segments.push_back(w.offset);
      live_logs.insert(w.number);
      if (i >= history_end) continue;
      auto replay = [&](const Slice& record) {
        WriteBatch batch;
        Status r = WriteBatchInternal::SetContents(&batch, record);
        if (r.ok()) r = WriteBatchInternal::InsertInto(batch, recovered.get());
        if (r.ok()) {
          const SequenceNumber last = WriteBatchInternal::Sequence(batch) + WriteBatchInternal::Count(batch) - 1;
          last_sequence_ = std::max(last_sequence_, last);
        }
        return r;
      };
      WalReadResult read;
      std::string log_name = "WAL segment " + std::to_string(w.number);
      if (disk_mode()) {
        log_name = "WAL " + std::to_string(w.number) + " (" + LogPath(w.number) + ")";
        s = ReadWalFile(fs_, LogPath(w.number), w.number, on_damage, replay, &read);
      } else {
        s = ReadWalSegment(pool_->Direct(w.offset), std::min(w.capacity, pool_->ObjectSize(w.offset)), w.number,
                           on_damage, replay, &read);
      }
      if (!s.ok()) return s;
      replayed_records += read.records;
      if (!read.damaged) continue;
      const bool newest = i + 1 == wal_count;
      const bool torn_tail = WalDamageIsTornTail(read, newest);
      std::string damage = DescribeWalDamage(read);
      if (torn_tail) {
        damage += "; a torn tail";
      } else if (!newest) {
        damage += "; not the newest log (" + std::to_string(wal_count - 1 - i) + " newer)";
      }
      if (wal_mode == WalRecoveryMode::kAbsoluteConsistency ||
          (wal_mode == WalRecoveryMode::kTolerateCorruptedTailRecords && !torn_tail)) {
        return Status::Corruption(log_name, damage + (torn_tail ? " (any damage fails kAbsoluteConsistency)"
                                                                : " (records after it cannot be replayed in order; "
                                                                  "see Options::wal_recovery_mode)"));
      }
      if (!tolerated.empty()) tolerated += "\n";
      tolerated += log_name + ": " + damage;
      if (wal_mode == WalRecoveryMode::kPointInTimeRecovery && !torn_tail) {
        history_end = i + 1;
        replay_stopped_early = true;
        tolerated += "; replay stopped there, dropping the rest of this log and " + std::to_string(wal_count - 1 - i) +
                     " newer log(s)";
      }
    }
    wal_recovery_ = std::to_string(wal_count) + " log(s), " + std::to_string(replayed_records) + " record(s) replayed";
    wal_recovery_ += tolerated.empty() ? "; no damage" : "; damage tolerated:\n" + tolerated;
    // Objects no manifest references: leftovers of a crash between a commit
    // and the frees that follow it.
    if (pool_ != nullptr) {
      for (auto type : {pmem::ObjectType::kBlock, pmem::ObjectType::kWalSegment, pmem::ObjectType::kManifest}) {
        for (uint64_t offset : pool_->Objects(type)) {
          if (live.count(offset) == 0) pool_->Free(offset);
        }
      }
    }
  }
  // L0 stays in the manifest's order, newest first: block numbers do not
  // give the age of L0 data (a split step's remainder is older than blocks
  // flushed while it ran, and numbered after them).
  for (int level = 1; level < kNumLevels; ++level) {
    std::sort(version->levels[level].begin(), version->levels[level].end(),
              [&](const TableRef& a, const TableRef& b) { return ucmp_->Compare(a->smallest, b->smallest) < 0; });
  }
  s = Status::OK();

  version_ = std::move(version);
  mem_ = NewMemTable();
  // Recovered writes go to a fresh L0 block; the old segments are freed in
  // the same commit that starts a new, empty segment. If the pool is too full
  // for that, the recovered memtable stays frozen on its old segments (reads
  // work; writes get NoSpace until the background flush finds room).
  std::vector<pmem::Reservation*> reservations;
  pmem::Reservation block_reservation;
  pmem::Reservation wal_reservation;
  TableRef block;
  if (recovered->num_entries() > 0) {
    s = disk_mode() ? BuildTableFromMemTable(*recovered, &block)
                    : BuildBlockFromMemTable(*recovered, 0, &block, &block_reservation);
  }
  if (s.ok()) s = NewWalSegment(0, &wal_reservation, &mem_wal_, /*may_use_standby=*/true, &wal_);
  if (s.ok()) {
    auto next = std::make_shared<Version>(*version_);
    if (block != nullptr) {
      next->levels[0].insert(next->levels[0].begin(), block);
      if (block_reservation.action != nullptr) reservations.push_back(&block_reservation);
    }
    if (wal_reservation.action != nullptr) reservations.push_back(&wal_reservation);
    std::lock_guard<std::mutex> lock(mutex_);
    s = CommitManifest(*next, reservations, old_wal_segments, /*may_use_standby=*/true);
    if (s.ok()) version_ = std::move(next);
  }
  if (s.ok()) {
    discarded.clear();  // shadows and redone outputs: the new manifest no longer names them, release them
    if (disk_mode()) DeleteLogs(state_wals);
  } else if (had_pending || disk_mode()) {
    if (block != nullptr && block->residence == Residence::kSsd) block->obsolete = true;
    return s;  // resolved compactions must be committed before the database is used
  }
  if (!s.ok()) {
    wal_.reset();
    block.reset();
    if (block_reservation.action != nullptr) pool_->Cancel(&block_reservation);
    if (wal_reservation.action != nullptr) pool_->Cancel(&wal_reservation);
    if (!s.IsNoSpace() || manifest == 0) return s;
    if (replay_stopped_early) {
      return Status::NoSpace(s.message(), "the WAL replay stopped at damage (kPointInTimeRecovery) and the "
                                          "recovered state cannot be committed in a full pool (opening it on "
                                          "would lose later writes at the next open)");
    }
    if (recovered->num_entries() > 0 || !state_wals.empty()) imm_.push_back({recovered, state_wals});
    has_imm_ = !imm_.empty();
    pool_full_ = true;
  }
  if (pool_ != nullptr) {
    // Standby space: room for the largest compaction (L1 plus a stopped L0)
    // and a memtable switch, between 1/8 and 1/4 of the pool (the sizing
    // rule counts the same, src/pool_sizing.h).
    standby_chunks_ = static_cast<size_t>(StandbyBytes(options_, pool_->pool_size()) / kPoolChunk);
    RefillStandby();
  }
  const int node = options_.numa_node >= 0 ? options_.numa_node
                   : disk_mode()            ? -1
                                            : pmem::NumaNodeForPath(pool_options.path);
  recovering_ = false;  // from here on other threads run
  bg_thread_ = std::thread([this, node] {
    if (pmem::BindThreadToNode(node)) numa_node_ = node;
    BackgroundLoop();
  });
  tracker_thread_ = std::thread([this] { TrackerLoop(); });
  return Status::OK();
}

Status DBImpl::ResolvePendingCompactions(const std::vector<ManifestState::PendingCompaction>& pending,
                                         std::map<uint64_t, TableRef>* loaded, Version* version,
                                         std::vector<TableRef>* discarded) {
  // A shadow's storage is released after the recovery commit: a stand-in
  // block without a reader carries it to the disposer.
  auto discard_shadow = [&](const ManifestState::BlockEntry& e) {
    auto b = std::make_shared<TableMeta>();
    b->number = e.number;
    b->residence = e.residence;
    b->offset = e.offset;
    b->size = e.size;
    b->disposer = &disposer_;
    b->obsolete = true;
    discarded->push_back(std::move(b));
  };
  for (const auto& p : pending) {
    bool intact = true;
    for (uint64_t number : p.outputs) {
      auto it = loaded->find(number);
      if (it == loaded->end() || !it->second->table->Validate().ok()) intact = false;
    }
    if (intact) {
      // The outputs survived (in the page cache at least): make them durable.
      for (uint64_t number : p.outputs) {
        Status s = fs_->SyncFile(TablePath(number));
        if (!s.ok()) return s;
        ++syncs_;
      }
      Status s = fs_->SyncDir(name_);
      if (!s.ok()) return s;
      ++syncs_;
      for (const auto& shadow : p.shadows) discard_shadow(shadow);
      continue;
    }
    // Redo the compaction from its shadows, keeping every version and
    // tombstone (no snapshot or deeper level is consulted), synced inline.
    std::vector<TableRef> inputs;
    std::vector<std::unique_ptr<InternalIterator>> children;
    for (const auto& shadow : p.shadows) {
      TableRef b;
      Status s = shadow.residence == Residence::kPmem
                     ? OpenPmemTable(pool_.get(), ucmp_, shadow.number, shadow.offset, shadow.size, shadow.level, true, &b)
                     : OpenSsdTable(shadow.number, shadow.level, &b);
      if (!s.ok()) return Status::Corruption("shadow of a pending compaction", s.ToString());
      b->disposer = &disposer_;
      children.push_back(b->table->NewScanIterator(/*decode=*/nullptr));
      inputs.push_back(std::move(b));
    }
    auto merged = NewMergingIterator(ucmp_, std::move(children));
    std::vector<TableRef> outputs;
    std::vector<pmem::Reservation> reservations;
    std::vector<std::unique_ptr<WritableFile>> files;
    Status s = WriteCompactionOutputs(merged.get(), p.output_level, /*to_ssd=*/true, /*sync_tables=*/true,
                                      /*smallest_snapshot=*/0, /*base=*/nullptr, true, &outputs, &reservations,
                                      &files);
    for (auto& f : files) (void)f->Close();
    if (s.ok()) s = fs_->SyncDir(name_);
    if (!s.ok()) return s;
    ++syncs_;
    auto& level = version->levels[p.output_level];
    for (uint64_t number : p.outputs) {
      auto it = loaded->find(number);
      if (it == loaded->end()) continue;
      level.erase(std::remove(level.begin(), level.end(), it->second), level.end());
      it->second->obsolete = true;
      discarded->push_back(it->second);
      loaded->erase(it);
    }
    level.insert(level.end(), outputs.begin(), outputs.end());
    ++redone_compactions_;
    for (TableRef& b : inputs) {
      b->obsolete = true;
      discarded->push_back(std::move(b));
    }
  }
  return Status::OK();
}

}  // namespace jigsaw
