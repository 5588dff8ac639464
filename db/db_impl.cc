#include "db/db_impl.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>

#include "util/coding.h"
#include "format/keyset_block.h"
#include "ssd/table.h"
#include "pmem/device.h"
#include "db/db_identity.h"
#include "db/filename.h"
#include "db/db_iter.h"
#include "db/level_iterator.h"
#include "db/persist_bug.h"
#include "db/pool_sizing.h"
#include "util/profile_clock.h"
#include "db/write_batch_internal.h"
#include "table/iterator_wrappers.h"
#include "table/merging_iterator.h"

namespace jigsaw {

Snapshot::~Snapshot() = default;
DB::~DB() = default;

namespace {

// True on a DB's background thread (flushes and automatic compactions).
thread_local bool t_background_thread = false;

class SnapshotImpl final : public Snapshot {
 public:
  explicit SnapshotImpl(SequenceNumber sequence) : sequence(sequence) {}
  ~SnapshotImpl() override = default;
  const SequenceNumber sequence;
};

uint64_t MaxBytesForLevel(const Options& o, int level) {
  uint64_t bytes = o.level1_size;
  for (int l = 1; l < level; ++l) bytes *= static_cast<uint64_t>(o.level_size_multiplier);
  return bytes;
}

}  // namespace

void DBImpl::Disposer::Dispose(const TableMeta& block) {
  if (block.residence == Residence::kPmem) {
    db_->pool_->Free(block.offset);
  } else {
    const auto* table = static_cast<const ssd::SsdTable*>(block.table.get());
    db_->block_cache_->EraseTable(block.number, table != nullptr ? table->num_blocks() : 0);
    (void)db_->fs_->RemoveFile(db_->TablePath(block.number));  // a leftover is collected at the next open
  }
}

std::string DBImpl::LogPath(uint64_t number) const { return LogFileName(name_, number); }

void DBImpl::DeleteLogs(const std::vector<WalSegmentMeta>& logs) {
  for (const WalSegmentMeta& w : logs) (void)fs_->RemoveFile(LogPath(w.number));  // leftovers: collected at open
}

Status DBImpl::BuildTableFromMemTable(const MemTable& mem, TableRef* block) {
  uint64_t number;
  {
    std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
    if (!recovering_) lock.lock();  // during recovery there is no other thread
    number = next_number_++;
  }
  BlockBuilderOptions build_options;
  build_options.comparator = ucmp_;
  build_options.bloom_bits_per_key = options_.bloom_bits_per_key;
  std::unique_ptr<WritableFile> file;
  Status s = fs_->NewTableFile(TablePath(number), async_table_writes_, &file);
  if (!s.ok()) return s;
  SampledPhase encode;  // declared before the builder that points at it
  ssd::TableBuilder builder(build_options, options_.ssd_block_size, file.get(), TableBlockFormat());
  const bool profiling = options_.profile_compactions;
  if (profiling) builder.set_profile(&encode);
  const uint64_t start_ns = profiling ? SteadyNanos() : 0;
  auto it = mem.NewIterator();
  for (it->SeekToFirst(); it->Valid() && s.ok(); it->Next()) {
    s = builder.Add(it->user_key(), it->sequence(), it->type(), it->value(), it->key_hash());
  }
  ssd::TableInfo info;
  if (s.ok()) s = builder.Finish(&info);
  const uint64_t built_ns = profiling ? SteadyNanos() : 0;
  // L0 is made durable inline (with its directory entry) before the commit
  // that drops the WAL holding the same writes.
  if (s.ok()) s = file->Sync();
  if (s.ok()) s = file->Close();
  if (s.ok()) s = fs_->SyncDir(name_);
  {
    std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
    if (!recovering_) lock.lock();
    syncs_ += 2;
    bytes_synced_ += info.file_size;
    if (profiling && s.ok()) {
      // A flush: building the table is the encode (nothing is decoded),
      // its appends the write, the inline syncs the sync; walking the
      // memtable and the table's bookkeeping are the "merge".
      PhaseProfile profile;
      profile.start_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - opened_at_).count();
      profile.level = -1;
      profile.to_ssd = true;
      profile.write_ns = builder.write_nanos();
      profile.encode_ns = encode.EstimatedNanos();
      profile.sync_ns = SteadyNanos() - built_ns;
      profile.instrumentation_ns = encode.InstrumentationNanos();
      const uint64_t wall_ns = SteadyNanos() - start_ns;
      const uint64_t accounted = profile.write_ns + profile.encode_ns + profile.sync_ns;
      profile.total_ns = std::max(wall_ns - std::min(wall_ns, profile.instrumentation_ns), accounted);
      profile.merge_ns = profile.total_ns - accounted;
      profile.bytes_in = mem.ApproximateMemoryUsage();
      profile.entries = builder.num_entries();
      profile.bytes_out = info.file_size;
      AddProfile(profile);
    }
  }
  if (s.ok()) s = OpenSsdTable(number, 0, block);
  if (!s.ok()) (void)fs_->RemoveFile(TablePath(number));
  return s;
}

std::string DBImpl::TablePath(uint64_t number) const { return TableFileName(name_, number); }

Status DBImpl::OpenSsdTable(uint64_t number, int level, TableRef* block) {
  const std::string path = TablePath(number);
  std::unique_ptr<RandomAccessFile> file;
  Status s = fs_->NewRandomAccessFile(path, &file);
  if (!s.ok()) return s.IsNotFound() ? Status::Corruption("table " + path, "missing") : s;
  ssd::SsdTableOptions table_options;
  table_options.comparator = ucmp_;
  table_options.cache = block_cache_.get();
  table_options.use_mmap = options_.ssd_use_mmap;
  table_options.verify_checksums = options_.paranoid_checks;
  table_options.io = io_.get();
  table_options.time_reads = options_.profile_compactions;
  std::unique_ptr<ssd::SsdTable> table;
  s = ssd::SsdTable::Open(table_options, std::move(file), number, path, &table);
  if (!s.ok()) return s;
  if (table->num_entries() == 0) return Status::Corruption("table " + path, "empty");
  const std::string smallest = table->smallest(), largest = table->largest();
  const uint64_t entries = table->num_entries(), size = table->file_size();
  *block = MakeSsdTable(number, size, level, std::move(table), smallest, largest, entries);
  (*block)->disposer = &disposer_;
  return Status::OK();
}

bool DBImpl::OutputToSsd(const Version& version, int output_level, uint64_t bytes) const {
  if (disk_mode()) return true;
  if (options_.storage_mode != StorageMode::kHybrid) return false;
  // A pool that ran out of room for a compaction spills to SSD whatever the
  // budget says: the SSD tier is the way out of a full pool.
  if (pool_full_) return true;
  // The budget, but never more than the pool holds for blocks: its heap less
  // the standby and the WAL segments of every memtable (docs/sizing.md).
  const uint64_t pool_size = pool_->pool_size();
  const uint64_t wal_chunks = (1 + static_cast<uint64_t>(options_.max_immutable_memtables)) *
                              ObjectChunks(WalSegmentCapacity(options_.memtable_size));
  const uint64_t reserved_chunks = StandbyBytes(options_, pool_size) / kPoolChunk + wal_chunks + 2;
  const uint64_t heap_chunks = PoolHeapChunks(pool_size);
  const uint64_t room = heap_chunks > reserved_chunks ? (heap_chunks - reserved_chunks) * kPoolChunk : 0;
  const uint64_t budget = std::min(options_.pmem_budget != 0 ? options_.pmem_budget : pool_size / 2, room);
  // A level stays in pmem only if it and every level above fit the budget
  // at their target sizes, and the output fits what is left of it now
  // (counted in the pool chunks blocks occupy).
  uint64_t capacity = static_cast<uint64_t>(options_.level0_stop_trigger) * options_.memtable_size;
  for (int l = 1; l <= output_level; ++l) capacity += MaxBytesForLevel(options_, l);
  if (capacity > budget) return true;
  uint64_t pmem_bytes = 0;
  for (const auto& level : version.levels) {
    for (const TableRef& b : level) {
      if (b->residence == Residence::kPmem) pmem_bytes += ObjectChunks(b->size) * kPoolChunk;
    }
  }
  return pmem_bytes + bytes + kPoolChunk > budget;
}

int64_t DBImpl::AddProfile(const PhaseProfile& profile) {
  profiles_.push_back(profile);
  return static_cast<int64_t>(profiles_.size()) - 1;
}

