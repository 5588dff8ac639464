// DBImpl: the LSM engine behind jigsaw::DB (docs/architecture.md).
//
// Write path (group commit, LevelDB's writer queue): writers queue under
// mutex_; the one at the front leads. The leader makes room (switching to a
// new memtable and WAL segment when the current one is full), joins the
// batches of the writers queued behind it into one group, then -- without
// mutex_ -- appends the group to the WAL as one record (persisted, with one
// fence or one fdatasync, before return when sync) and inserts it into the
// memtable; it retakes mutex_ to publish the group's sequence numbers and
// wake the writers it wrote for. Only the front of the queue touches the
// WAL and the current memtable, so no lock is held across the log write
// and readers never wait for a writer's sync. Readers take mutex_ only to
// pin the current memtables, version and sequence, then read lock-free.
// Background thread: flushes immutable memtables to L0 (db/flush.h)
// and runs leveled compactions (compaction/picker.h, merge.h,
// output_sink.h). Every change of the persistent state is one manifest
// commit through the VersionSet, one at a time (CommitSlot); a manifest in
// files is written without mutex_ but by the memtable switch. The tracker
// thread makes SSD outputs durable (compaction/durability_tracker.h).
//
// Files: db_impl.cc (writes, memtable switches, manifest commits,
// CompactRange), db_impl_read.cc (reads, snapshots), db_impl_properties.cc
// (properties, approximate sizes, integrity checks), db_impl_open.cc (open,
// recovery, close), db_impl_compaction.cc (flush, compaction, the tracker),
// checkpoint.cc (online checkpoints).
#ifndef JIGSAW_DB_DB_IMPL_H_
#define JIGSAW_DB_DB_IMPL_H_

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>

#include "compaction/compaction_profile.h"
#include "compaction/durability_tracker.h"
#include "compaction/picker.h"
#include "db/db_iter.h"
#include "db/memtable.h"
#include "db/metrics.h"
#include "version/table_store.h"
#include "version/version_set.h"
#include "db/wal.h"
#include "db/wal_archive.h"
#include "jigsaw/db.h"
#include "jigsaw/file_system.h"
#include "util/key_prefix.h"
#include "util/logging.h"
#include "util/mutex.h"
#include "util/per_thread_cache.h"

namespace jigsaw {

class DBImpl final : public DB {
 public:
  // database_id: the identity the pool must record (db/db_identity.h).
  DBImpl(const Options& options, const std::string& name, std::string database_id);
  ~DBImpl() override;

  // Loads the persistent state and starts the background threads.
  Status Recover() EXCLUDES(mutex_);
  // True if Recover created the pool file (a failed open removes it).
  bool created_pool() const { return tables_->pool() != nullptr && tables_->pool()->created(); }
  // Takes the directory lock DB::Open acquired; released when the DB closes.
  void HoldLock(std::unique_ptr<FileLock> lock) { lock_ = std::move(lock); }
  // Before Recover: recover as DB::OpenForReadOnly (disk mode only).
  void MarkReadOnly() { read_only_ = true; }
  // Takes the default info log DB::Open made (Options::info_log unset).
  // Before Recover.
  void TakeInfoLog(std::unique_ptr<Logger> log) {
    owned_info_log_ = std::move(log);
    info_log_ = owned_info_log_.get();
  }

  Status Put(const WriteOptions& options, const Slice& key, const Slice& value) override;
  Status Delete(const WriteOptions& options, const Slice& key) override;
  Status DeleteRange(const WriteOptions& options, const Slice& begin_key, const Slice& end_key) override;
  Status Write(const WriteOptions& options, WriteBatch* batch) override;
  Status Get(const ReadOptions& options, const Slice& key, std::string* value) override;
  std::vector<Status> MultiGet(const ReadOptions& options, const std::vector<Slice>& keys,
                               std::vector<std::string>* values) override;
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& options) override;
  const Snapshot* GetSnapshot() override;
  uint64_t GetLatestSequenceNumber() const override { return visible_sequence_.load(std::memory_order_acquire); }
  void ReleaseSnapshot(const Snapshot* snapshot) override;
  bool GetProperty(const Slice& property, std::string* value) override;
  void GetApproximateSizes(const Range* ranges, int n, uint64_t* sizes) override;
  Status CompactRange(const Slice* begin, const Slice* end) override;
  Status VerifyIntegrity() override;
  void GetLiveTablesMetaData(std::vector<LiveTableMetaData>* tables) override;
  Status GetTableContents(uint64_t number, std::string* contents) override;
  Status VerifyTables(std::vector<TableCheck>* checks) override;
  Status CreateCheckpoint(const std::string& dir, uint64_t* sequence) override;
  Status GetUpdatesSince(uint64_t sequence, std::unique_ptr<TransactionLogIterator>* iter) override;
  Status IngestExternalFile(const std::vector<std::string>& files, const IngestExternalFileOptions& options) override;

