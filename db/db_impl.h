// DBImpl: the LSM engine behind jigsaw::DB.
//
// Write path: a writer takes mutex_, makes room (switching to a new memtable
// and WAL segment when the current one is full), appends the batch to the
// pmem WAL (persisted before return when sync), and inserts it into the
// memtable. Readers take mutex_ only to pin the current memtables, version
// and sequence, then read lock-free.
// Background thread: flushes immutable memtables to L0 KeySet blocks in pmem
// and runs leveled compactions. Every change of the persistent state is one
// atomic manifest commit (pmem::Pool::Commit).
#ifndef JIGSAW_DB_DB_IMPL_H_
#define JIGSAW_DB_DB_IMPL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>

#include "jigsaw/db.h"
#include "jigsaw/file_system.h"
#include "pmem/pool.h"
#include "ssd/block_cache.h"
#include "ssd/io_engine.h"
#include "db/memtable.h"
#include "db/version.h"
#include "db/wal.h"

namespace jigsaw {

class DBImpl final : public DB {
 public:
  // database_id: the identity the pool must record (src/db_identity.h).
  DBImpl(const Options& options, const std::string& name, std::string database_id);
  ~DBImpl() override;

  Status Recover();
  // True if Recover created the pool file (a failed open removes it).
  bool created_pool() const { return pool_ != nullptr && pool_->created(); }
  // Takes the directory lock DB::Open acquired; released when the DB closes.
  void HoldLock(std::unique_ptr<FileLock> lock) { lock_ = std::move(lock); }

  Status Put(const WriteOptions& options, const Slice& key, const Slice& value) override;
  Status Delete(const WriteOptions& options, const Slice& key) override;
  Status Write(const WriteOptions& options, WriteBatch* batch) override;
  Status Get(const ReadOptions& options, const Slice& key, std::string* value) override;
  std::vector<Status> MultiGet(const ReadOptions& options, const std::vector<Slice>& keys,
                               std::vector<std::string>* values) override;
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& options) override;
  const Snapshot* GetSnapshot() override;
  void ReleaseSnapshot(const Snapshot* snapshot) override;
  bool GetProperty(const Slice& property, std::string* value) override;
  Status CompactRange(const Slice* begin, const Slice* end) override;
  Status VerifyIntegrity() override;

 private:
  struct Immutable {
    std::shared_ptr<MemTable> mem;
    std::vector<WalSegmentMeta> wals;  // the segments holding its writes
  };
  struct CompactionJob {
    int level = 0;  // inputs from level and level + 1, output to level + 1
    std::vector<TableRef> inputs[2];
    // A split step (CompactRange in a full pool): only keys <= split_key
    // move to level + 1 -- inputs[1] must end at or before it -- and the
    // rest of inputs[0] is rewritten at `level`, in one commit. pmem only:
    // NoSpace if an output would be an SSD table.
    bool split = false;
    std::string split_key;
  };
  // A compaction whose SSD outputs are in the version but not yet durable
  // (NobLSM): its inputs are kept as unserved shadows until the durability
  // tracker has synced the outputs (docs/durability.md).
  // One timed flush or compaction (Options::profile_compactions).
  struct PhaseProfile {
    double start_s = 0;  // since the DB was opened
    int level = -1;      // input level of a compaction; -1 for a flush
    bool to_ssd = false;
    uint64_t read_ns = 0, decode_ns = 0, merge_ns = 0, encode_ns = 0, write_ns = 0, sync_ns = 0, total_ns = 0;
    uint64_t bytes_in = 0, bytes_out = 0;
    uint64_t entries = 0;  // entries read (a flush: written)
    uint64_t preempted_ns = 0;  // flushes run between its outputs (not its own time)
    uint64_t instrumentation_ns = 0;  // the clock reads' own cost (taken out of total_ns)
  };
  struct PendingCompaction {
    int64_t profile = -1;  // index in profiles_, or -1
    int output_level = 0;
    std::vector<TableRef> outputs;
    std::vector<TableRef> shadows;
    std::vector<std::unique_ptr<WritableFile>> files;  // the outputs, open for fdatasync
  };
  // Releases pool objects and table files of blocks that left the tree.
  class Disposer final : public TableDisposer {
   public:
    explicit Disposer(DBImpl* db) : db_(db) {}
    void Dispose(const TableMeta& block) override;