void DBImpl::TrackerLoop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    while (pending_.empty() && !tracker_stop_) tracker_cv_.wait(lock);
    if (pending_.empty()) return;  // stopping, and everything is durable
    std::vector<std::unique_ptr<WritableFile>> files = std::move(pending_.front().files);
    const int64_t profile = pending_.front().profile;
    lock.unlock();
    const uint64_t sync_start = profile >= 0 ? SteadyNanos() : 0;
    Status s;
    uint64_t syncs = 0, bytes = 0;
    for (auto& f : files) {
      if (!s.ok()) break;
      s = f->Sync();
      ++syncs;
      bytes += f->Size();
    }
    if (s.ok()) {
      s = fs_->SyncDir(name_);  // the new files' directory entries
      ++syncs;
    }
    lock.lock();
    syncs_ += syncs;
    bytes_synced_ += bytes;
    if (profile >= 0) profiles_[static_cast<size_t>(profile)].sync_ns += SteadyNanos() - sync_start;
    if (!s.ok()) {
      if (s.IsNoSpace() && !tracker_stop_) {
        // A full device: keep the outputs pending (their files stay open)
        // and retry; writers see NoSpace meanwhile.
        pending_.front().files = std::move(files);
        pool_full_ = true;
        space_error_ = s;
        done_cv_.notify_all();
        tracker_cv_.wait_for(lock, std::chrono::milliseconds(100));
        continue;
      }
      if (bg_error_.ok()) bg_error_ = s;
      done_cv_.notify_all();
      return;  // the outputs stay pending; recovery redoes them from the shadows
    }
    for (auto& f : files) (void)f->Close();  // synced: a close error loses nothing
    PendingCompaction done = std::move(pending_.front());
    pending_.pop_front();
    s = CommitManifest(*version_, {}, {}, /*may_use_standby=*/true);
    if (s.ok()) {
      for (const TableRef& b : done.shadows) b->obsolete.store(true, std::memory_order_release);
    } else {
      // The record on media still lists the compaction as pending: keep it
      // (and its shadows) and retry the commit; at shutdown recovery
      // finishes it.
      pending_.push_front(std::move(done));
      done_cv_.notify_all();
      if (tracker_stop_) return;
      tracker_cv_.wait_for(lock, std::chrono::milliseconds(100));
      continue;
    }
    done_cv_.notify_all();
  }
}

std::shared_ptr<MemTable> DBImpl::NewMemTable() const {
  // Arena chunks of 1/16 of the memtable size keep the usage estimate close.
  // The whole-key filter gets 1/64 of it: ~20 bits per key for 16-byte keys
  // and 100-byte values (entry + value ~170 bytes of arena).
  return std::make_shared<MemTable>(ucmp_, std::clamp<size_t>(options_.memtable_size / 16, 4096, 1 << 20),
                                    options_.memtable_size / 64);
}

// ---------------------------------------------------------------------------
// Manifest and WAL segments

std::vector<WalSegmentMeta> DBImpl::LiveWalSegments() const {
  std::vector<WalSegmentMeta> segments;
  for (const Immutable& imm : imm_) segments.insert(segments.end(), imm.wals.begin(), imm.wals.end());
  if (wal_ != nullptr) segments.push_back(mem_wal_);
  return segments;
}

Status DBImpl::ReserveObject(pmem::ObjectType type, uint64_t size, bool zero, pmem::Reservation* reservation,
                             bool may_use_standby) {
  std::lock_guard<std::mutex> lock(standby_mutex_);
  if (!may_use_standby && standby_.size() < standby_chunks_) {
    // Space freed since the last refill (a compaction's inputs, released
    // by their last reader) goes back to the standby first; a write is
    // refused only while the pool really lacks it.
    RefillStandbyLocked();
    if (standby_.size() < standby_chunks_) {
      return PoolFullStatus("writes that need new pool space wait until the space held back is complete again",
                            standby_.size());
    }
  }
  Status s = pool_->Reserve(type, size, zero, reservation);
  // Release only as many standby chunks as this object needs, so that the
  // rest stays for the flushes and compaction steps that follow.
  uint64_t release = ObjectChunks(size);
  while (s.IsNoSpace() && may_use_standby && !standby_.empty()) {
    for (; release > 0 && !standby_.empty(); --release) {
      pool_->Cancel(&standby_.back());
      standby_.pop_back();
    }
    s = pool_->Reserve(type, size, zero, reservation);
    release = 1;  // fragmentation: free one more chunk per retry
  }
  if (s.IsNoSpace()) {
    const char* what = type == pmem::ObjectType::kBlock        ? "block"
                       : type == pmem::ObjectType::kWalSegment ? "WAL segment"
                                                               : "manifest";
    return PoolFullStatus("no room for a " + FormatBytes(ObjectChunks(size) * kPoolChunk) + " " + what,
                          standby_.size());
  }
  return s;
}

Status DBImpl::PoolFullStatus(const std::string& detail, size_t held_chunks) const {
  return Status::NoSpace("pmem pool full", detail + "; " + FormatBytes(pool_->pool_size()) + " pool (" +
                                               FormatBytes(PoolHeapChunks(pool_->pool_size()) * kPoolChunk) +
                                               " for objects), " +
                                               FormatBytes(pool_->used_bytes()) + " in use, " +
                                               FormatBytes(held_chunks * kPoolChunk) +
                                               " held back for flush and compaction; see docs/sizing.md");
}

Status DBImpl::PoolFullStatus(const std::string& detail) {
  if (pool_ == nullptr) return Status::NoSpace(detail);  // disk-only mode: the file system's NoSpace says more
  std::lock_guard<std::mutex> lock(standby_mutex_);
  return PoolFullStatus(detail, standby_.size());
}

size_t DBImpl::StandbyHeld() {
  std::lock_guard<std::mutex> lock(standby_mutex_);
  return standby_.size();
}

std::string DBImpl::StandbyState() {
  std::lock_guard<std::mutex> lock(standby_mutex_);
  return std::to_string(standby_.size()) + "/" + std::to_string(standby_chunks_);
}

void DBImpl::RefillStandby() {
  if (pool_ == nullptr) return;
  std::lock_guard<std::mutex> lock(standby_mutex_);
  RefillStandbyLocked();
}

void DBImpl::RefillStandbyLocked() {
  while (standby_.size() < standby_chunks_) {
    pmem::Reservation chunk;
    if (!pool_->Reserve(pmem::ObjectType::kBlock, kPoolChunk - kPoolChunkHeader, /*zero=*/false, &chunk).ok()) return;
    standby_.push_back(std::move(chunk));
  }
}

Status DBImpl::NewWalSegment(size_t min_payload, pmem::Reservation* reservation, WalSegmentMeta* meta,
                             bool may_use_standby, std::unique_ptr<LogWriter>* writer) {
  if (disk_mode()) {
    meta->offset = 0;
    meta->capacity = 0;
    meta->number = next_number_++;
    std::unique_ptr<FileWalWriter> file;
    Status s = FileWalWriter::Create(fs_, LogPath(meta->number), meta->number, &file);
    if (!s.ok()) return s;
    *writer = std::move(file);
    return Status::OK();
  }
  // 1.5 x memtable_size, trimmed to its pool chunks (src/pool_sizing.h), or
  // what the first record needs.
  uint64_t capacity = std::max<uint64_t>(WalSegmentCapacity(options_.memtable_size),
                                         (kWalHeaderSize + WalRecordSize(min_payload) + 4095) & ~uint64_t{4095});
  Status s = ReserveObject(pmem::ObjectType::kWalSegment, capacity, /*zero=*/true, reservation, may_use_standby);
  if (!s.ok()) return s;
  meta->offset = reservation->offset;
  meta->capacity = capacity;
  meta->number = next_number_++;
  WalWriter::Format(pool_->region(), reservation->data, capacity, meta->number);
  *writer = std::make_unique<WalWriter>(pool_->region(), reservation->data, capacity, meta->number);
  return Status::OK();
}

Status DBImpl::CommitManifest(const Version& version, std::vector<pmem::Reservation*> reservations,
                              std::vector<uint64_t> frees, bool may_use_standby) {
  ManifestState state;
  state.generation = manifest_generation_ + 1;
  state.last_sequence = last_sequence_;
  state.next_number = next_number_;
  state.wal_segments = LiveWalSegments();
  for (int level = 0; level < kNumLevels; ++level) {
    for (const TableRef& b : version.levels[level]) {
      state.blocks.push_back({b->offset, b->size, b->number, level, b->residence});
    }
  }
  for (const PendingCompaction& p : pending_) {
    ManifestState::PendingCompaction entry;
    entry.output_level = p.output_level;
    for (const TableRef& b : p.outputs) entry.outputs.push_back(b->number);
    for (const TableRef& b : p.shadows) entry.shadows.push_back({b->offset, b->size, b->number, b->level, b->residence});
    state.pending.push_back(std::move(entry));
  }
  if (disk_mode()) {
    Status s = WriteManifestFile(state);
    if (!s.ok()) return s;
    manifest_generation_ = state.generation;
    return Status::OK();
  }
  const uint64_t size = ManifestSize(state);
  pmem::Reservation manifest;
  Status s = ReserveObject(pmem::ObjectType::kManifest, size, /*zero=*/false, &manifest, may_use_standby);
  if (!s.ok()) return s;
  EncodeManifest(state, manifest.data);
  if (!JIGSAW_PERSIST_BUG(kManifestAfterCommit)) pool_->region()->Persist(manifest.data, size);
  if (manifest_offset_ != 0) frees.push_back(manifest_offset_);
  reservations.push_back(&manifest);
  s = pool_->Commit(reservations, manifest.offset, frees);
  if (JIGSAW_PERSIST_BUG(kManifestAfterCommit)) pool_->region()->Persist(manifest.data, size);
  if (!s.ok()) {
    pool_->Cancel(&manifest);
    return s.IsNoSpace() ? PoolFullStatus("no room for the redo log of a commit") : s;
  }
  manifest_offset_ = manifest.offset;
  manifest_generation_ = state.generation;
  return Status::OK();
}