  // The current version, pinned: its tables stay readable while held.
  std::shared_ptr<const Version> CurrentVersion() EXCLUDES(mutex_) {
    MutexLock lock(&mutex_);
    return versions_->current();
  }
  // The bytes of `table`, a pmem table of a version of this DB -- a KeySet
  // block or a table image, as its pmem_layout says -- (empty for an SSD
  // table). Valid while the table is referenced.
  Slice PmemBlockContents(const TableMeta& table) const;
  // VerifyTables' check of one table's bytes: a pmem block's checksum and
  // structure read afresh, or every block of an SSD table or a pmem table
  // image read afresh and checked. OK or the problem found (not naming the
  // table).
  Status VerifyTable(const TableMeta& table) const;

 private:
  struct Immutable {
    std::shared_ptr<MemTable> mem;
    std::vector<WalSegmentMeta> wals;  // the segments holding its writes
    std::vector<uint64_t> wal_ends;    // the end of each one's records
    // Its logs are in the archive already (recovered logs whose flush could
    // not be committed at open): the feed reads them there, and the flush
    // does not archive them again.
    bool archived = false;
  };
  // The tables a compaction step, a migration or an ingest makes, before
  // their commit.
  struct CompactionOutputs {
    std::vector<TableRef> outputs;    // at the output level
    std::vector<TableRef> remainder;  // a split step's: back at the input level
    std::vector<pmem::Reservation> reservations;
    std::vector<std::unique_ptr<WritableFile>> files;  // SSD outputs, open
    uint64_t entries_read = 0;     // by the merge
    uint64_t entries_spliced = 0;  // of them, copied as bytes in runs
    uint64_t tables_migrated = 0;  // a migration: blocks written as bytes
    uint64_t bytes_migrated = 0;

    // Releases everything: for a step that failed or was not committed.
    void Abandon(pmem::Pool* pool) {
      for (TableRef& t : outputs) {
        if (t->residence == Residence::kSsd) t->obsolete = true;  // the disposer deletes the file
      }
      outputs.clear();
      remainder.clear();
      for (auto& r : reservations) pool->Cancel(&r);
      reservations.clear();
      for (auto& f : files) (void)f->Close();
      files.clear();
    }
  };
  // --- bulk ingest (ingest.cc) ---
  // Links or copies each file into the directory as a new table, opens it
  // and checks it (every block's checksum, every entry of sequence 0), and
  // sorts them by key; InvalidArgument if their ranges overlap. On error
  // nothing is left behind.
  Status BringInIngestedFiles(const std::vector<std::string>& files, const IngestExternalFileOptions& options,
                              std::vector<TableRef>* tables) EXCLUDES(mutex_);
  // Whether a memtable holds a key in the range of one of `tables`.
  bool MemTablesOverlap(const std::vector<TableRef>& tables) const REQUIRES(mutex_);
  // The deepest level >= 1 where `tables` overlap no table, else 0.
  int IngestLevel(const Version& version, const std::vector<TableRef>& tables) const;
  // At the front of the write queue: flushes an overlapping memtable,
  // chooses the level (*level) and makes the tables to add there (*out):
  // the files themselves, or their entries copied into the level's tier.
  // May release mutex_ while copying.
  Status IngestAtFrontOfQueue(std::vector<TableRef>* tables, CompactionOutputs* out, int* level) REQUIRES(mutex_);
  // The ingest of `tables`, alone in the write queue: the tables made,
  // then one commit that adds them and takes the ingest's sequence number.
  Status IngestAlone(std::vector<TableRef>* tables) REQUIRES(mutex_);
  // --- the change feed (transaction_log.cc) ---
  // A log the feed reads: a memtable's (live) or an archived one.
  struct FeedLog {
    uint64_t number = 0;
    uint64_t end = 0;  // live: the end of its records published when listed
    bool live = false;
  };
  friend class UpdatesIterator;
  // The logs that may hold writes up to *last (the visible sequence, set),
  // oldest first.
  std::vector<FeedLog> FeedLogs(SequenceNumber* last) EXCLUDES(mutex_);
  // The bytes of `log` from its header on: a live log's up to log.end,
  // copied while no flush can free or archive it; otherwise its archived
  // file whole. NotFound when it is neither live nor archived any more.
  Status ReadFeedLog(const FeedLog& log, std::string* bytes) EXCLUDES(mutex_, log_read_mutex_);
  // Writes the records of pmem segments into the archive before the
  // commit that frees them (ends: where each one's records end). A failure
  // is logged, not returned: the feed reports the gap.
  void ArchiveSegments(const std::vector<WalSegmentMeta>& wals, const std::vector<uint64_t>& ends);
  // What Recover found, passed between its steps (db_impl_open.cc).
  struct RecoveryState;