   private:
    DBImpl* const db_;
  };

  std::shared_ptr<MemTable> NewMemTable() const;

  // --- write path (mutex_ held) ---
  // deletes_only: the batch only deletes, so in a full pool it may switch
  // memtables on the standby down to what CompactRange needs, and passes a
  // stopped L0 (deleting is how a full pool is emptied; docs/sizing.md). In
  // disk-only mode it may use the log's spare room instead.
  Status MakeRoomForWrite(std::unique_lock<std::mutex>& lock, size_t payload, bool deletes_only);
  // Freezes the memtable (if it has a WAL segment) and starts a new one with
  // a new segment able to hold `payload`.
  Status SwitchMemTable(size_t payload, bool may_use_standby);
  // A new WAL: a zeroed pmem segment, or a log file in disk-only mode.
  Status NewWalSegment(size_t min_payload, pmem::Reservation* reservation, WalSegmentMeta* meta,
                       bool may_use_standby, std::unique_ptr<LogWriter>* writer);
  // Persists a manifest of `version` + the WAL segments in use, publishing
  // `reservations` with it and freeing `frees` in the same atomic commit.
  Status CommitManifest(const Version& version, std::vector<pmem::Reservation*> reservations,
                        std::vector<uint64_t> frees, bool may_use_standby);

  // Reserves a pool object. The DB keeps standby space -- chunks reserved
  // but never committed -- so that a pool filled by writes can still be
  // flushed and compacted: with may_use_standby (flush, compaction, deletes)
  // a full pool releases the standby and retries; without it (writes) the
  // reservation is refused while the standby is not complete.
  Status ReserveObject(pmem::ObjectType type, uint64_t size, bool zero, pmem::Reservation* reservation,
                       bool may_use_standby);
  // Re-reserves standby chunks until the standby is complete or the pool is
  // out of space. The Locked variant needs standby_mutex_ held.
  void RefillStandby();
  void RefillStandbyLocked();
  std::string StandbyState();  // "held/complete" chunks
  size_t StandbyHeld();        // chunks held now
  // NoSpace for a full pool: `detail` (what did not fit), then the pool's
  // size, the bytes in use and the bytes held back (docs/sizing.md). The
  // first form takes standby_mutex_; the second needs it held and is given
  // the standby's chunks.
  Status PoolFullStatus(const std::string& detail);
  Status PoolFullStatus(const std::string& detail, size_t held_chunks) const;
  std::vector<WalSegmentMeta> LiveWalSegments() const;

  // --- background work ---
  void BackgroundLoop();
  Status FlushOldestImmutable();  // mutex_ not held
  bool PickCompaction(CompactionJob* job);  // mutex_ held
  Status RunCompaction(CompactionJob* job, bool may_use_standby);  // mutex_ not held
  // On the background thread, between two outputs of a compaction into SSD
  // tables: flushes the immutable memtables waiting (as LevelDB does), so
  // that a long compaction does not stall writers behind a full memtable
  // queue. Adds the time spent to *nanos. An error other than NoSpace (which
  // BackgroundLoop retries) is returned: the compaction must stop too.
  // mutex_ not held.
  Status FlushImmutablesDuringCompaction(uint64_t* nanos);
  Status BuildBlockFromMemTable(const MemTable& mem, int level, TableRef* block, pmem::Reservation* reservation);
  SequenceNumber SmallestSnapshot() const;  // mutex_ held

