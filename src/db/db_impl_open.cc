// DBImpl's open, recovery and close: DB::Open and DestroyDB (identity and
// locking, db/db_identity.h) and Recover, in named steps: open the storage
// and load the manifest, load the version, sweep orphan files, resolve
// pending compactions, replay the WAL, free unreferenced pool objects,
// commit the recovered state, start the background threads.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "util/coding.h"
#include "pmem/device.h"
#include "db/db_identity.h"
#include "db/db_impl.h"
#include "compaction/durability_tracker.h"
#include "pmem/pool_sizing.h"
#include "version/filename.h"
#include "util/profile_clock.h"
#include "util/guarded_read.h"
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
  if (o.TableSize() < (64 << 10) || o.TableSize() > (size_t{256} << 20)) {
    return bad(o.block_size != 0 ? "block_size (table_size's old name)" : "table_size",
               "must be between 64 KiB and 256 MiB");
  }
  if (o.bloom_bits_per_key < 0 || o.bloom_bits_per_key > 64) {
    return bad("bloom_bits_per_key", "must be between 0 and 64");
  }
  if (o.compression != Compression::kNone && o.compression != Compression::kLZ4 &&
      o.compression != Compression::kZstd) {
    return bad("compression", "must be kNone, kLZ4 or kZstd");
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
  // Last: the rule reads the fields checked above (pmem/pool_sizing.h).
  return CheckPoolSize(o);
}

}  // namespace

// ---------------------------------------------------------------------------
// Open, recovery, close

namespace {

// The directories missing on the way to `path`, outermost first.
std::vector<std::string> MissingDirectories(FileSystem* fs, const std::string& path) {
  std::vector<std::string> missing;
  for (std::filesystem::path p = path; !p.empty() && !fs->FileExists(p.string()); p = p.parent_path()) {
    missing.insert(missing.begin(), p.string());
    if (p == p.parent_path()) break;
  }
  return missing;
}

}  // namespace