  std::shared_ptr<MemTable> NewMemTable() const;
  bool disk_mode() const { return options_.storage_mode == StorageMode::kDisk; }
  pmem::Pool* pool() const { return tables_->pool(); }

  // --- open and recovery (db_impl_open.cc): Recover holds mutex_ throughout
  // (no other thread runs before StartBackgroundThreads) ---
  Status OpenStorage(RecoveryState* state) REQUIRES(mutex_);
  // Opens every table the manifest names into state->version, and checks
  // the levels' shape (CheckLevelShape) before anything is swept or freed.
  Status LoadVersion(RecoveryState* state) REQUIRES(mutex_);
  void SortDeeperLevels(Version* version) const;  // levels >= 1 by smallest key
  void SweepOrphanFiles(RecoveryState* state) REQUIRES(mutex_);
  // Options::best_efforts_recovery: keeps the bytes of the tables
  // LoadVersion set aside in <db>/lost/ and describes them in set_aside_.
  // `move`: false for a read-only open (nothing is written).
  Status KeepSetAsideTables(RecoveryState* state, bool move) REQUIRES(mutex_);
  Status ReplayWal(RecoveryState* state) REQUIRES(mutex_);
  // Recover for DB::OpenForReadOnly: the manifest's tables and the WAL
  // replayed into mem_, nothing written; retried while the manifest changes
  // under it.
  Status RecoverReadOnlySteps() EXCLUDES(mutex_);
  void FreeUnreferencedObjects(const RecoveryState& state) REQUIRES(mutex_);
  // Writes the records ReplayWal collected into the archive, then purges it.
  void ArchiveReplayedLogs(const RecoveryState& state) REQUIRES(mutex_);
  Status CommitRecovery(RecoveryState* state) REQUIRES(mutex_);
  void StartBackgroundThreads() REQUIRES(mutex_);

  // --- write path (mutex_ held) ---
  // deletes_only: the batch only deletes, so in a full pool it may switch
  // memtables on the standby down to what CompactRange needs, and passes a
  // stopped L0 (deleting is how a full pool is emptied; docs/sizing.md). In
  // disk-only mode it may use the log's spare room instead.
  // A writer waiting in (or leading) the write queue; batch == nullptr:
  // a memtable switch (CompactRange), which goes alone.
  struct Writer;
  struct InsertingGroup;
  // The leader's group: the batches of the writers from the front of
  // writers_ on that may share one WAL record with the front's (same sync
  // and deletes-only kind, up to a size limit), into *group (empty if the
  // front's batch goes alone), linked by Writer::next_in_group; *last = the
  // last writer taken.
  void BuildWriteGroup(WriteBatch* group, Writer** last) REQUIRES(mutex_);
  // The group the leader `w` writes: makes room for w's batch
  // (MakeRoomForWrite; may wait), then builds the group (BuildWriteGroup)
  // into *joined -- kept only if its record fits the WAL's room. Sets
  // *group to w->batch or joined, and *last to the group's last writer.
  // On error nothing is grouped: *group is w->batch and *last is w.
  Status PrepareWriteGroup(Writer* w, WriteBatch* joined, WriteBatch** group, Writer** last) REQUIRES(mutex_);
  // Waits until `w` is done or, if for_turn, at the front of writers_ or
  // given its own insert (Writer::insert_into).
  void Await(Writer* w, bool for_turn) REQUIRES(mutex_);
  // Pops writers_ up to `last`, handing `status` to all but `self`, and
  // wakes the next front.
  void FinishWriteGroup(Writer* self, Writer* last, const Status& status) REQUIRES(mutex_);
  // Counts a group (writers_.front() .. last) in the write statistics.
  void CountWriteGroup(Writer* last, bool sync) REQUIRES(mutex_);
  // Makes the writes up to last_sequence visible to reads.
  // log_end: the end of the group's record in the current log.
  void PublishWriteGroup(SequenceNumber last_sequence, uint64_t log_end) REQUIRES(mutex_);
  // Numbers each batch of the leader's group (its WAL record written) and
  // hands each writer still polling for its turn its own insert; returns
  // how many were.
  int StartInserts(Writer* leader, SequenceNumber first_sequence, InsertingGroup* group) REQUIRES(mutex_);
  // Pops the group (front .. last) from writers_ without finishing its
  // writers, and wakes the next front.
  void LeaveWriteQueue(Writer* last) REQUIRES(mutex_);
  // Ends w's insert into `group` (outcome `inserted`). The last insert of a
  // group to end publishes it and every group after it whose inserts have
  // ended, in sequence order; returns once w's group is published.
  Status EndInsert(Writer* w, InsertingGroup* group, const Status& inserted) EXCLUDES(mutex_);
  // Runs `work` (with mutex_ held, though it may release it) at the front
  // of the write queue with no group inserting: no write takes a sequence
  // number meanwhile. Returns what it returns.
  Status AloneInWriteQueue(const std::function<Status()>& work) REQUIRES(mutex_);
  // Waits until no group is inserting (before the memtable is frozen).
  void AwaitInserts() REQUIRES(mutex_);
  Status MakeRoomForWrite(size_t payload, bool deletes_only) REQUIRES(mutex_);
  // Freezes the memtable (if it has a WAL segment) and starts a new one with
  // a new segment able to hold `payload`.
  Status SwitchMemTable(size_t payload, bool may_use_standby) REQUIRES(mutex_);
  // A new WAL: a zeroed pmem segment, or a log file in disk-only mode.
  Status NewWalSegment(size_t min_payload, pmem::Reservation* reservation, WalSegmentMeta* meta,
                       bool may_use_standby, std::unique_ptr<LogWriter>* writer) REQUIRES(mutex_);
  // Serialises commits: held from reading the state a commit is computed
  // from (the current version, imm_, pending_) until Commit has installed
  // its result, so that no commit is computed from a state that another,
  // in flight, is about to replace. Made (waiting for the slot's holder)
  // and destroyed with mutex_ held.
  class CommitSlot {
   public:
    explicit CommitSlot(DBImpl* db) REQUIRES(db->mutex_) : db_(db) {
      while (db_->committing_) db_->commit_cv_.Wait();
      db_->committing_ = true;
    }
    ~CommitSlot() {
      db_->mutex_.AssertHeld();
      db_->committing_ = false;
      db_->commit_cv_.SignalAll();
    }
    CommitSlot(const CommitSlot&) = delete;
    CommitSlot& operator=(const CommitSlot&) = delete;