  // --- SSD tier ---
  bool disk_mode() const { return options_.storage_mode == StorageMode::kDisk; }
  BlockFormat TableBlockFormat() const {
    return options_.table_format == TableFormat::kClassic ? BlockFormat::kClassic : BlockFormat::kKeySet;
  }
  std::string TablePath(uint64_t number) const;
  std::string LogPath(uint64_t number) const;
  void DeleteLogs(const std::vector<WalSegmentMeta>& logs);
  // Disk-only mode's manifest: <db>/MANIFEST, replaced atomically.
  Status ReadManifestFile(ManifestState* state, bool* exists);
  Status WriteManifestFile(const ManifestState& state);
  // Disk-only mode's flush: an L0 SSD table, synced inline.
  Status BuildTableFromMemTable(const MemTable& mem, TableRef* block);
  Status OpenSsdTable(uint64_t number, int level, TableRef* block);
  // Whether a compaction into `output_level` producing about `bytes` writes
  // SSD tables (hybrid mode: the pmem budget, capped at what the pool holds
  // for blocks, exhausted or the level beyond it; or the pool full). mutex_
  // held.
  bool OutputToSsd(const Version& version, int output_level, uint64_t bytes) const;
  static uint64_t InputBytes(const CompactionJob& job);  // bytes of all its input blocks
  static bool AllInPmem(const std::vector<TableRef>& blocks);
  // Merges `inputs` into new blocks of `output_level`: pmem blocks, or SSD
  // tables (each file left open in *files, synced only if sync_tables).
  // With `profile`, adds encode, write and inline sync time to it.
  Status WriteCompactionOutputs(InternalIterator* merged, int output_level, bool to_ssd, bool sync_tables,
                                SequenceNumber smallest_snapshot, const Version* base, bool may_use_standby,
                                std::vector<TableRef>* blocks, std::vector<pmem::Reservation>* reservations,
                                std::vector<std::unique_ptr<WritableFile>>* files, PhaseProfile* profile = nullptr);
  // Appends a finished profile (mutex_ held); returns its index.
  int64_t AddProfile(const PhaseProfile& profile);
  // Blocks until no input of `job` is an unsynced output and its output
  // does not meet the key range of a pending compaction into the same level
  // (mutex_ held).
  void WaitUntilInputsDurable(std::unique_lock<std::mutex>& lock, const CompactionJob& job);
  void TrackerLoop();
  // Recovery of compactions a crash left pending: keeps outputs that are
  // intact (and syncs them), redoes the others from their shadows.
  Status ResolvePendingCompactions(const std::vector<ManifestState::PendingCompaction>& pending,
                                   std::map<uint64_t, TableRef>* loaded, Version* version,
                                   std::vector<TableRef>* discarded);
  // Widens [*smallest, *largest] to cover `blocks`; *any: the range holds a
  // block already (false: it is empty).
  void ExtendRange(const std::vector<TableRef>& blocks, std::string* smallest, std::string* largest,
                   bool* any) const;
  // job->inputs[1]: the blocks of level + 1 overlapping job->inputs[0].
  void AddOverlappingInputs(const Version& version, CompactionJob* job) const;
  // True if no block deeper than `level` can hold user_key (tombstones may go).
  bool IsBaseLevelForKey(const Version& version, int level, const Slice& user_key) const;

  // Pins everything a read needs.
  struct ReadView {
    std::shared_ptr<MemTable> mem;
    std::vector<std::shared_ptr<MemTable>> imm;  // newest first
    std::shared_ptr<const Version> version;
    SequenceNumber sequence;
  };
  ReadView GetReadView(const ReadOptions& options);
  // True if the memtables of `view` decide `key`: *status OK (value set) or
  // NotFound.
  bool MemTablesGet(const ReadView& view, const Slice& key, std::string* value, Status* status) const;
  // The blocks of a sorted, disjoint run (a level, or one L0 block) whose key
  // range may hold `key` -- several when its versions span blocks.
  std::span<const TableRef> Candidates(std::span<const TableRef> run, const Slice& key) const;
  // Looks `key` up in one block or table; *done when it decides the key
  // (OK with *value, NotFound for a deletion, or an error).
  Status TableGet(const TableMeta& block, const Slice& key, SequenceNumber sequence, std::string* value,
                  bool* done) const;