// ---------------------------------------------------------------------------
// Writes

Status DBImpl::Put(const WriteOptions& options, const Slice& key, const Slice& value) {
  WriteBatch batch;
  batch.Put(key, value);
  return Write(options, &batch);
}

Status DBImpl::Delete(const WriteOptions& options, const Slice& key) {
  WriteBatch batch;
  batch.Delete(key);
  return Write(options, &batch);
}

Status DBImpl::Write(const WriteOptions& options, WriteBatch* batch) {
  if (batch == nullptr) return Status::InvalidArgument("write batch is null");
  bool deletes_only = false;
  Status s = WriteBatchInternal::CheckLimits(*batch, &deletes_only);
  if (!s.ok()) return s;
  const uint32_t count = WriteBatchInternal::Count(*batch);
  if (count == 0) return Status::OK();
  std::unique_lock<std::mutex> lock(mutex_);
  s = MakeRoomForWrite(lock, WriteBatchInternal::Contents(*batch).size(), deletes_only);
  if (!s.ok()) return s;
  WriteBatchInternal::SetSequence(batch, last_sequence_ + 1);
  s = wal_->Append(WriteBatchInternal::Contents(*batch), options.sync);
  if (!s.ok()) {
    bg_error_ = s;  // the log may hold a torn record: no later write may follow it
    return s;
  }
  s = WriteBatchInternal::InsertInto(*batch, mem_.get());
  if (!s.ok()) return s;
  // Readers pin last_sequence_: the batch becomes visible all at once.
  last_sequence_ += count;
  return Status::OK();
}

Status DBImpl::MakeRoomForWrite(std::unique_lock<std::mutex>& lock, size_t payload, bool deletes_only) {
  bool allow_delay = true;
  for (;;) {
    if (!bg_error_.ok()) return bg_error_;
    // A full pool (or disk): compaction has failed for want of room, or
    // the standby is no longer complete.
    const bool pool_tight = pool_full_ || (pool_ != nullptr && deletes_only && StandbyHeld() < standby_chunks_);
    if (deletes_only && pool_full_ && pool_ == nullptr && wal_ != nullptr && wal_->HasRoom(payload)) {
      // Disk-only mode: the log file takes deletes past the memtable limit.
      // (In a pool they would make the memtable's L0 block bigger than the
      // standby counts on; deletes switch memtables on the standby instead.)
      return Status::OK();
    }
    const size_t l0 = version_->levels[0].size();
    if (allow_delay && l0 >= static_cast<size_t>(options_.level0_slowdown_trigger) && !(deletes_only && pool_tight)) {
      // Give compaction a millisecond per write rather than stopping later.
      ++slowdowns_;
      lock.unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      lock.lock();
      stall_micros_ += 1000;
      allow_delay = false;
      continue;
    }
    if (wal_ != nullptr && (mem_->num_entries() == 0 || mem_->ApproximateMemoryUsage() < options_.memtable_size) &&
        wal_->HasRoom(payload)) {
      return Status::OK();
    }
    const bool imm_full = imm_.size() >= static_cast<size_t>(options_.max_immutable_memtables);
    // Deletes pass a stopped L0 in a full pool (and are not slowed down
    // above): its compaction cannot run, and deleting (then CompactRange)
    // is how the pool is emptied.
    const bool l0_stopped = l0 >= static_cast<size_t>(options_.level0_stop_trigger) && !(deletes_only && pool_tight);
    if (imm_full || l0_stopped) {
      // Wait, unless what the write waits for has failed for want of room:
      // the flush of the frozen memtables, or the compaction of L0. In a
      // full pool, writes give up at once -- except deletes in pmem-only
      // mode, whose flush may use the standby and runs next on the
      // background thread (in hybrid mode that thread may be held up by a
      // pending compaction whose syncs hit a full device).
      const bool flush_waits_for_room =
          flush_failed_ || (pool_full_ && !(deletes_only && options_.storage_mode == StorageMode::kPmem));
      if (imm_full && flush_waits_for_room) {
        const std::string what = "the memtables are full and their flush found no room";
        // The flush's own failure, or the one that filled the pool (or disk).
        return flush_failed_ || space_error_.ok() ? PoolFullStatus(what)
                                                  : Status::NoSpace(what, space_error_.message());
      }
      if (!imm_full && pool_full_) {
        const std::string what = "L0 is full and its compaction found no room";
        return space_error_.ok() ? PoolFullStatus(what) : Status::NoSpace(what, space_error_.message());
      }
      ++stops_;
      const auto start = std::chrono::steady_clock::now();
      done_cv_.wait_for(lock, std::chrono::milliseconds(100));
      stall_micros_ += static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
      continue;
    }
    if (deletes_only && pool_ != nullptr &&
        StandbyHeld() < std::min<uint64_t>(standby_chunks_,
                                           CompactRangeReserveChunks(options_) + DeleteCycleChunks(options_))) {
      // Each memtable of deletes becomes an L0 block taken from the standby;
      // what CompactRange needs to reclaim the deleted keys' space stays.
      return PoolFullStatus("deletes have used the space held back for them; CompactRange reclaims the space of "
                            "the deleted keys");
    }
    Status s = SwitchMemTable(payload, /*may_use_standby=*/deletes_only);
    if (!s.ok()) return s;
  }
}

Status DBImpl::SwitchMemTable(size_t payload, bool may_use_standby) {
  pmem::Reservation reservation;
  WalSegmentMeta meta;
  std::unique_ptr<LogWriter> writer;
  Status s = NewWalSegment(payload, &reservation, &meta, may_use_standby, &writer);
  if (!s.ok()) return s;
  const bool freeze = wal_ != nullptr;  // without a segment the memtable is empty
  if (freeze) {
    s = wal_->Sync();  // the frozen segment's unsynced records become durable
    if (!s.ok()) {
      bg_error_ = s;
      return s;
    }
    imm_.push_back({mem_, {mem_wal_}});
  }
  std::unique_ptr<LogWriter> previous_writer = std::move(wal_);
  const WalSegmentMeta previous = mem_wal_;
  mem_wal_ = meta;
  wal_ = std::move(writer);
  std::vector<pmem::Reservation*> publish;
  if (reservation.action != nullptr) publish.push_back(&reservation);
  s = CommitManifest(*version_, publish, {}, may_use_standby);
  if (!s.ok()) {
    wal_ = std::move(previous_writer);
    mem_wal_ = previous;
    if (freeze) imm_.pop_back();
    if (reservation.action != nullptr) pool_->Cancel(&reservation);
    if (disk_mode()) DeleteLogs({meta});
    return s;
  }
  if (freeze) mem_ = NewMemTable();
  has_imm_ = !imm_.empty();  // only now: a flush outside mutex_ may act on it
  bg_cv_.notify_one();
  return Status::OK();
}

// ---------------------------------------------------------------------------
// Reads

DBImpl::ReadView DBImpl::GetReadView(const ReadOptions& options) {
  std::lock_guard<std::mutex> lock(mutex_);
  ReadView view;
  view.mem = mem_;
  for (auto it = imm_.rbegin(); it != imm_.rend(); ++it) view.imm.push_back(it->mem);
  view.version = version_;
  view.sequence = options.snapshot != nullptr ? static_cast<const SnapshotImpl*>(options.snapshot)->sequence
                                              : last_sequence_;
  return view;
}

bool DBImpl::MemTablesGet(const ReadView& view, const Slice& key, std::string* value, Status* status) const {
  ValueType type;
  bool found = view.mem->Get(key, view.sequence, &type, value);
  for (size_t i = 0; !found && i < view.imm.size(); ++i) found = view.imm[i]->Get(key, view.sequence, &type, value);
  if (found) *status = type == ValueType::kValue ? Status::OK() : Status::NotFound(Slice());
  return found;
}

std::span<const TableRef> DBImpl::Candidates(std::span<const TableRef> run, const Slice& key) const {
  auto first = std::lower_bound(run.begin(), run.end(), key, [&](const TableRef& b, const Slice& k) {
    return ucmp_->Compare(b->largest, k) < 0;
  });
  auto last = first;
  while (last != run.end() && ucmp_->Compare((*last)->smallest, key) <= 0) ++last;
  return {first, last};
}

Status DBImpl::TableGet(const TableMeta& block, const Slice& key, SequenceNumber sequence, std::string* value,
                        bool* done) const {
  ValueType type;
  // The caller's ReadOptions do not reach here: Get and MultiGet leave
  // ReadOptions::verify_checksums to the tables' own setting.
  Status s = block.table->Get(ReadOptions(), key, sequence, &type, value);
  if (s.IsNotFound()) return Status::OK();
  *done = true;
  if (!s.ok()) return s;
  return type == ValueType::kValue ? Status::OK() : Status::NotFound(Slice());
}