   private:
    DBImpl* const db_;
  };
  // What a commit changes besides the version. Applied to imm_ and pending_
  // only once the manifest recording it is durable, so that no thread ever
  // acts on a change a failed commit would have to take back.
  struct CommitChange {
    bool drop_oldest_immutable = false;           // a flush: that memtable is in the new version
    size_t drop_oldest_pending = 0;               // a tracker round: these compactions are durable
    std::optional<PendingCompaction> add_pending;  // a compaction whose SSD outputs are not yet durable
  };
  // How Commit treats mutex_ while the manifest is written.
  enum class CommitIo {
    kHoldMutex,
    // A manifest in files (disk-only mode) is written and synced without
    // mutex_: writers and readers go on meanwhile. Only for callers whose
    // own changes are all in `next` and the CommitChange -- the state
    // others see stays as it was until the commit is installed.
    kReleaseMutex,
  };
  // Commits `next` (see VersionSet::Commit) with the live WAL segments and
  // pending compactions as `change` (may be null) leaves them; installs
  // both on success and publishes the read state. On error nothing
  // changes, and a pending compaction's files stay in change->add_pending.
  // The caller holds a CommitSlot taken before it read the current version.
  Status Commit(std::shared_ptr<const Version> next, CommitChange* change, std::vector<pmem::Reservation*> reservations,
                std::vector<uint64_t> frees, bool may_use_standby, CommitIo io) REQUIRES(mutex_);
  // The WAL segments of the memtables but the `skip_oldest_immutables`
  // oldest immutable ones.
  std::vector<WalSegmentMeta> LiveWalSegments(size_t skip_oldest_immutables = 0) const REQUIRES(mutex_);
  // Disk-only mode: removes log files no manifest names any more, keeping
  // the newest as spare_log_ when options_.reuse_log_files.
  void DeleteLogs(const std::vector<WalSegmentMeta>& logs) REQUIRES(mutex_);
  // NoSpace for a full pool (pmem::PoolSpace::FullStatus), or a plain
  // NoSpace in disk-only mode.
  Status PoolFullStatus(const std::string& detail);