  const Options options_;
  const std::string name_;
  const std::string database_id_;
  const Comparator* const ucmp_;
  std::unique_ptr<pmem::Pool> pool_;

  mutable std::mutex mutex_;
  std::condition_variable bg_cv_;    // work for the background thread
  std::condition_variable done_cv_;  // background progress (room, compaction)
  std::shared_ptr<MemTable> mem_;
  WalSegmentMeta mem_wal_;
  std::unique_ptr<LogWriter> wal_;  // null when no segment could be allocated
  std::deque<Immutable> imm_;  // oldest first
  // !imm_.empty() for committed immutables (written under mutex_, read
  // without it as a hint; FlushOldestImmutable rechecks under the lock).
  std::atomic<bool> has_imm_{false};
  std::shared_ptr<const Version> version_;
  uint64_t manifest_offset_ = 0;
  uint64_t manifest_generation_ = 0;
  uint64_t next_number_ = 1;
  SequenceNumber last_sequence_ = 0;
  std::multiset<SequenceNumber> snapshots_;
  std::string compact_pointer_[kNumLevels];
  bool shutting_down_ = false;
  bool compaction_running_ = false;
  bool manual_compaction_ = false;
  Status bg_error_;  // sticky IOError/Corruption from background work
  bool pool_full_ = false;     // last flush or compaction hit NoSpace
  Status space_error_;         // the NoSpace of the last compaction that hit one
  bool flush_failed_ = false;  // last flush hit NoSpace
  std::atomic<int> numa_node_{-1};  // node the background thread is bound to, or -1
  std::mutex standby_mutex_;
  std::vector<pmem::Reservation> standby_;  // guarded by standby_mutex_
  size_t standby_chunks_ = 0;               // chunks of a complete standby
  std::thread bg_thread_;
  bool recovering_ = true;  // Recover() runs alone; cleared before threads start
  std::unique_ptr<FileLock> lock_;  // <db>/LOCK, held while open

  // SSD tier and the durability tracker.
  FileSystem* const fs_;
  std::unique_ptr<ssd::BlockCache> block_cache_;
  std::unique_ptr<ssd::IoEngine> io_;  // read-ahead for SSD tables
  std::string io_description_;
  std::string wal_recovery_ = "no log replayed (new database)";  // set by Recover; jigsaw.wal-recovery
  bool async_table_writes_ = false;  // tables written through io_uring
  std::deque<PendingCompaction> pending_;  // mutex_; oldest first
  bool tracker_stop_ = false;             // mutex_
  std::condition_variable tracker_cv_;
  std::thread tracker_thread_;
  uint64_t syncs_ = 0;         // mutex_: fdatasync/fsync calls on SSD files
  uint64_t bytes_synced_ = 0;  // mutex_
  uint64_t redone_compactions_ = 0;  // pending compactions redone at recovery
  std::vector<PhaseProfile> profiles_;  // mutex_
  const std::chrono::steady_clock::time_point opened_at_ = std::chrono::steady_clock::now();
  Disposer disposer_{this};

  // Statistics (mutex_ held).
  uint64_t flushes_ = 0;
  uint64_t flushes_within_compactions_ = 0;  // FlushImmutablesDuringCompaction
  uint64_t compactions_ = 0;
  uint64_t split_steps_ = 0;  // CompactRange steps split to fit a full pool
  uint64_t slowdowns_ = 0;
  uint64_t stops_ = 0;
  uint64_t stall_micros_ = 0;
  uint64_t compaction_bytes_read_ = 0;
  uint64_t compaction_bytes_written_ = 0;
};

}  // namespace jigsaw

#endif  // JIGSAW_DB_DB_IMPL_H_