Status DBImpl::Get(const ReadOptions& options, const Slice& key, std::string* value) {
  ReadView view = GetReadView(options);
  Status s;
  if (MemTablesGet(view, key, value, &s)) return s;
  bool done = false;
  const auto& level0 = view.version->levels[0];
  for (size_t i = 0; i < level0.size(); ++i) {  // newest first; they may overlap
    for (const TableRef& block : Candidates({&level0[i], 1}, key)) {
      s = TableGet(*block, key, view.sequence, value, &done);
      if (done) return s;
    }
  }
  for (int level = 1; level < kNumLevels; ++level) {
    for (const TableRef& block : Candidates(view.version->levels[level], key)) {
      s = TableGet(*block, key, view.sequence, value, &done);
      if (done) return s;
    }
  }
  return Status::NotFound(Slice());
}

std::vector<Status> DBImpl::MultiGet(const ReadOptions& options, const std::vector<Slice>& keys,
                                     std::vector<std::string>* values) {
  values->resize(keys.size());
  std::vector<Status> statuses(keys.size(), Status::NotFound(Slice()));
  ReadView view = GetReadView(options);
  std::vector<size_t> pending;  // keys not decided yet
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!MemTablesGet(view, keys[i], &(*values)[i], &statuses[i])) pending.push_back(i);
  }
  // Runs in the order a Get searches them: each L0 block, then each level.
  std::vector<std::span<const TableRef>> runs;
  for (const TableRef& block : view.version->levels[0]) runs.emplace_back(&block, 1);
  for (int level = 1; level < kNumLevels; ++level) runs.emplace_back(view.version->levels[level]);

  // Batching reads pays only where they run in parallel; with pread a Get
  // reads the same blocks one by one anyway.
  const bool batch_reads = io_->is_uring();
  std::vector<ssd::BlockFetch> fetches;
  std::vector<std::span<const TableRef>> candidates;  // per pending key
  std::vector<size_t> undecided;
  for (std::span<const TableRef> run : runs) {
    if (pending.empty()) break;
    if (run.empty()) continue;
    candidates.clear();
    for (size_t i : pending) candidates.push_back(Candidates(run, keys[i]));
    if (batch_reads) {  // one batch of reads for every SSD block this run's lookups need
      fetches.clear();
      for (size_t k = 0; k < pending.size(); ++k) {
        for (const TableRef& block : candidates[k]) {
          if (block->residence == Residence::kSsd) {
            static_cast<const ssd::SsdTable*>(block->table.get())->PlanGet(keys[pending[k]], &fetches);
          }
        }
      }
      ssd::FetchBlocks(io_.get(), std::move(fetches));
      fetches.clear();
    }
    undecided.clear();
    for (size_t k = 0; k < pending.size(); ++k) {
      const size_t i = pending[k];
      bool done = false;
      for (const TableRef& block : candidates[k]) {
        statuses[i] = TableGet(*block, keys[i], view.sequence, &(*values)[i], &done);
        if (done) break;
      }
      if (!done) {
        statuses[i] = Status::NotFound(Slice());
        undecided.push_back(i);
      }
    }
    pending.swap(undecided);
  }
  return statuses;
}

std::unique_ptr<Iterator> DBImpl::NewIterator(const ReadOptions& options) {
  ReadView view = GetReadView(options);
  std::vector<std::unique_ptr<InternalIterator>> children;
  std::vector<std::shared_ptr<const void>> pins;
  children.push_back(view.mem->NewIterator());
  pins.push_back(view.mem);
  for (const auto& imm : view.imm) {
    children.push_back(imm->NewIterator());
    pins.push_back(imm);
  }
  for (const TableRef& block : view.version->levels[0]) children.push_back(block->table->NewIterator(options));
  for (int level = 1; level < kNumLevels; ++level) {
    if (!view.version->levels[level].empty()) {
      children.push_back(NewLevelIterator(ucmp_, view.version->levels[level], options));
    }
  }
  pins.push_back(view.version);
  return NewDBIterator(ucmp_, NewMergingIterator(ucmp_, std::move(children)), view.sequence, std::move(pins));
}

const Snapshot* DBImpl::GetSnapshot() {
  std::lock_guard<std::mutex> lock(mutex_);
  snapshots_.insert(last_sequence_);
  return new SnapshotImpl(last_sequence_);
}

void DBImpl::ReleaseSnapshot(const Snapshot* snapshot) {
  if (snapshot == nullptr) return;
  const auto* impl = static_cast<const SnapshotImpl*>(snapshot);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = snapshots_.find(impl->sequence);
    if (it != snapshots_.end()) snapshots_.erase(it);
  }
  delete impl;
}

SequenceNumber DBImpl::SmallestSnapshot() const {
  return snapshots_.empty() ? last_sequence_ : *snapshots_.begin();
}

// ---------------------------------------------------------------------------
// Background work: flush and compaction

void DBImpl::BackgroundLoop() {
  t_background_thread = true;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!shutting_down_) {
    if (!bg_error_.ok()) {
      bg_cv_.wait(lock);
      continue;
    }
    if (!imm_.empty()) {
      lock.unlock();
      Status s = FlushOldestImmutable();
      lock.lock();
      if (s.IsNoSpace()) {
        pool_full_ = true;
        flush_failed_ = true;
        done_cv_.notify_all();
        // Compaction may free space; otherwise retry later.
      } else if (!s.ok()) {
        bg_error_ = s;
        done_cv_.notify_all();
        continue;
      } else {
        continue;
      }
    }
    CompactionJob job;
    if (!manual_compaction_ && PickCompaction(&job)) {
      compaction_running_ = true;
      lock.unlock();
      // Automatic compactions leave the standby alone: it is kept for
      // flushes and for CompactRange, which must work in a full pool.
      Status s = RunCompaction(&job, /*may_use_standby=*/false);
      job = CompactionJob();  // its inputs are freed now unless a reader holds them
      lock.lock();
      compaction_running_ = false;
      RefillStandby();
      if (s.IsNoSpace()) {
        pool_full_ = true;  // writers waiting for compaction get NoSpace
        space_error_ = s;
      } else if (!s.ok()) {
        bg_error_ = s;
      }
      done_cv_.notify_all();
      if (s.ok()) continue;
    }
    bg_cv_.wait_for(lock, std::chrono::milliseconds(pool_full_ ? 100 : 1000));
  }
}

Status DBImpl::BuildBlockFromMemTable(const MemTable& mem, int level, TableRef* block,
                                      pmem::Reservation* reservation) {
  // Size the block exactly, then copy the entries into it: keys and values
  // are copied, index fields become value offsets, links are recomputed.
  BlockBuilderOptions build_options;
  build_options.comparator = ucmp_;
  build_options.bloom_bits_per_key = options_.bloom_bits_per_key;
  auto it = mem.NewIterator();
  uint64_t entries = 0;
  uint64_t keyset_bytes = keyset::kHeadNodeSize;
  uint64_t value_bytes = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    keyset_bytes += keyset::EntrySize(keyset::BulkHeight(entries), it->user_key().size());
    value_bytes += it->value().size();
    ++entries;
  }
  const uint64_t size = keyset::BlockSizeFor(entries, value_bytes, keyset_bytes, build_options);
  uint64_t number;
  {
    std::unique_lock<std::mutex> lock(mutex_, std::defer_lock);
    if (!recovering_) lock.lock();  // during recovery there is no other thread
    number = next_number_++;
  }
  Status s = ReserveObject(pmem::ObjectType::kBlock, size, /*zero=*/false, reservation, /*may_use_standby=*/true);
  if (!s.ok()) return s;
  keyset::Builder builder(build_options, reservation->data, size);
  for (it->SeekToFirst(); it->Valid() && s.ok(); it->Next()) {
    s = builder.AddWithHash(it->user_key(), it->sequence(), it->type(), it->value(), it->key_hash());
  }
  size_t block_size = 0;
  if (s.ok()) s = builder.Finish(&block_size);
  if (s.ok()) {
    if (!JIGSAW_PERSIST_BUG(kDropFlushBlockPersist)) pool_->region()->Persist(reservation->data, block_size);
    s = OpenPmemTable(pool_.get(), ucmp_, number, reservation->offset, block_size, level, false, block);
    if (s.ok()) (*block)->disposer = &disposer_;
  }
  if (!s.ok()) pool_->Cancel(reservation);
  return s;
}