  // --- properties (db_impl_properties.cc). GetProperty asks each family in
  // turn; a family that knows `property` sets *value and returns true
  // (false, leaving *value, for a property of its own it cannot answer, such
  // as an out-of-range level). ---
  // The current version's tables: jigsaw.levels, num-tables-at-level<N>
  // (and its old name num-blocks-at-level<N>), pmem-bytes, ssd-bytes,
  // table-formats.
  bool GetTableProperty(const std::string& property, std::string* value) const REQUIRES(mutex_);
  // The storage: jigsaw.pool-used-bytes, pmem-device, io, wal-recovery,
  // block-cache.
  bool GetStorageProperty(const std::string& property, std::string* value) const REQUIRES(mutex_);
  // The counters and their summaries: jigsaw.compactions,
  // read-triggered-compactions, flushes, write-groups, stalls, sync-stats,
  // compaction-profile; jigsaw.stats and stats-json.
  bool GetCounterProperty(const std::string& property, std::string* value) const REQUIRES(mutex_);
  // The counters and what the storage says now; with `measure_tables`,
  // the current version's levels and bytes too (a walk of its tables).
  Metrics CollectMetrics(bool measure_tables) const REQUIRES(mutex_);
  // Recover's steps (Recover logs how they ended).
  Status RecoverSteps() EXCLUDES(mutex_);

  // --- background work (db_impl_compaction.cc) ---
  void BackgroundLoop() EXCLUDES(mutex_);
  Status FlushOldestImmutable() EXCLUDES(mutex_);
  // Drops from the version the range tombstones no table holds a version
  // for (below their sequence, in their range): they have nothing left to
  // delete. Scans each table once per tombstone over the tombstone's range
  // (the answer is kept while both live). Nothing while a pending
  // compaction could be redone. After each compaction.
  Status DropSpentRangeTombstones() EXCLUDES(mutex_, range_gc_mutex_);
  // Whether `table` holds a version `tombstone` deletes.
  bool HoldsCoveredVersion(const TableMeta& table, const RangeTombstone& tombstone) REQUIRES(range_gc_mutex_);
  // Puts the range tombstones of `mem` into the version `edit` makes: the
  // flush (or recovery commit) of its entries takes its tombstones along.
  static void AddRangeTombstones(const MemTable& mem, VersionEdit* edit);
  // Builds `mem` into an L0 table of the mode's tier; sets *profile to
  // the flush's row when it was timed. Touches no DB state.
  Status FlushMemTable(const MemTable& mem, TableRef* table, pmem::Reservation* reservation,
                       std::optional<PhaseProfile>* profile) const;
  // Runs one compaction step and commits it.
  Status RunCompaction(Compaction* compaction, bool may_use_standby) EXCLUDES(mutex_);
  // CompactRange's last step: the last level's tables in [*begin, *end]
  // (either may be null: unbounded) that a range tombstone overlaps are
  // merged into new ones, the versions it deletes left out -- nothing
  // above them brings them into a compaction otherwise.
  Status RewriteLastLevelUnderTombstones(const Slice* begin, const Slice* end) REQUIRES(mutex_);
  // CompactRange's steps, level by level (manual_compaction_ set; db_impl.cc).
  Status RunManualCompaction(const Slice* begin, const Slice* end) REQUIRES(mutex_);
  // Merges the inputs into outputs (and a split step's remainder).
  Status WriteCompactionOutputs(const Compaction& compaction, bool to_ssd, SequenceNumber smallest_snapshot,
                                const Version& base, bool may_use_standby, CompactionOutputs* out,
                                PhaseProfile* profile) EXCLUDES(mutex_);
  // Whether the pmem tables of a migration (compaction/picker.h
  // IsMigration) can go to SSD as their bytes: each a table image, with
  // new SSD tables of classic blocks; or each a KeySet block that lookups
  // on SSD read in pieces, not whole (keyset::BlockOutline::piece_reads),
  // with new SSD tables of KeySet blocks.
  bool MigratesAsBytes(const Compaction& compaction) const;
  // Writes each input into a table file of its own, as its bytes: a KeySet
  // block as a table's only block, a table image as the whole file.
  Status MigrateBlocks(const Compaction& compaction, CompactionOutputs* out, PhaseProfile* profile) EXCLUDES(mutex_);
  // Commits a trivial move (compaction/picker.h IsTrivialMove): the inputs
  // at the output level, by reference.
  Status InstallTrivialMove(const Compaction& compaction) REQUIRES(mutex_);
  // Commits a finished compaction step.
  Status InstallCompaction(const Compaction& compaction, bool to_ssd, CompactionOutputs* out,
                           const PhaseProfile* profile, bool may_use_standby) REQUIRES(mutex_);
  // On the background thread, between two outputs of a compaction: flushes
  // the immutable memtables waiting (as LevelDB does), so that a long
  // compaction does not stall writers behind a full memtable queue. Adds the
  // time spent to *nanos. An error other than NoSpace (which BackgroundLoop
  // retries) is returned: the compaction must stop too.
  Status FlushImmutablesDuringCompaction(uint64_t* nanos) EXCLUDES(mutex_);
  // Whether the pool has room, beside what is committed and the standby, for
  // every output a compaction of `input_bytes` may still write plus the L0
  // blocks of every memtable: then a flush between that compaction's pmem
  // outputs cannot take space the compaction needs. Thread-safe.
  bool PoolHasRoomForFlushesDuringCompaction(uint64_t input_bytes) const;
  SequenceNumber SmallestSnapshot() const REQUIRES(mutex_);
  // Whether a compaction into `output_level` of about `bytes` writes SSD
  // tables (compaction/picker.h OutputToSsd).
  bool OutputToSsd(const Version& version, int output_level, uint64_t bytes) const REQUIRES(mutex_);
  // Appends a finished profile; returns its index.
  int64_t AddProfile(PhaseProfile profile) REQUIRES(mutex_);
  double SecondsSinceOpen() const;
  // Blocks until `compaction` does not conflict with a pending one
  // (ConflictsWithPending) or the store has failed.
  void WaitUntilInputsDurable(const Compaction& compaction) REQUIRES(mutex_);
  void TrackerLoop() EXCLUDES(mutex_);