namespace {

// The default info log, <name>/LOG, the previous one kept as LOG.old;
// nullptr if it cannot be created (the log is not worth failing an open).
std::unique_ptr<Logger> OpenInfoLog(FileSystem* fs, const std::string& name) {
  const std::string path = InfoLogFileName(name);
  if (fs->FileExists(path)) (void)fs->RenameFile(path, OldInfoLogFileName(name));
  std::unique_ptr<WritableFile> file;
  if (!fs->NewWritableFile(path, &file).ok()) return nullptr;
  return NewFileLogger(std::move(file));
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
  const std::vector<std::string> new_dirs = MissingDirectories(fs, name);
  if (!new_dirs.empty() && !options.create_if_missing) {
    return Status::InvalidArgument(name, "does not exist (create_if_missing is false)");
  }
  for (size_t i = 0; i < new_dirs.size(); ++i) {
    s = fs->CreateDirIfMissing(new_dirs[i]);
    if (!s.ok()) {
      while (i-- > 0) (void)fs->RemoveDir(new_dirs[i]);
      return s;
    }
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
    if (options.info_log == nullptr) impl->TakeInfoLog(OpenInfoLog(fs, name));
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
  if (plan.creating) (void)fs->RemoveDir(WalArchive::Dir(name));  // only if empty
  if (!lock_existed && lock != nullptr) (void)fs->RemoveFile(lock_path);
  lock.reset();
  for (auto it = new_dirs.rbegin(); it != new_dirs.rend(); ++it) (void)fs->RemoveDir(*it);  // only if empty
  return s;
}

Status DB::OpenForReadOnly(const Options& options, const std::string& name, std::unique_ptr<DB>* db) {
  db->reset();
  Status s = ValidateOptions(options);
  if (!s.ok()) return s;
  if (name.empty()) return Status::InvalidArgument("database name is empty");
  if (options.storage_mode != StorageMode::kDisk) {
    return Status::NotSupported("OpenForReadOnly", "only disk-mode databases open read-only: a pool is locked by "
                                                   "the process that has it open, and mapping it writes to it");
  }
  FileSystem* fs = options.file_system != nullptr ? options.file_system : FileSystem::Default();
  DatabaseIdentity identity;
  s = ReadIdentity(fs, name, &identity);
  if (s.ok() && identity.uses_pool) {
    return Status::InvalidArgument("storage_mode", name + " holds a pool database; options give kDisk (a pool "
                                                          "database cannot be opened read-only)");
  }
  if (!s.ok() && !s.IsNotFound()) return s;
  if (!fs->FileExists(name + "/MANIFEST")) return Status::NotFound(name, "holds no disk-mode database (no MANIFEST)");
  auto impl = std::make_unique<DBImpl>(options, name, identity.database_id);
  impl->MarkReadOnly();
  s = impl->Recover();
  if (!s.ok()) return s;
  *db = std::move(impl);
  return Status::OK();
}

Status DestroyDB(const std::string& name, const Options& options) {
  FileSystem* fs = options.file_system != nullptr ? options.file_system : FileSystem::Default();
  const std::string pool_path = PoolPathFor(options, name);
  std::error_code ec;
  if (!fs->FileExists(name)) {
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
  // The archived logs (Options::wal_ttl_seconds): their directory goes if
  // nothing else is in it.
  const std::string archive = WalArchive::Dir(name);
  if (fs->FileExists(archive) && fs->GetChildren(archive, &children).ok()) {
    for (const std::string& child : children) {
      FileType type;
      uint64_t number = 0;
      const bool temp = child.size() > 8 && child.compare(child.size() - 8, 8, ".log.tmp") == 0;
      if (temp || (ParseFileName(child, &type, &number) && type == FileType::kLog)) {
        s = fs->RemoveFile(archive + "/" + child);
        if (!s.ok()) return s;
      }
    }
    (void)fs->RemoveDir(archive);
  }
  (void)fs->RemoveFile(name + "/LOCK");
  lock.reset();
  (void)fs->RemoveDir(name);  // only if empty; a user's files stay
  return Status::OK();
}

DBImpl::DBImpl(const Options& options, const std::string& name, std::string database_id)
    : options_(options),
      name_(name),
      database_id_(std::move(database_id)),
      ucmp_(options.comparator),
      versions_(std::make_unique<VersionSet>()),
      tables_(std::make_unique<TableStore>(options_, name_, versions_.get())),
      archive_(std::make_unique<WalArchive>(tables_->fs(), name_, options.wal_ttl_seconds,
                                            options.wal_size_limit_mb >= (uint64_t{1} << 44)
                                                ? UINT64_MAX
                                                : options.wal_size_limit_mb << 20)) {
  info_log_ = options.info_log;
}

DBImpl::~DBImpl() {
  Log(info_log_, "Closing %s", name_.c_str());
  {
    MutexLock lock(&mutex_);
    shutting_down_ = true;
    bg_cv_.SignalAll();
  }
  if (bg_thread_.joinable()) bg_thread_.join();
  {
    MutexLock lock(&mutex_);
    tracker_stop_ = true;  // the tracker makes every pending output durable first
    tracker_cv_.SignalAll();
  }
  if (tracker_thread_.joinable()) tracker_thread_.join();
  pending_.clear();
  // A clean close makes even unsynced writes durable.
  if (wal_ != nullptr) (void)wal_->Sync();  // an error here leaves the records to the WAL's own checks
  wal_.reset();
  if (spare_log_ != 0) (void)tables_->fs()->RemoveFile(LogFileName(name_, spare_log_));
  imm_.clear();
  has_imm_ = false;
  mem_.reset();
  read_state_cache_.Invalidate();
  {
    MutexLock lock(&read_state_mutex_);
    read_state_.reset();  // its memtables and version, before what they need
  }
  versions_.reset();  // frees obsolete tables no iterator holds, through tables_
  tables_.reset();    // the standby, then the pool
  lock_.reset();      // the database is closed
  Log(info_log_, "Closed");
}

// What Recover's steps find and hand on.
struct DBImpl::RecoveryState {
  ManifestState manifest;
  bool manifest_exists = false;
  std::string pool_path;
  std::shared_ptr<Version> version = std::make_shared<Version>();
  std::shared_ptr<MemTable> recovered;      // the replayed writes
  std::map<uint64_t, TableRef> loaded;      // the manifest's tables, by number
  std::set<uint64_t> live_objects;          // pool objects the manifest references
  std::set<uint64_t> live_tables;           // SSD tables the manifest references
  std::set<uint64_t> live_logs;             // disk-only mode: log files the manifest lists
  std::vector<uint64_t> old_wal_segments;   // pool objects of the replayed segments
  // Archiving (Options::wal_ttl_seconds): the records replayed from each
  // log, in the order of manifest.wal_segments, for the archive; and where
  // each log's replayed records end.
  std::vector<std::string> replayed_records;
  std::vector<uint64_t> wal_ends;
  // Storage to release once the recovery commit is durable. Unless that
  // commit happens, the manifest on media still names it: keep it.
  std::vector<TableRef> discarded;
  // Point-in-time recovery dropped logs: the recovery commit must replace
  // them, or the next open would stop at the same damage and drop every
  // write made after this one.
  bool replay_stopped_early = false;
  // Options::best_efforts_recovery: the manifest's tables that could not
  // be opened, and why.
  std::vector<std::pair<ManifestState::BlockEntry, Status>> set_aside;

  ~RecoveryState() {
    for (TableRef& t : discarded) t->obsolete = false;
  }
};

Status DBImpl::Recover() {
  const char* mode = options_.storage_mode == StorageMode::kPmem     ? "pmem"
                     : options_.storage_mode == StorageMode::kHybrid ? "hybrid"
                                                                     : "disk";
  Log(info_log_, "Opening %s: %s mode, pool %s", name_.c_str(), mode,
      disk_mode() ? "none" : PoolPathFor(options_, name_).c_str());
  const uint64_t start = SteadyNanos();
  Status s = read_only_ ? RecoverReadOnlySteps() : RecoverSteps();
  MutexLock lock(&mutex_);
  if (!s.ok()) {
    Log(info_log_, "Open failed: %s", s.ToString().c_str());
    return s;
  }
  PublishReadState();
  std::string levels;
  for (int level = 0; level < kNumLevels; ++level) {
    const auto& tables = versions_->current()->levels[level];
    if (tables.empty()) continue;
    levels += " L" + std::to_string(level) + ":" + std::to_string(tables.size()) + " tables/" +
              std::to_string(versions_->current()->LevelBytes(level)) + " bytes";
  }
  Log(info_log_, "Opened in %.1f ms;%s; %llu compactions redone; WAL: %s; SSD I/O: %s", (SteadyNanos() - start) / 1e6,
      levels.empty() ? " empty" : levels.c_str(), static_cast<unsigned long long>(counters_.redone_compactions),
      wal_recovery_.c_str(), io_description_.c_str());
  return s;
}

Status DBImpl::RecoverSteps() {
  MutexLock lock(&mutex_);
  RecoveryState state;
  state.recovered = NewMemTable();
  Status s = OpenStorage(&state);
  if (s.ok()) s = archive_->Open();
  if (!s.ok()) return s;
  if (state.manifest_exists) {
    s = LoadVersion(&state);
    if (s.ok()) s = KeepSetAsideTables(&state, /*move=*/true);
    // Swept before pending compactions are redone, whose new outputs the
    // old manifest cannot know.
    if (s.ok()) SweepOrphanFiles(&state);
    if (s.ok()) {
      s = ResolvePendingCompactions(tables_.get(), state.manifest.pending, &state.loaded, state.version.get(),
                                    &state.discarded, &counters_.redone_compactions);
    }
    if (s.ok()) s = ReplayWal(&state);
    if (!s.ok()) return s;
    FreeUnreferencedObjects(state);
  }
  // L0 stays in the manifest's order, newest first: table numbers do not
  // give the age of L0 data (a split step's remainder is older than tables
  // flushed while it ran, and numbered after them).
  SortDeeperLevels(state.version.get());  // again: redone compactions add tables
  versions_->SetCurrent(state.version);
  mem_ = NewMemTable();
  s = CommitRecovery(&state);
  if (!s.ok()) return s;
  StartBackgroundThreads();
  return Status::OK();
}

Status DBImpl::RecoverReadOnlySteps() {
  // A writer may commit a new manifest at any moment. A table it drops is
  // deleted afterwards, a log it drops deleted or reused afterwards: a
  // table this open has opened stays readable, but a log could change
  // under its replay. So the view is consistent when everything is read
  // and every log replayed is still in the committed manifest (none was
  // dropped meanwhile); otherwise the open starts over.
  constexpr int kAttempts = 100;
  MutexLock lock(&mutex_);
  tables_->ChooseIo(&io_description_);
  Status s;
  for (int attempt = 1;; ++attempt) {
    RecoveryState state;
    state.recovered = NewMemTable();
    s = versions_->Load(std::make_unique<FileManifestStore>(tables_->fs(), name_, ucmp_, tables_->sync_stats()),
                        &state.manifest, &state.manifest_exists);
    if (s.ok() && !state.manifest_exists) return Status::NotFound(name_, "holds no disk-mode database (no MANIFEST)");
    if (s.ok()) s = LoadVersion(&state);
    if (s.ok()) s = KeepSetAsideTables(&state, /*move=*/false);
    for (const auto& p : state.manifest.pending) {
      for (uint64_t output : p.outputs) {
        if (s.ok() && state.loaded.count(output) == 0) {
          s = Status::IOError(name_, "a compaction a crash interrupted must be redone first: open the database "
                                     "for writing once");
        }
      }
    }
    if (s.ok()) s = ReplayWal(&state);
    ManifestState now;
    bool exists = false;
    const Status again = FileManifestStore(tables_->fs(), name_, ucmp_, tables_->sync_stats()).Load(&now, &exists);
    bool logs_kept = again.ok() && exists;
    for (const WalSegmentMeta& w : state.manifest.wal_segments) {
      bool listed = false;
      for (const WalSegmentMeta& n : now.wal_segments) listed = listed || n.number == w.number;
      logs_kept = logs_kept && listed;
    }
    if (s.ok() && logs_kept) {
      versions_->SetCurrent(state.version);
      mem_ = state.recovered;
      return Status::OK();
    }
    const bool unchanged = again.ok() && exists && now.generation == state.manifest.generation;
    if (unchanged) return s;  // the error is the database's, not a writer's commit
    if (attempt == kAttempts) {
      return Status::IOError(name_, "a writer dropped logs under each of " + std::to_string(kAttempts) +
                                        " attempts to open it read-only" + (s.ok() ? "" : ": " + s.ToString()));
    }
  }
}

Status DBImpl::OpenStorage(RecoveryState* state) {
  tables_->ChooseIo(&io_description_);
  state->pool_path = PoolPathFor(options_, name_);
  Status s;
  if (disk_mode()) {
    s = versions_->Load(std::make_unique<FileManifestStore>(tables_->fs(), name_, ucmp_, tables_->sync_stats()),
                        &state->manifest, &state->manifest_exists);
    if (!s.ok()) return s;
    if (!state->manifest_exists) {
      if (!options_.create_if_missing) {
        return Status::InvalidArgument(name_, "does not exist (create_if_missing is false)");
      }
      return tables_->fs()->CreateDirIfMissing(name_);
    }
    if (options_.error_if_exists) return Status::InvalidArgument(name_, "exists (error_if_exists is true)");
    return Status::OK();
  }
  pmem::PoolOptions pool_options;
  pool_options.path = state->pool_path;
  pool_options.size = options_.pmem_pool_size;
  pool_options.create_if_missing = options_.create_if_missing;
  pool_options.error_if_exists = options_.error_if_exists;
  pool_options.comparator_name = ucmp_->Name();
  pool_options.database_id = database_id_;
  pool_options.emulation = options_.pmem_emulation;
  pool_options.timing = options_.nvm_timing;
  s = tables_->OpenPool(pool_options);
  if (!s.ok()) return s;
  s = versions_->Load(std::make_unique<PoolManifestStore>(tables_->pool(), tables_->space()), &state->manifest,
                      &state->manifest_exists);
  if (s.ok() && state->manifest_exists) state->live_objects.insert(versions_->manifest_pool_object());
  return s;
}

void DBImpl::SortDeeperLevels(Version* version) const {
  for (int level = 1; level < kNumLevels; ++level) {
    // Stable: the manifest lists tables that share a boundary key in order.
    std::stable_sort(version->levels[level].begin(), version->levels[level].end(),
                     [&](const TableRef& a, const TableRef& b) { return ucmp_->Compare(a->smallest, b->smallest) < 0; });
  }
}

Status DBImpl::LoadVersion(RecoveryState* state) {
  const ManifestState& manifest = state->manifest;
  std::set<uint64_t> pending_outputs;
  for (const auto& p : manifest.pending) pending_outputs.insert(p.outputs.begin(), p.outputs.end());
  std::set<uint64_t> block_objects;
  for (const auto& entry : manifest.blocks) {
    // Only damage lists a table twice, or two blocks in one pool object.
    if (state->loaded.count(entry.number) > 0 ||
        (entry.residence == Residence::kPmem && !block_objects.insert(entry.offset).second)) {
      return Status::Corruption("manifest", "block " + std::to_string(entry.number) + " listed twice");
    }
    TableRef table;
    Status s;
    if (entry.residence == Residence::kPmem) {
      state->live_objects.insert(entry.offset);
      s = tables_->OpenPmem(entry.number, entry.pmem_layout, entry.offset, entry.size, /*verify_checksum=*/true,
                            &table);
    } else {
      state->live_tables.insert(entry.number);
      s = tables_->OpenSsd(entry.number, &table);
    }
    if (!s.ok()) {
      if (pending_outputs.count(entry.number) > 0) continue;  // lost in a crash: redone from its shadows
      if (options_.best_efforts_recovery && (s.IsCorruption() || s.IsIOError())) {
        state->set_aside.emplace_back(entry, s);
        continue;
      }
      return s;
    }
    state->loaded[entry.number] = table;
    state->version->levels[entry.level].push_back(std::move(table));
  }
  for (const auto& p : manifest.pending) {
    for (const auto& shadow : p.shadows) {
      if (shadow.residence == Residence::kPmem) {
        state->live_objects.insert(shadow.offset);
      } else {
        state->live_tables.insert(shadow.number);
      }
    }
  }
  for (const WalSegmentMeta& w : manifest.wal_segments) state->live_logs.insert(w.number);
  for (const RangeTombstone& t : manifest.range_tombstones) {
    if (ucmp_->Compare(t.begin, t.end) >= 0 || t.sequence > manifest.last_sequence) {
      return Status::Corruption("manifest", "range tombstone " + std::to_string(t.sequence) + " malformed");
    }
  }
  if (!manifest.range_tombstones.empty()) {
    state->version->range_tombstones = std::make_shared<const RangeTombstoneSet>(ucmp_, manifest.range_tombstones);
  }
  // Checked before anything is swept or freed on the word of this manifest.
  SortDeeperLevels(state->version.get());
  Status s = CheckLevelShape(*state->version, ucmp_);
  return s.ok() ? s : Status::Corruption("manifest", s.ToString());
}

Status DBImpl::KeepSetAsideTables(RecoveryState* state, bool move) {
  set_aside_.clear();
  if (state->set_aside.empty()) return Status::OK();
  FileSystem* fs = tables_->fs();
  const std::string lost = name_ + "/lost";
  if (move) {
    Status s = fs->CreateDirIfMissing(lost);
    if (!s.ok()) return s;
  }
  for (const auto& [entry, why] : state->set_aside) {
    std::string kept = "not moved (read-only open)";
    if (entry.residence == Residence::kSsd) {
      const std::string path = TableFileName(name_, entry.number);
      const std::string to = lost + path.substr(path.find_last_of('/'));
      if (!fs->FileExists(path)) {
        kept = "no file";
      } else if (move) {
        Status s = fs->RenameFile(path, to);
        if (!s.ok()) return s;
        kept = to;
      }
    } else if (move) {
      // Its readable bytes; pages that fault are left as zeros. The object
      // itself stays referenced until the recovery commit drops it, and is
      // freed by the next open.
      const char* data = pool()->Direct(entry.offset);
      const uint64_t size = data != nullptr ? std::min(entry.size, pool()->ObjectSize(entry.offset)) : 0;
      std::string bytes(size, '\0');
      for (uint64_t at = 0; at < size; at += 4096) {
        const uint64_t n = std::min<uint64_t>(4096, size - at);
        if (!GuardedCopy(bytes.data() + at, data + at, n)) std::fill_n(bytes.data() + at, n, '\0');
      }
      kept = lost + "/" + std::to_string(entry.number) + ".block";
      std::unique_ptr<WritableFile> file;
      Status s = fs->NewWritableFile(kept, &file);
      if (s.ok()) s = file->Append(bytes);
      if (s.ok()) s = file->Sync();
      if (s.ok()) s = file->Close();
      if (!s.ok()) return s;
    }
    const std::string line = "L" + std::to_string(entry.level) + " " +
                             (entry.residence == Residence::kSsd ? "SSD table " : "pmem block ") +
                             std::to_string(entry.number) + ": " + why.ToString() + "; kept: " + kept;
    Log(info_log_, "Set aside (best_efforts_recovery): %s", line.c_str());
    set_aside_ += line + "\n";
  }
  return move ? fs->SyncDir(lost) : Status::OK();
}

void DBImpl::SweepOrphanFiles(RecoveryState* state) {
  // Table and log files the manifest does not reference: outputs of a
  // compaction a crash interrupted before its commit, logs a commit
  // dropped.
  std::vector<std::string> children;
  if (!tables_->fs()->GetChildren(name_, &children).ok()) return;
  for (const std::string& child : children) {
    FileType type;
    uint64_t number = 0;
    if (!ParseFileName(child, &type, &number)) continue;
    const bool stale_table = type == FileType::kTable && state->live_tables.count(number) == 0;
    const bool stale_log = disk_mode() && type == FileType::kLog && state->live_logs.count(number) == 0;
    // Only numbers the manifest proves this database handed out: a file
    // numbered at or past next_number is no file of its history (an
    // uncommitted output's number is handed out again, and the file
    // rewritten, or swept once a later commit passes it).
    if ((stale_table || stale_log) && number < state->manifest.next_number) {
      // A log a commit dropped whose move into the archive a crash undid.
      // (Not when the archive has the log: recovery wrote its replayed
      // records there, and the raw file may hold damage they skipped.)
      if (stale_log && archive_->archiving() && !archive_->Has(number) &&
          archive_->AddFile(number, name_ + "/" + child).ok()) {
        continue;
      }
      (void)tables_->fs()->RemoveFile(name_ + "/" + child);
    }
  }
}

Status DBImpl::ReplayWal(RecoveryState* state) {
  // The WAL segments, oldest first, into one memtable. Damage is handled as
  // options_.wal_recovery_mode says (docs/durability.md); no mode but
  // kSkipAnyCorruptedRecords replays a log over a hole in an older one.
  const std::vector<WalSegmentMeta>& wals = state->manifest.wal_segments;
  // A read-only open beside a writer may meet the live log's half-written
  // last record: in every mode it ends the log there, as a torn tail.
  const WalRecoveryMode wal_mode =
      read_only_ && options_.wal_recovery_mode == WalRecoveryMode::kAbsoluteConsistency
          ? WalRecoveryMode::kTolerateCorruptedTailRecords
          : options_.wal_recovery_mode;
  const WalDamage on_damage =
      wal_mode == WalRecoveryMode::kSkipAnyCorruptedRecords ? WalDamage::kSkip : WalDamage::kStop;
  const size_t wal_count = wals.size();
  size_t history_end = wal_count;  // point-in-time: logs from here on are not replayed
  uint64_t replayed_records = 0;
  std::string tolerated;  // damage the mode let pass, for jigsaw.wal-recovery
  SequenceNumber last_sequence = versions_->last_sequence();
  const bool archive = archive_->archiving() && !read_only_;
  if (archive) state->replayed_records.resize(wal_count);
  state->wal_ends.assign(wal_count, kWalHeaderSize);
  size_t replaying = 0;  // the log being replayed
  auto replay = [&](const Slice& record) {
    if (archive) AppendWalRecord(wals[replaying].number, record, &state->replayed_records[replaying]);
    WriteBatch batch;
    Status r = WriteBatchInternal::SetContents(&batch, record);
    if (r.ok()) r = WriteBatchInternal::InsertInto(batch, state->recovered.get());
    if (r.ok()) {
      const SequenceNumber last = WriteBatchInternal::Sequence(batch) + WriteBatchInternal::Count(batch) - 1;
      last_sequence = std::max(last_sequence, last);
    }
    return r;
  };
  for (size_t i = 0; i < wal_count; ++i) {
    const WalSegmentMeta& w = wals[i];
    state->live_objects.insert(w.offset);
    state->old_wal_segments.push_back(w.offset);
    if (i >= history_end) continue;
    replaying = i;
    WalReadResult read;
    std::string log_name = "WAL segment " + std::to_string(w.number);
    Status s;
    if (disk_mode()) {
      const std::string path = LogFileName(name_, w.number);
      log_name = "WAL " + std::to_string(w.number) + " (" + path + ")";
      // A read-only open reads the newest log while its writer may append.
      const bool live = read_only_ && i + 1 == wal_count;
      s = ReadWalFile(tables_->fs(), path, w.number, on_damage, replay, &read, live);
    } else {
      // Guarded (util/guarded_read.h): a media error in the segment stops
      // the open with a Corruption naming it, never a SIGBUS. An abandoned
      // replay leaks what its record in flight had allocated.
      const char* segment = pool()->Direct(w.offset);
      const uint64_t capacity = std::min(w.capacity, pool()->ObjectSize(w.offset));
      if (!GuardedRead([&] { s = ReadWalSegment(segment, capacity, w.number, on_damage, replay, &read); })) {
        return Status::Corruption(log_name, "unreadable pool memory at " + DescribeUnreadable(segment, capacity));
      }
    }
    if (!s.ok()) return s;
    state->wal_ends[i] = read.end;
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
      state->replay_stopped_early = true;
      tolerated += "; replay stopped there, dropping the rest of this log and " +
                   std::to_string(wal_count - 1 - i) + " newer log(s)";
    }
  }
  versions_->SetLastSequence(last_sequence);
  wal_recovery_ = std::to_string(wal_count) + " log(s), " + std::to_string(replayed_records) + " record(s) replayed";
  wal_recovery_ += tolerated.empty() ? "; no damage" : "; damage tolerated:\n" + tolerated;
  return Status::OK();
}

void DBImpl::ArchiveReplayedLogs(const RecoveryState& state) {
  // Before the commit that frees or drops them; written from the records
  // replayed, so that a log's damage does not go into the archive.
  for (size_t i = 0; i < state.replayed_records.size(); ++i) {
    const WalSegmentMeta& w = state.manifest.wal_segments[i];
    const std::string& records = state.replayed_records[i];
    if (records.empty()) continue;
    Status s = archive_->AddRecords(w.number, records.data(), records.size());
    if (!s.ok()) Log(info_log_, "Log %llu not archived: %s", static_cast<unsigned long long>(w.number), s.ToString().c_str());
  }
  Status s = archive_->Purge();
  if (!s.ok()) Log(info_log_, "Archived logs not removed: %s", s.ToString().c_str());
}

void DBImpl::FreeUnreferencedObjects(const RecoveryState& state) {
  // Leftovers of a crash between a commit and the frees that follow it.
  if (pool() == nullptr) return;
  for (auto type : {pmem::ObjectType::kBlock, pmem::ObjectType::kWalSegment, pmem::ObjectType::kManifest}) {
    for (uint64_t offset : pool()->Objects(type)) {
      if (state.live_objects.count(offset) == 0) pool()->Free(offset);
    }
  }
}

Status DBImpl::CommitRecovery(RecoveryState* state) {
  // Recovered writes go to a fresh L0 table; the old segments are freed in
  // the same commit that starts a new, empty segment. If the pool is too full
  // for that, the recovered memtable stays frozen on its old segments (reads
  // work; writes get NoSpace until the background flush finds room).
  std::vector<pmem::Reservation*> reservations;
  pmem::Reservation table_reservation;
  pmem::Reservation wal_reservation;
  TableRef table;
  Status s;
  std::optional<PhaseProfile> profile;
  if (state->recovered->num_entries() > 0) s = FlushMemTable(*state->recovered, &table, &table_reservation, &profile);
  if (s.ok() && profile.has_value()) AddProfile(*profile);
  if (s.ok()) ArchiveReplayedLogs(*state);
  if (s.ok()) s = NewWalSegment(0, &wal_reservation, &mem_wal_, /*may_use_standby=*/true, &wal_);
  if (s.ok()) {
    VersionEdit edit;
    if (table != nullptr) {
      edit.Add(0, table);
      if (table_reservation.action != nullptr) reservations.push_back(&table_reservation);
    }
    AddRangeTombstones(*state->recovered, &edit);
    if (wal_reservation.action != nullptr) reservations.push_back(&wal_reservation);
    CommitSlot slot(this);
    s = Commit(ApplyEdit(*versions_->current(), edit, ucmp_), nullptr, reservations, state->old_wal_segments,
               /*may_use_standby=*/true, CommitIo::kHoldMutex);
  }
  const std::vector<WalSegmentMeta>& state_wals = state->manifest.wal_segments;
  if (s.ok()) {
    state->discarded.clear();  // shadows and redone outputs: the new manifest no longer names them, release them
    if (disk_mode() && archive_->archiving()) {
      for (const WalSegmentMeta& w : state_wals) (void)tables_->fs()->RemoveFile(LogFileName(name_, w.number));
    } else if (disk_mode()) {
      DeleteLogs(state_wals);
    }
  } else if (!state->manifest.pending.empty() || disk_mode()) {
    if (table != nullptr && table->residence == Residence::kSsd) table->obsolete = true;
    return s;  // resolved compactions must be committed before the database is used
  }
  if (!s.ok()) {
    wal_.reset();
    table.reset();
    if (table_reservation.action != nullptr) pool()->Cancel(&table_reservation);
    if (wal_reservation.action != nullptr) pool()->Cancel(&wal_reservation);
    if (!s.IsNoSpace() || !state->manifest_exists) return s;
    if (state->replay_stopped_early) {
      return Status::NoSpace(s.message(), "the WAL replay stopped at damage (kPointInTimeRecovery) and the "
                                          "recovered state cannot be committed in a full pool (opening it on "
                                          "would lose later writes at the next open)");
    }
    if (!state->recovered->empty() || !state_wals.empty()) {
      // Archived already (ArchiveReplayedLogs), from their intact records.
      imm_.push_back({state->recovered, state_wals, state->wal_ends, archive_->archiving()});
    }
    has_imm_ = !imm_.empty();
    pool_full_ = true;
  }
  if (pool() != nullptr) {
    // Standby space: room for the largest compaction (L1 plus a stopped L0)
    // and a memtable switch, between 1/8 and 1/4 of the pool (the sizing
    // rule counts the same, pmem/pool_sizing.h).
    tables_->space()->StartStandby(static_cast<size_t>(StandbyBytes(options_, pool()->pool_size()) / kPoolChunk));
  }
  return Status::OK();
}

void DBImpl::StartBackgroundThreads() {
  const int node = options_.numa_node >= 0 ? options_.numa_node
                   : disk_mode()            ? -1
                                            : pmem::NumaNodeForPath(PoolPathFor(options_, name_));
  // The threads wait for mutex_ until Recover returns.
  bg_thread_ = std::thread([this, node] {
    if (pmem::BindThreadToNode(node)) numa_node_ = node;
    BackgroundLoop();
  });
  tracker_thread_ = std::thread([this] { TrackerLoop(); });
}

}  // namespace jigsaw