Status DBImpl::FlushImmutablesDuringCompaction(uint64_t* nanos) {
  if (!has_imm_.load(std::memory_order_acquire)) return Status::OK();
  const uint64_t start = SteadyNanos();
  Status result;
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      // Failures and their retries are BackgroundLoop's business.
      if (imm_.empty() || !bg_error_.ok() || flush_failed_ || shutting_down_) break;
    }
    Status s = FlushOldestImmutable();
    std::lock_guard<std::mutex> lock(mutex_);
    if (s.ok()) {
      ++flushes_within_compactions_;
      continue;
    }
    if (s.IsNoSpace()) {
      pool_full_ = true;  // the compaction goes on: it may free space
      flush_failed_ = true;
    } else {
      if (bg_error_.ok()) bg_error_ = s;
      result = s;  // the store stops: so does the compaction
    }
    done_cv_.notify_all();
    break;
  }
  *nanos += SteadyNanos() - start;
  return result;
}

Status DBImpl::FlushOldestImmutable() {
  Immutable imm;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (imm_.empty()) return Status::OK();
    imm = imm_.front();
  }
  TableRef block;
  pmem::Reservation reservation;
  if (imm.mem->num_entries() > 0) {
    Status s = disk_mode() ? BuildTableFromMemTable(*imm.mem, &block)
                           : BuildBlockFromMemTable(*imm.mem, 0, &block, &reservation);
    if (!s.ok()) return s;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  auto version = std::make_shared<Version>(*version_);
  std::vector<pmem::Reservation*> reservations;
  if (block != nullptr) {
    version->levels[0].insert(version->levels[0].begin(), block);
    if (reservation.action != nullptr) reservations.push_back(&reservation);
  }
  imm_.pop_front();
  has_imm_ = !imm_.empty();
  std::vector<uint64_t> frees;
  if (!disk_mode()) {
    for (const WalSegmentMeta& w : imm.wals) frees.push_back(w.offset);
  }
  Status s = CommitManifest(*version, reservations, frees, /*may_use_standby=*/true);
  if (!s.ok()) {
    imm_.push_front(imm);
    has_imm_ = true;
    if (reservation.action != nullptr) pool_->Cancel(&reservation);
    if (block != nullptr && block->residence == Residence::kSsd) block->obsolete = true;
    return s;
  }
  if (disk_mode()) DeleteLogs(imm.wals);
  version_ = std::move(version);
  ++flushes_;
  pool_full_ = false;
  space_error_ = Status::OK();
  flush_failed_ = false;
  done_cv_.notify_all();
  RefillStandby();
  return Status::OK();
}

bool DBImpl::PickCompaction(CompactionJob* job) {
  const Version& v = *version_;
  // Score each level: L0 by block count over its trigger, deeper levels by
  // bytes over their target; compact the highest score above 1. Scoring L0
  // like the others keeps L1 near its target, which bounds the size (and
  // the free space) an L0 compaction needs.
  int level = -1;
  double best_score = 1.0;
  for (int l = 0; l < kNumLevels - 1; ++l) {
    const double score =
        l == 0 ? static_cast<double>(v.levels[0].size()) / options_.level0_compaction_trigger
               : static_cast<double>(v.LevelBytes(l)) / static_cast<double>(MaxBytesForLevel(options_, l));
    if (score > best_score || (l == 0 && score >= 1.0 && score >= best_score)) {
      best_score = score;
      level = l;
    }
  }
  if (level < 0) return false;
  job->level = level;
  if (level == 0) {
    job->inputs[0] = v.levels[0];
  } else {
    // Round-robin over the level's key space.
    const auto& blocks = v.levels[level];
    size_t pick = 0;
    while (pick < blocks.size() && !compact_pointer_[level].empty() &&
           ucmp_->Compare(blocks[pick]->largest, compact_pointer_[level]) <= 0) {
      ++pick;
    }
    if (pick == blocks.size()) pick = 0;
    // Neighbours that share a boundary key belong to the same compaction.
    size_t first = pick, last = pick;
    while (first > 0 && ucmp_->Compare(blocks[first - 1]->largest, blocks[first]->smallest) == 0) --first;
    while (last + 1 < blocks.size() && ucmp_->Compare(blocks[last]->largest, blocks[last + 1]->smallest) == 0) ++last;
    job->inputs[0].assign(blocks.begin() + static_cast<long>(first), blocks.begin() + static_cast<long>(last) + 1);
    compact_pointer_[level] = blocks[last]->largest;
  }
  AddOverlappingInputs(v, job);
  return true;
}

void DBImpl::ExtendRange(const std::vector<TableRef>& blocks, std::string* smallest, std::string* largest,
                         bool* any) const {
  for (const TableRef& b : blocks) {
    if (!*any || ucmp_->Compare(b->smallest, *smallest) < 0) *smallest = b->smallest;
    if (!*any || ucmp_->Compare(b->largest, *largest) > 0) *largest = b->largest;
    *any = true;
  }
}

void DBImpl::AddOverlappingInputs(const Version& version, CompactionJob* job) const {
  std::string smallest, largest;
  bool any = false;
  ExtendRange(job->inputs[0], &smallest, &largest, &any);
  if (any) job->inputs[1] = version.Overlapping(ucmp_, job->level + 1, smallest, largest);
}

bool DBImpl::IsBaseLevelForKey(const Version& version, int level, const Slice& user_key) const {
  for (int l = level + 1; l < kNumLevels; ++l) {
    if (!version.Overlapping(ucmp_, l, user_key, user_key).empty()) return false;
  }
  return true;
}