  // --- reads ---
  // What a read searches: the memtables and the current version, as one
  // immutable snapshot of the structures mutex_ guards. Published by
  // PublishReadState, under mutex_, at every point where mem_, imm_ or the
  // current version changed and are consistent again (Commit, which a
  // memtable switch calls once both memtables are in place, and the end of
  // Recover); readers load it without mutex_. No memtable or table is in
  // a state twice.
  // A sorted, disjoint run of tables a Get searches (one L0 table, or a
  // level), with the 16-byte prefixes of each table's first and last keys
  // side by side (bytewise comparators only; empty otherwise), so that
  // Candidates mostly compares integers in one array instead of following
  // each table's pointers to its keys.
  struct SearchRun {
    std::span<const TableRef> tables;  // into the ReadState's version
    std::vector<KeyPrefix> smallest;
    std::vector<KeyPrefix> largest;
  };
  // Also the observer of the iterators made from it (pinned by them), which
  // charge their L0 merges to it when destroyed.
  struct ReadState final : IteratorObserver {
    DBImpl* db = nullptr;  // outlives its iterators (DB::NewIterator)
    std::shared_ptr<MemTable> mem;
    std::vector<std::shared_ptr<MemTable>> imm;  // newest first
    std::shared_ptr<const Version> version;
    // The version's runs in search order: each L0 table newest first, then
    // each non-empty level.
    std::vector<SearchRun> runs;
    // Read-triggered compaction (Options::read_triggered_compactions): the
    // cost readers have paid for this state's L0 tables, in wasted probes
    // (ChargeL0Reads), and the charge at which they ask for L0 to go into
    // L1 -- what that compaction would cost, in the same unit. 0: nothing
    // to ask for (L0 empty, or the option off).
    uint64_t l0_read_budget = 0;
    mutable std::atomic<uint64_t> l0_read_waste{0};
    mutable std::atomic<bool> l0_compaction_asked{false};