Status DBImpl::WriteCompactionOutputs(InternalIterator* merged, int output_level, bool to_ssd, bool sync_tables,
                                      SequenceNumber smallest_snapshot, const Version* base,
                                      bool may_use_standby, std::vector<TableRef>* blocks,
                                      std::vector<pmem::Reservation>* reservations,
                                      std::vector<std::unique_ptr<WritableFile>>* files, PhaseProfile* profile) {
  // Profiling: encode = the block format's work (the builders' Add and
  // Finish, and for tables their index and filter; src/profile_clock.h
  // samples the per-entry calls), write = bytes reaching the medium, sync =
  // table syncs. Whatever else the loop does is the merge.
  SampledPhase encode, write, sync;  // before the table builder that points at encode
  std::unique_ptr<ssd::TableBuilder> table;
  uint64_t finished_tables_write_ns = 0;  // of tables whose builders are gone
  auto sampled = [profile](SampledPhase* phase, auto&& work) {
    return profile == nullptr ? work() : phase->Run(work);
  };
  auto exact = [profile](SampledPhase* phase, auto&& work) {
    return profile == nullptr ? work() : phase->RunExact(work);
  };
  BlockBuilderOptions build_options;
  build_options.comparator = ucmp_;
  build_options.bloom_bits_per_key = options_.bloom_bits_per_key;
  auto next_number = [&] {
    std::lock_guard<std::mutex> lock(mutex_);
    return next_number_++;
  };

  // pmem outputs are built in a DRAM buffer and copied into an exactly sized
  // pmem object: a copy of finished KeySet bytes, not an encoding.
  std::vector<uint64_t> buffer;
  std::unique_ptr<keyset::Builder> builder;
  auto finish_block = [&]() -> Status {
    size_t size = 0;
    Status st = exact(&encode, [&] { return builder->Finish(&size); });
    builder.reset();
    if (!st.ok()) return st;
    pmem::Reservation reservation;
    st = ReserveObject(pmem::ObjectType::kBlock, size, /*zero=*/false, &reservation, may_use_standby);
    if (!st.ok()) return st;
    exact(&write, [&] {
      pool_->region()->MemcpyNoDrain(reservation.data, buffer.data(), size);
      pool_->region()->Drain();
    });
    TableRef block;
    st = OpenPmemTable(pool_.get(), ucmp_, next_number(), reservation.offset, size, output_level, false, &block);
    reservations->push_back(std::move(reservation));
    if (!st.ok()) return st;
    block->disposer = &disposer_;
    blocks->push_back(std::move(block));
    return Status::OK();
  };
  auto start_block = [&](size_t min_capacity) {
    const size_t capacity = std::max<size_t>(2 * options_.block_size, min_capacity);
    if (buffer.size() * 8 < capacity) buffer.assign(capacity / 8 + 1, 0);
    builder = std::make_unique<keyset::Builder>(build_options, reinterpret_cast<char*>(buffer.data()), capacity);
  };

  // SSD outputs: table files of KeySet blocks, the same bytes.
  std::unique_ptr<WritableFile> file;
  uint64_t table_number = 0;
  auto start_table = [&]() -> Status {
    table_number = next_number();
    Status st = fs_->NewTableFile(TablePath(table_number), async_table_writes_, &file);
    if (!st.ok()) return st;
    table = std::make_unique<ssd::TableBuilder>(build_options, options_.ssd_block_size, file.get(), TableBlockFormat());
    if (profile != nullptr) table->set_profile(&encode);
    return Status::OK();
  };
  auto finish_table = [&]() -> Status {
    ssd::TableInfo info;
    Status st = table->Finish(&info);
    finished_tables_write_ns += table->write_nanos();
    table.reset();
    if (st.ok()) st = exact(&sync, [&] { return sync_tables ? file->Sync() : file->StartWriteback(); });
    if (st.ok() && sync_tables) {
      std::lock_guard<std::mutex> lock(mutex_);
      ++syncs_;
      bytes_synced_ += info.file_size;
    }
    files->push_back(std::move(file));
    if (!st.ok()) return st;
    TableRef block;
    st = OpenSsdTable(table_number, output_level, &block);
    if (!st.ok()) return st;
    blocks->push_back(std::move(block));
    return Status::OK();
  };

  // The whole pool chunks block_size fills (src/pool_sizing.h): a block of
  // exactly block_size would spill 16 header bytes into one more chunk.
  const uint64_t chunk_limit = OutputBlockChunks(options_.block_size) * kPoolChunk - kPoolChunkHeader;
  std::string current_key;
  uint32_t current_key_hash = 0;
  bool current_hash_carried = false;
  bool has_current = false;
  // Bytewise order: equal keys are equal bytes, so different key hashes
  // carried by KeySet entries prove a new key without comparing. Entries
  // without one (classic blocks) are hashed only by the output builders,
  // inside the encode phase: hashing is their format's work.
  const bool bytewise = ucmp_ == BytewiseComparator();
  SequenceNumber last_sequence_for_key = kMaxSequenceNumber;
  Status s;
  uint64_t entries = 0;
  for (merged->SeekToFirst(); merged->Valid() && s.ok(); merged->Next()) {
    ++entries;
    const Slice key = merged->user_key();
    const SequenceNumber sequence = merged->sequence();
    const bool hash_carried = merged->carries_key_hash();
    const uint32_t key_hash = hash_carried ? merged->key_hash() : 0;
    if (!has_current || (bytewise && hash_carried && current_hash_carried && key_hash != current_key_hash) ||
        ucmp_->Compare(key, current_key) != 0) {
      // A new user key: the only place an output may end -- once it reached
      // block_size, or (pmem) before it would spill into one more 256 KiB
      // pool chunk than block_size needs.
      bool finished = false;
      if (to_ssd) {
        if (table != nullptr && table->EstimatedSize() >= options_.block_size) {
          s = finish_table();
          finished = true;
        }
      } else if (builder != nullptr &&
                 (builder->CurrentSize() >= options_.block_size ||
                  builder->CurrentSize() + MaxEntryFootprint(BlockFormat::kKeySet, key.size(),
                                                             merged->value().size()) > chunk_limit)) {
        s = finish_block();
        finished = true;
      }
      if (!s.ok()) break;
      // Only SSD outputs: a compaction into pmem is a memory copy, short,
      // and a flush in the middle of one would take pool space its outputs
      // were sized against.
      if (finished && to_ssd && t_background_thread) {
        uint64_t flush_ns = 0;
        s = FlushImmutablesDuringCompaction(&flush_ns);
        if (profile != nullptr) profile->preempted_ns += flush_ns;
        if (!s.ok()) break;
      }
      current_key.assign(key.data(), key.size());
      current_key_hash = key_hash;
      current_hash_carried = hash_carried;
      has_current = true;
      last_sequence_for_key = kMaxSequenceNumber;
    }
    bool drop = false;
    if (last_sequence_for_key <= smallest_snapshot) {
      drop = true;  // a newer version of this key is visible to every reader
    } else if (base != nullptr && merged->type() == ValueType::kDeletion && sequence <= smallest_snapshot &&
               IsBaseLevelForKey(*base, output_level, key)) {
      drop = true;  // nothing older below: the tombstone has done its job
    }
    last_sequence_for_key = sequence;
    if (drop) continue;
    if (to_ssd) {
      if (table == nullptr) s = start_table();
      if (s.ok()) {
        s = hash_carried ? table->Add(key, sequence, merged->type(), merged->value(), key_hash)
                         : table->Add(key, sequence, merged->type(), merged->value());
      }
      continue;
    }
    const size_t footprint = MaxEntryFootprint(BlockFormat::kKeySet, key.size(), merged->value().size()) + 4096;
    if (builder == nullptr) start_block(footprint);
    auto add = [&] {
      return hash_carried ? builder->AddWithHash(key, sequence, merged->type(), merged->value(), key_hash)
                          : builder->Add(key, sequence, merged->type(), merged->value());
    };
    s = sampled(&encode, add);
    if (s.IsNoSpace()) {  // one key's versions overflowed the buffer
      s = finish_block();
      if (s.ok()) {
        start_block(footprint);
        s = add();
      }
    }
  }
  if (s.ok()) s = merged->status();
  if (s.ok() && builder != nullptr && builder->num_entries() > 0) s = finish_block();
  if (s.ok() && table != nullptr) s = finish_table();
  if (!s.ok() && file != nullptr) {  // an unfinished table
    (void)file->Close();
    (void)fs_->RemoveFile(TablePath(table_number));
  }
  if (profile != nullptr) {
    if (table != nullptr) finished_tables_write_ns += table->write_nanos();
    profile->encode_ns += encode.EstimatedNanos();
    profile->write_ns += write.EstimatedNanos() + finished_tables_write_ns;
    profile->sync_ns += sync.EstimatedNanos();
    profile->instrumentation_ns +=
        encode.InstrumentationNanos() + write.InstrumentationNanos() + sync.InstrumentationNanos();
    for (const TableRef& b : *blocks) profile->bytes_out += b->size;
    profile->entries += entries;
  }
  return s;
}

void DBImpl::WaitUntilInputsDurable(std::unique_lock<std::mutex>& lock, const CompactionJob& job) {
  // The job's key range.
  std::string smallest, largest;
  bool any = false;
  for (const auto& inputs : job.inputs) ExtendRange(inputs, &smallest, &largest, &any);
  auto conflicts = [&] {
    for (const PendingCompaction& p : pending_) {
      // It would consume an output that a crash could still lose.
      for (const TableRef& out : p.outputs) {
        for (const auto& inputs : job.inputs) {
          if (std::find(inputs.begin(), inputs.end(), out) != inputs.end()) return true;
        }
      }
      // It would write into the key range a redo of `p` may fill: a redo
      // keeps every tombstone, so its output can be wider than the
      // original's and must not meet newer blocks of the same level.
      if (any && p.output_level == job.level + 1) {
        for (const TableRef& shadow : p.shadows) {
          if (ucmp_->Compare(shadow->largest, smallest) >= 0 && ucmp_->Compare(shadow->smallest, largest) <= 0) {
            return true;
          }
        }
      }
    }
    return false;
  };
  // Redoing a pending compaction at recovery needs its outputs untouched and
  // its output range free.
  while (conflicts() && bg_error_.ok()) done_cv_.wait(lock);
}

uint64_t DBImpl::InputBytes(const CompactionJob& job) {
  uint64_t bytes = 0;
  for (const auto& inputs : job.inputs) {
    for (const TableRef& b : inputs) bytes += b->size;
  }
  return bytes;
}

bool DBImpl::AllInPmem(const std::vector<TableRef>& blocks) {
  return std::all_of(blocks.begin(), blocks.end(),
                     [](const TableRef& b) { return b->residence == Residence::kPmem; });
}

Status DBImpl::RunCompaction(CompactionJob* job, bool may_use_standby) {
  const int output_level = job->level + 1;
  SequenceNumber smallest_snapshot;
  std::shared_ptr<const Version> base;
  const uint64_t bytes_read = InputBytes(*job);
  bool to_ssd;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    WaitUntilInputsDurable(lock, *job);
    if (!bg_error_.ok()) return bg_error_;
    smallest_snapshot = SmallestSnapshot();
    base = version_;
    to_ssd = OutputToSsd(*base, output_level, bytes_read);
  }
  // Profiling: the inputs charge the block format's work (opening blocks,
  // stepping their iterators) to decode; block reads are timed where they
  // happen and taken out of it. The whole loop is timed; merge is what
  // remains once the clock's own cost is taken out too.
  const bool profiling = options_.profile_compactions;
  PhaseProfile profile;
  SampledPhase decode([](const void*) { return ssd::ThreadReadNanos(); });
  const uint64_t start_ns = profiling ? SteadyNanos() : 0;
  const uint64_t read_before = profiling ? ssd::ThreadReadNanos() : 0;
  // One child per L0 block (they overlap); one concatenating iterator per
  // deeper level (sorted, disjoint). With a child per table, every merge
  // step compared every input table and kept a read window of each in
  // flight (an L0 compaction has a dozen L1 tables).
  SampledPhase* const decode_phase = profiling ? &decode : nullptr;
  auto merge_inputs = [&](int levels) {
    std::vector<std::unique_ptr<InternalIterator>> children;
    for (int which = 0; which < levels; ++which) {
      const std::vector<TableRef>& inputs = job->inputs[which];
      if (job->level + which == 0) {
        for (const TableRef& b : inputs) children.push_back(b->table->NewScanIterator(decode_phase));
      } else if (!inputs.empty()) {
        children.push_back(NewLevelScanIterator(ucmp_, inputs, decode_phase));
      }
    }
    return NewMergingIterator(ucmp_, std::move(children));
  };
  auto merged = merge_inputs(2);
  if (job->split) {
    // CompactRange checked this against an older version; flushes since may
    // have moved the output level past the pmem budget.
    if (to_ssd || !AllInPmem(job->inputs[0])) return Status::NoSpace("a split compaction step needs pmem outputs");
    merged = NewKeyRangeIterator(ucmp_, std::move(merged), nullptr, &job->split_key);
  }

  std::vector<TableRef> outputs;
  std::vector<pmem::Reservation> reservations;
  std::vector<std::unique_ptr<WritableFile>> files;
  Status s = WriteCompactionOutputs(merged.get(), output_level, to_ssd, /*sync_tables=*/false, smallest_snapshot,
                                    base.get(), may_use_standby, &outputs, &reservations, &files,
                                    profiling ? &profile : nullptr);
  // A split step: the upper inputs' keys above split_key, back at their level.
  std::vector<TableRef> remainder;
  if (s.ok() && job->split) {
    merged = NewKeyRangeIterator(ucmp_, merge_inputs(1), &job->split_key, nullptr);
    s = WriteCompactionOutputs(merged.get(), job->level, /*to_ssd=*/false, /*sync_tables=*/false, smallest_snapshot,
                               base.get(), may_use_standby, &remainder, &reservations, &files,
                               profiling ? &profile : nullptr);
  }
  if (profiling) {
    profile.start_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - opened_at_).count();
    profile.level = job->level;
    profile.to_ssd = to_ssd;
    profile.instrumentation_ns += decode.InstrumentationNanos();
    const uint64_t wall_ns = SteadyNanos() - start_ns - profile.preempted_ns;
    profile.read_ns = ssd::ThreadReadNanos() - read_before;
    profile.decode_ns = decode.EstimatedNanos();
    const uint64_t accounted =
        profile.read_ns + profile.decode_ns + profile.encode_ns + profile.write_ns + profile.sync_ns;
    // Sampled phases are estimates: in a short compaction they can add up to
    // more than the loop took; then merge is 0 and the total their sum.
    profile.total_ns = std::max(wall_ns - std::min(wall_ns, profile.instrumentation_ns), accounted);
    profile.merge_ns = profile.total_ns - std::min(profile.total_ns, accounted);
    profile.bytes_in = bytes_read;
  }
  auto abandon = [&] {
    for (TableRef& b : outputs) {
      if (b->residence == Residence::kSsd) b->obsolete = true;  // the disposer deletes the file
    }
    outputs.clear();
    remainder.clear();
    for (auto& r : reservations) pool_->Cancel(&r);
    for (auto& f : files) (void)f->Close();
  };
  if (!s.ok()) {
    abandon();
    return s;
  }

  std::lock_guard<std::mutex> lock(mutex_);
  auto version = std::make_shared<Version>(*version_);
  std::set<uint64_t> removed;
  for (const auto& inputs : job->inputs) {
    for (const TableRef& b : inputs) removed.insert(b->number);
  }
  for (int level : {job->level, output_level}) {
    auto& blocks = version->levels[level];
    blocks.erase(std::remove_if(blocks.begin(), blocks.end(),
                                [&](const TableRef& b) { return removed.count(b->number) > 0; }),
                 blocks.end());
  }
  uint64_t bytes_written = 0;
  for (const TableRef& b : outputs) {
    version->levels[output_level].push_back(b);
    bytes_written += b->size;
  }
  std::sort(version->levels[output_level].begin(), version->levels[output_level].end(),
            [&](const TableRef& a, const TableRef& b) { return ucmp_->Compare(a->smallest, b->smallest) < 0; });
  if (!remainder.empty()) {
    auto& blocks = version->levels[job->level];
    for (const TableRef& b : remainder) bytes_written += b->size;
    // L0 is newest first: a split there takes all of L0, so its remainder is
    // older than every block flushed meanwhile. (It may be several blocks;
    // the next step takes them all again.)
    blocks.insert(blocks.end(), remainder.begin(), remainder.end());
    if (job->level > 0) {
      std::sort(blocks.begin(), blocks.end(),
                [&](const TableRef& a, const TableRef& b) { return ucmp_->Compare(a->smallest, b->smallest) < 0; });
    }
  }
  std::vector<pmem::Reservation*> publish;
  for (auto& r : reservations) publish.push_back(&r);
  const int64_t profile_index = profiling ? AddProfile(profile) : -1;
  if (to_ssd && !outputs.empty()) {
    // NobLSM: no sync on the critical path. The inputs stay as shadows until
    // the tracker has made the outputs durable.
    PendingCompaction pending;
    pending.profile = profile_index;
    pending.output_level = output_level;
    pending.outputs = outputs;
    for (const auto& inputs : job->inputs) pending.shadows.insert(pending.shadows.end(), inputs.begin(), inputs.end());
    pending.files = std::move(files);
    pending_.push_back(std::move(pending));
  }
  s = CommitManifest(*version, publish, {}, may_use_standby);
  if (!s.ok()) {
    if (to_ssd && !outputs.empty()) {
      files = std::move(pending_.back().files);
      pending_.pop_back();
    }
    abandon();
    return s;
  }
  if (!(to_ssd && !outputs.empty())) {
    for (const auto& inputs : job->inputs) {
      for (const TableRef& b : inputs) b->obsolete.store(true, std::memory_order_release);
    }
  } else {
    tracker_cv_.notify_one();
  }
  version_ = std::move(version);
  ++compactions_;
  compaction_bytes_read_ += bytes_read;
  compaction_bytes_written_ += bytes_written;
  pool_full_ = false;
  space_error_ = Status::OK();
  // Inputs no reader holds are freed when `job` and `base` let go; the
  // standby is refilled by the next flush or compaction.
  return Status::OK();
}

Status DBImpl::CompactRange(const Slice* begin, const Slice* end) {
  std::unique_lock<std::mutex> lock(mutex_);
  // Take over compaction from the background thread, which keeps flushing.
  while (manual_compaction_) done_cv_.wait(lock);  // one CompactRange at a time
  manual_compaction_ = true;
  while (compaction_running_) done_cv_.wait(lock);
  struct Release {
    DBImpl* db;
    ~Release() {
      db->manual_compaction_ = false;
      db->done_cv_.notify_all();
      db->bg_cv_.notify_one();
    }
  } release{this};
  // Flush the memtable: freeze it, then wait until every frozen one is in L0.
  if (mem_->num_entries() > 0) {
    Status s = SwitchMemTable(0, /*may_use_standby=*/true);
    if (!s.ok()) return s;
  }
  flush_failed_ = false;
  bg_cv_.notify_one();
  while (!imm_.empty() && bg_error_.ok() && !flush_failed_) done_cv_.wait_for(lock, std::chrono::milliseconds(100));
  if (!bg_error_.ok()) return bg_error_;
  if (!imm_.empty()) return PoolFullStatus("CompactRange cannot flush the memtable");
  // Level by level down to the last one. L0 blocks overlap, so they move
  // together; deeper levels move one block (with its overlaps) per step, so
  // that each step needs little free space and frees its inputs before the
  // next -- which is what lets a nearly full pool be compacted.
  auto in_range = [&](const TableRef& b) {
    return (begin == nullptr || ucmp_->Compare(b->largest, *begin) >= 0) &&
           (end == nullptr || ucmp_->Compare(b->smallest, *end) <= 0);
  };
  Status s;
  // L0 blocks taken per step, oldest first: all of them unless a step did
  // not fit the pool.
  size_t l0_take = SIZE_MAX;
  for (int level = 0; level < kNumLevels - 1 && s.ok(); ++level) {
    for (;;) {
      CompactionJob job;
      job.level = level;
      const auto& blocks = version_->levels[level];
      const auto first = std::find_if(blocks.begin(), blocks.end(), in_range);
      if (first == blocks.end()) break;
      // L0 blocks overlap: moving one down while an older block holding the
      // same key stays above it would let the older version win. So L0
      // moves from its oldest end (it is newest first): all of it, or in a
      // full pool the oldest l0_take blocks -- everything left above them
      // is newer, everything below older.
      const size_t take = std::min(l0_take, blocks.size());
      job.inputs[0] = level == 0 ? std::vector<TableRef>(blocks.end() - static_cast<std::ptrdiff_t>(take), blocks.end())
                                 : std::vector<TableRef>{*first};
      if (level > 0) {  // neighbours sharing a boundary key move together
        auto it = first;
        while (it + 1 != blocks.end() && ucmp_->Compare((*it)->largest, (*(it + 1))->smallest) == 0) {
          ++it;
          job.inputs[0].push_back(*it);
        }
      }
      AddOverlappingInputs(*version_, &job);
      // A split step writes its outputs and the remainder of its upper
      // blocks into the pool (an SSD output would need a pending-compaction
      // record for two levels). In L0 its inputs are the oldest blocks
      // (above), so their remainder is older than any block left in L0 or
      // flushed meanwhile.
      const bool splittable = AllInPmem(job.inputs[0]) && !OutputToSsd(*version_, level + 1, InputBytes(job));
      lock.unlock();
      s = RunCompaction(&job, /*may_use_standby=*/true);
      const Status unsplit = s;
      // A full pool cannot hold the outputs of a step whose upper blocks
      // overlap many lower ones (wide tombstone ranges do): split it, moving
      // the keys up to a lower block's end down first and rewriting the rest
      // of the upper blocks in place; halve the lower blocks taken until a
      // step fits. Each step frees what it consumed for the next.
      const std::vector<TableRef> lower = job.inputs[1];
      uint64_t split_steps = 0;
      for (size_t k = lower.size(); s.IsNoSpace() && splittable && k > 1;) {
        k /= 2;
        while (k > 0 && ucmp_->Compare(lower[k - 1]->largest, lower[k]->smallest) == 0) --k;
        if (k == 0) break;
        job.split = true;
        job.split_key = lower[k - 1]->largest;
        job.inputs[1].assign(lower.begin(), lower.begin() + static_cast<std::ptrdiff_t>(k));
        RefillStandby();
        s = RunCompaction(&job, /*may_use_standby=*/true);
        if (s.ok()) ++split_steps;
      }
      if (s.IsNoSpace()) s = unsplit;  // no split fits either: report the step's own shortage
      job = CompactionJob();  // drop the input references: obsolete blocks are freed now
      RefillStandby();
      lock.lock();
      split_steps_ += split_steps;
      if (s.IsNoSpace() && level == 0 && take > 1) {
        l0_take = take / 2;  // retry with the older half of the blocks taken
        s = Status::OK();
        continue;
      }
      if (!s.ok()) break;
    }
  }
  return s;
}