    // An iterator's seek into each L0 table, and each step past them
    // (kScanStepsPerProbe), as wasted probes.
    void Closed(uint64_t moves) const override;
  };
  void PublishReadState() REQUIRES(mutex_);
  // Charges `probes` wasted L0 probes to `state`; the charge that reaches
  // its budget asks the background thread for an L0 compaction (once per
  // state; takes no lock).
  void ChargeL0Reads(const ReadState& state, uint64_t probes);
  // What a read needs: `state` is kept alive by `pin`, or, for a Get, by
  // the reading thread's lease on read_state_cache_.
  struct ReadView {
    const ReadState* state = nullptr;
    SequenceNumber sequence = 0;
    std::shared_ptr<const ReadState> pin;
  };
  // Takes no DB mutex: the read state first, then the sequence (acquire).
  // Not the other way round: a reader that loaded an old sequence could
  // meet a state whose compactions dropped versions that sequence sees
  // (shadowed below the last sequence when they started), and read an
  // older value, or one deleted, instead. Writes up to the sequence that
  // the state lacks went into a memtable switched in after it: all newer
  // than everything the state holds, so the view is still a prefix.
  // The state is the one a Get of this thread would read (its lease on
  // read_state_cache_), or the published one.
  ReadView GetReadView(const ReadOptions& options) EXCLUDES(mutex_);
  // True if a view GetReadView took now would read what `view` does (the
  // same state and sequence); takes no lock and no reference.
  bool IsCurrentReadView(const ReadOptions& options, const ReadView& view) EXCLUDES(mutex_);
  // The published read state (a copy taken under read_state_mutex_).
  std::shared_ptr<const ReadState> PublishedReadState() const EXCLUDES(read_state_mutex_);
  // The sequence a read loads after its state: the snapshot's, or the
  // latest visible (acquire).
  SequenceNumber ReadSequence(const ReadOptions& options) const;
  // A view at the latest sequence whose state holds every write up to it:
  // GetReadView's may lack writes that went into a memtable switched in
  // between its two loads (a reader does not mind: they are newer than all
  // it sees). Retried until the state is still the published one after the
  // sequence was loaded: a write into a newer memtable is visible only
  // after the state holding that memtable was published.
  ReadView GetCompleteReadView() EXCLUDES(mutex_);
  // Get's search in `view`, which the caller holds.
  Status GetInView(const ReadOptions& options, const ReadView& view, const Slice& key, std::string* value);
  // The merge of `view`'s memtables and tables, range deletions applied
  // (*tombstones: the ones it applies, which it reads; null if none).
  std::unique_ptr<InternalIterator> NewMerge(const ReadOptions& options, const ReadView& view,
                                             std::shared_ptr<const RangeTombstoneSet>* tombstones);
  // NewIterator's SeekProbe (db_iter.h), in db_impl_read.cc.
  class ViewProbe;
  // True if the memtables of `view` decide `key`: *status OK (value set) or
  // NotFound, *found the sequence of the version that decided it. Range
  // tombstones are the caller's (Deleted).
  bool MemTablesGet(const ReadView& view, const Slice& key, std::string* value, Status* status,
                    SequenceNumber* found) const;
  // The largest sequence <= view.sequence of a range tombstone of the view's
  // memtables or version covering `key`; 0 if none. A version of the key
  // below it is deleted.
  SequenceNumber CoveringTombstone(const ReadView& view, const Slice& key) const;
  // Every range tombstone of the view's memtables and version; null if none.
  std::shared_ptr<const RangeTombstoneSet> RangeTombstones(const ReadView& view) const;
  // The tables of a run whose key range may hold `key` -- several when its
  // versions span tables.
  std::span<const TableRef> Candidates(const SearchRun& run, const KeyTarget& key) const;
  // Looks `key` up in one table; *done when it decides the key (OK with
  // *value, NotFound for a deletion, or an error), *found then the sequence
  // of the version that decided it.
  Status TableGet(const ReadOptions& options, const TableMeta& table, const Slice& key, SequenceNumber sequence,
                  std::string* value, bool* done, SequenceNumber* found) const;

  const Options options_;
  const std::string name_;
  const std::string database_id_;
  const Comparator* const ucmp_;
  bool read_only_ = false;  // DB::OpenForReadOnly; set before Recover
  mutable Mutex mutex_;
  // DropSpentRangeTombstones, one at a time, and its answers: (table
  // number, tombstone sequence) -> the table holds a version it deletes.
  Mutex range_gc_mutex_;
  std::map<std::pair<uint64_t, SequenceNumber>, bool> tables_covered_ GUARDED_BY(range_gc_mutex_);
  // One checkpoint at a time (checkpoint.cc): two calls for the same
  // directory would clear each other's <dir>.tmp. Never held with mutex_.
  Mutex checkpoint_mutex_;
  CondVar bg_cv_{&mutex_};    // work for the background thread
  CondVar done_cv_{&mutex_};  // background progress (room, compaction)

  // The persistent state and the tiers. versions_ is reset before tables_:
  // its tables are disposed of through tables_. The VersionSet's file
  // numbers may be taken without mutex_ (VersionSet::NewFileNumber); the
  // TableStore is thread-safe.
  std::unique_ptr<VersionSet> versions_ PT_GUARDED_BY(mutex_);
  std::unique_ptr<TableStore> tables_;

  std::shared_ptr<MemTable> mem_ GUARDED_BY(mutex_);
  WalSegmentMeta mem_wal_ GUARDED_BY(mutex_);
  std::unique_ptr<LogWriter> wal_ GUARDED_BY(mutex_);  // null when no segment could be allocated
  // The end of the last published group's record in wal_: the bytes before
  // it are whole records (the change feed reads up to it).
  uint64_t published_log_end_ GUARDED_BY(mutex_) = kWalHeaderSize;
  // Flushed logs kept for the change feed (Options::wal_ttl_seconds).
  std::unique_ptr<WalArchive> archive_;
  // Held by the change feed while it copies a live log, and by a flush
  // from its commit until its logs are freed, archived or spared: a log is
  // never freed or rewritten under a copy. Taken before mutex_, never while
  // holding it.
  Mutex log_read_mutex_;
  // Disk-only mode: a log file no manifest names, kept for the next log to
  // write over (Options::reuse_log_files); 0: none.
  uint64_t spare_log_ GUARDED_BY(mutex_) = 0;
  // The write queue; its front may use wal_ and mem_ without mutex_ (see
  // the write path above): only the front switches them.
  std::deque<Writer*> writers_ GUARDED_BY(mutex_);
  // Groups that left writers_ with their WAL records written and whose
  // memtable inserts are under way or not yet published, in sequence order
  // (concurrent memtable writes); the memtable is not switched while any
  // is, and inserts_done_cv_ is signalled when the last one is published.
  std::deque<InsertingGroup*> inserting_ GUARDED_BY(mutex_);
  CondVar inserts_done_cv_{&mutex_};
  std::deque<Immutable> imm_ GUARDED_BY(mutex_);       // oldest first
  bool committing_ GUARDED_BY(mutex_) = false;          // a CommitSlot is held
  CondVar commit_cv_{&mutex_};                          // the CommitSlot was released
  // The read state readers load (PublishReadState), behind a lock of its
  // own that is held only to copy the pointer (never across I/O, a
  // memtable insert or a commit), and the last sequence readers may see:
  // versions_->last_sequence(), stored (release) after the writes up to it
  // are in the memtable.
  mutable Mutex read_state_mutex_;
  std::shared_ptr<const ReadState> read_state_ GUARDED_BY(read_state_mutex_);
  // Each reading thread's reference to read_state_, which a Get takes
  // without read_state_mutex_ or the state's shared count; emptied by
  // PublishReadState after each new state.
  PerThreadCache<ReadState> read_state_cache_;
  std::atomic<SequenceNumber> visible_sequence_{0};
  // !imm_.empty() for committed immutables (written under mutex_, read
  // without it as a hint; FlushOldestImmutable rechecks under the lock).
  std::atomic<bool> has_imm_{false};
  std::multiset<SequenceNumber> snapshots_ GUARDED_BY(mutex_);
  bool shutting_down_ GUARDED_BY(mutex_) = false;
  bool compaction_running_ GUARDED_BY(mutex_) = false;
  bool manual_compaction_ GUARDED_BY(mutex_) = false;
  Status bg_error_ GUARDED_BY(mutex_);  // sticky IOError/Corruption from background work
  bool pool_full_ GUARDED_BY(mutex_) = false;     // last flush or compaction hit NoSpace
  Status space_error_ GUARDED_BY(mutex_);         // the NoSpace of the last compaction that hit one
  bool flush_failed_ GUARDED_BY(mutex_) = false;  // last flush hit NoSpace
  std::atomic<int> numa_node_{-1};  // node the background thread is bound to, or -1
  std::thread bg_thread_;
  std::unique_ptr<FileLock> lock_;  // <db>/LOCK, held while open
  // The info log: Options::info_log, or the <db>/LOG file DB::Open made
  // (owned). nullptr: none (the LOG could not be created). Thread-safe.
  std::unique_ptr<Logger> owned_info_log_;
  Logger* info_log_ = nullptr;
  std::string io_description_ GUARDED_BY(mutex_);
  // jigsaw.wal-recovery; set by Recover.
  std::string wal_recovery_ GUARDED_BY(mutex_) = "no log replayed (new database)";
  // jigsaw.set-aside-tables; set by Recover (Options::best_efforts_recovery).
  std::string set_aside_ GUARDED_BY(mutex_);

  // The durability tracker (NobLSM).
  std::deque<PendingCompaction> pending_ GUARDED_BY(mutex_);  // oldest first
  bool tracker_stop_ GUARDED_BY(mutex_) = false;
  CondVar tracker_cv_{&mutex_};
  std::thread tracker_thread_;

  std::vector<PhaseProfile> profiles_ GUARDED_BY(mutex_);
  const std::chrono::steady_clock::time_point opened_at_ = std::chrono::steady_clock::now();

  Counters counters_ GUARDED_BY(mutex_);  // GetProperty's (metrics.h)
  // Set by the reader whose charge reached its state's budget
  // (ChargeL0Reads, without mutex_); cleared by the next L0 compaction of
  // any cause, and when L0 is found empty.
  std::atomic<bool> l0_wanted_by_reads_{false};
  // The version of the last published read state: a reader holding an
  // older one asks for nothing (its L0 may be gone). Compared, never
  // dereferenced.
  std::atomic<const Version*> published_version_{nullptr};
};

}  // namespace jigsaw

#endif  // JIGSAW_DB_DB_IMPL_H_