Status DBImpl::VerifyIntegrity() {
  std::shared_ptr<const Version> version;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    version = version_;
  }
  for (int level = 0; level < kNumLevels; ++level) {
    const auto& blocks = version->levels[level];
    for (size_t i = 0; i < blocks.size(); ++i) {
      const TableMeta& b = *blocks[i];
      const std::string where = "block " + std::to_string(b.number) + " at level " + std::to_string(level);
      Status s;
      if (b.residence == Residence::kPmem) {
        BlockReadOptions options;
        options.comparator = ucmp_;
        std::unique_ptr<BlockReader> checked;  // a fresh reader verifies the checksum
        s = BlockReader::Open(BlockFormat::kKeySet, Slice(pool_->Direct(b.offset), b.size), options, &checked);
        if (s.ok()) s = checked->Validate();
      } else {
        s = b.table->Validate();  // reads every block afresh and checks it
      }
      if (!s.ok()) return Status::Corruption(where, s.ToString());
      if (b.entries == 0 || ucmp_->Compare(b.smallest, b.largest) > 0) {
        return Status::Corruption(where, "empty or inverted key range");
      }
      if (level > 0 && i > 0 && ucmp_->Compare(blocks[i - 1]->largest, b.smallest) > 0) {
        return Status::Corruption(where, "overlaps the previous block of its level");
      }
    }
  }
  return Status::OK();
}

// ---------------------------------------------------------------------------
// Properties

bool DBImpl::GetProperty(const Slice& property, std::string* value) {
  std::lock_guard<std::mutex> lock(mutex_);
  const std::string p = property.ToString();
  const Version& v = *version_;
  auto levels = [&]() {
    std::string out = "level  blocks       bytes\n";
    char line[80];
    for (int level = 0; level < kNumLevels; ++level) {
      std::snprintf(line, sizeof(line), "%5d %7zu %11" PRIu64 "\n", level, v.levels[level].size(),
                    v.LevelBytes(level));
      out += line;
    }
    return out;
  };
  uint64_t pmem_bytes = 0;
  for (const auto& level : v.levels) {
    for (const TableRef& b : level) {
      if (b->residence == Residence::kPmem) pmem_bytes += b->size;
    }
  }
  if (p == "jigsaw.levels") {
    *value = levels();
  } else if (p.rfind("jigsaw.num-blocks-at-level", 0) == 0) {
    const std::string n = p.substr(std::strlen("jigsaw.num-blocks-at-level"));
    if (n.size() != 1 || n[0] < '0' || n[0] >= '0' + kNumLevels) return false;
    *value = std::to_string(v.levels[n[0] - '0'].size());
  } else if (p == "jigsaw.pmem-bytes") {
    *value = std::to_string(pmem_bytes);
  } else if ((p == "jigsaw.pool-used-bytes" || p == "jigsaw.pmem-device") && pool_ == nullptr) {
    *value = p == "jigsaw.pool-used-bytes" ? "0" : "no pmem pool (disk-only mode)";
  } else if (p == "jigsaw.pool-used-bytes") {
    uint64_t used = 0;
    for (auto type : {pmem::ObjectType::kBlock, pmem::ObjectType::kWalSegment, pmem::ObjectType::kManifest}) {
      for (uint64_t offset : pool_->Objects(type)) used += pool_->ObjectSize(offset);
    }
    *value = std::to_string(used);
  } else if (p == "jigsaw.pmem-device") {
    *value = "pool " + PoolPathFor(options_, name_) + " (" + pool_->persistence() + ")" +
             (pool_->timing() != nullptr ? " with an NVM timing model" : "") +
             ", numa node " + std::to_string(pmem::NumaNodeForPath(PoolPathFor(options_, name_))) +
             ", background thread on node " + std::to_string(numa_node_) + "\n";
    for (const pmem::PmemDevice& d : pmem::ListPmemDevices()) {
      *value += d.namespace_name + " " + d.mode + " " + d.device_path + " " + std::to_string(d.size) +
                " bytes, numa node " + std::to_string(d.numa_node) + "\n";
    }
  } else if (p == "jigsaw.ssd-bytes") {
    uint64_t bytes = 0;
    for (const auto& level : v.levels) {
      for (const TableRef& b : level) {
        if (b->residence == Residence::kSsd) bytes += b->size;
      }
    }
    *value = std::to_string(bytes);
  } else if (p == "jigsaw.sync-stats") {
    *value = "syncs " + std::to_string(syncs_) + " bytes_synced " + std::to_string(bytes_synced_) +
             " pending_compactions " + std::to_string(pending_.size()) + " redone_at_recovery " +
             std::to_string(redone_compactions_);
  } else if (p == "jigsaw.compaction-profile") {
    // CSV, one row per flush (level -1) or compaction, times in seconds.
    // entries: entries read (a flush: written); instrumentation_s: the
    // profile's own clock reads, already taken out of total_s and the phases.
    *value =
        "start_s,level,to_ssd,read_s,decode_s,merge_s,encode_s,write_s,sync_s,total_s,bytes_in,bytes_out,"
        "entries,instrumentation_s\n";
    char row[384];
    for (const PhaseProfile& r : profiles_) {
      std::snprintf(row, sizeof(row),
                    "%.6f,%d,%d,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%.9f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%.9f\n",
                    r.start_s, r.level, r.to_ssd ? 1 : 0, r.read_ns / 1e9, r.decode_ns / 1e9, r.merge_ns / 1e9,
                    r.encode_ns / 1e9, r.write_ns / 1e9, r.sync_ns / 1e9, r.total_ns / 1e9, r.bytes_in, r.bytes_out,
                    r.entries, r.instrumentation_ns / 1e9);
      *value += row;
    }
  } else if (p == "jigsaw.io") {
    const ssd::UringStallCounts stalls = ssd::UringStalls();
    *value = io_description_ + "; io_uring rings given up in this process: table writes " +
             std::to_string(stalls.table_writes) + ", reads " + std::to_string(stalls.reads);
  } else if (p == "jigsaw.wal-recovery") {
    *value = wal_recovery_;
  } else if (p == "jigsaw.block-cache") {
    *value = "capacity " + std::to_string(block_cache_->capacity()) + " usage " +
             std::to_string(block_cache_->usage()) + " hits " + std::to_string(block_cache_->hits()) + " misses " +
             std::to_string(block_cache_->misses());
  } else if (p == "jigsaw.compactions") {
    *value = std::to_string(compactions_);
  } else if (p == "jigsaw.flushes") {
    *value = std::to_string(flushes_);
  } else if (p == "jigsaw.stalls") {
    *value = "slowdowns " + std::to_string(slowdowns_) + " stops " + std::to_string(stops_) + " stall_micros " +
             std::to_string(stall_micros_) + " flushes_within_compactions " + std::to_string(flushes_within_compactions_);
  } else if (p == "jigsaw.stats") {
    *value = levels() + "pmem bytes " + std::to_string(pmem_bytes) + "\nflushes " + std::to_string(flushes_) +
             "\ncompactions " + std::to_string(compactions_) + " (read " + std::to_string(compaction_bytes_read_) +
             " bytes, wrote " + std::to_string(compaction_bytes_written_) + " bytes; " +
             std::to_string(split_steps_) + " split steps)\nslowdowns " +
             std::to_string(slowdowns_) + " stops " + std::to_string(stops_) + " stall_micros " +
             std::to_string(stall_micros_) + "\nmemtables " + std::to_string(1 + imm_.size()) + "\nstandby chunks " +
             StandbyState() + (pool_full_ ? " (pool full)" : "") + "\n";
  } else {
    return false;
  }
  return true;
}

}  // namespace jigsaw
