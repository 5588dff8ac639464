// DB: the JigsawDB embedded key-value store.
//
//   jigsaw::Options options;
//   options.create_if_missing = true;
//   options.pmem_path = "/dev/shm/mydb.pool";
//   std::unique_ptr<jigsaw::DB> db;
//   jigsaw::Status s = jigsaw::DB::Open(options, "/tmp/mydb", &db);
//
// Thread-safety: a DB may be used by many threads at once without external
// synchronisation. Durability: see WriteOptions::sync and docs/durability.md.
#ifndef JIGSAW_INCLUDE_JIGSAW_DB_H_
#define JIGSAW_INCLUDE_JIGSAW_DB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jigsaw/export.h"
#include "jigsaw/iterator.h"
#include "jigsaw/metadata.h"
#include "jigsaw/options.h"
#include "jigsaw/slice.h"
#include "jigsaw/status.h"
#include "jigsaw/transaction_log.h"
#include "jigsaw/write_batch.h"

namespace jigsaw {

// Largest key and value the DB accepts; larger ones give InvalidArgument.
inline constexpr size_t kMaxUserKeySize = 64 * 1024;
inline constexpr size_t kMaxUserValueSize = 16 * 1024 * 1024;

// A consistent read-only view of the database. Obtain with GetSnapshot,
// release with ReleaseSnapshot before the DB is destroyed.
class JIGSAW_EXPORT Snapshot {
 public:
  // The sequence number of the newest write the snapshot sees (see
  // DB::GetLatestSequenceNumber).
  virtual uint64_t sequence() const = 0;

 protected:
  virtual ~Snapshot();
};

// A range of user keys: [start, limit).
struct JIGSAW_EXPORT Range {
  Slice start;
  Slice limit;
  Range() = default;
  Range(const Slice& s, const Slice& l) : start(s), limit(l) {}
};

class JIGSAW_EXPORT DB {
 public:
  // Opens the database `name` (a directory that holds the database's files;
  // with the default Options::pmem_path, also the pool). On success *db owns
  // the database; the DB is closed when it is destroyed. The directory is
  // locked first (<name>/LOCK): a database open elsewhere, in this process
  // or another, is IOError ("in use by process N"). Options that disagree
  // with what the database is -- storage mode, pool, comparator -- are
  // InvalidArgument naming both sides, before anything is created or
  // deleted (docs/durability.md, "Identity and locking"). A failed open
  // removes what it created and nothing else.
  [[nodiscard]] static Status Open(const Options& options, const std::string& name, std::unique_ptr<DB>* db);

  // Opens the disk-mode database `name` for reads only: nothing is written
  // to its directory -- no LOCK taken, no recovery commit, no info log, no
  // file removed -- and no background thread runs. The WAL is replayed
  // into memory, so every write the database holds is seen. It may be
  // opened while another process (or this one) has the database open for
  // writing: the view is of one manifest and its logs -- the open retries
  // when the writer drops a log it read -- and stays that view; open again
  // to see later writes. Put, Delete, DeleteRange, Write and CompactRange
  // return NotSupported; reads, snapshots, properties and CreateCheckpoint
  // work.
  // `options` must give StorageMode::kDisk: a pool database's pool is
  // locked by the process that has it open, and mapping it is a write
  // (NotSupported; CreateCheckpoint makes a disk-mode copy of one).
  // NotFound if `name` holds no database; InvalidArgument if it holds a
  // pool database (docs/design/024-read-only-open.md).
  [[nodiscard]] static Status OpenForReadOnly(const Options& options, const std::string& name,
                                              std::unique_ptr<DB>* db);

  // Opens the disk-mode database `name` as a secondary: a read-only open
  // (OpenForReadOnly's rules: nothing written, no lock, beside a process
  // that has it open for writing) that TryCatchUpWithPrimary moves on to
  // the database's latest state. Writes, CompactRange, IngestExternalFile
  // and GetUpdatesSince return NotSupported.
  [[nodiscard]] static Status OpenAsSecondary(const Options& options, const std::string& name,
                                              std::unique_ptr<DB>* db);

  DB() = default;
  DB(const DB&) = delete;
  DB& operator=(const DB&) = delete;
  virtual ~DB();

  [[nodiscard]] virtual Status Put(const WriteOptions& options, const Slice& key, const Slice& value) = 0;
  [[nodiscard]] virtual Status Delete(const WriteOptions& options, const Slice& key) = 0;
  // Deletes every key k with begin_key <= k < end_key (the comparator's
  // order) that exists now, in one step: a range tombstone, not a Delete per
  // key, so its cost does not grow with the keys it deletes. Readers at an
  // older snapshot still see them; the space they take is reclaimed as
  // compactions pass through the range (CompactRange(begin_key, end_key)
  // reclaims it at once). Takes one sequence number and is durable as a
  // Put is (options.sync). InvalidArgument if begin_key sorts after
  // end_key; begin_key == end_key deletes nothing
  // (docs/design/027-range-deletes.md).
  [[nodiscard]] virtual Status DeleteRange(const WriteOptions& options, const Slice& begin_key,
                                           const Slice& end_key) = 0;
  // Applies all updates of `batch` atomically.
  [[nodiscard]] virtual Status Write(const WriteOptions& options, WriteBatch* batch) = 0;
  // OK and *value, or NotFound.
  [[nodiscard]] virtual Status Get(const ReadOptions& options, const Slice& key, std::string* value) = 0;

  // Looks up every keys[i] as Get would, all from one consistent state (the
  // snapshot of `options`, else the latest). Returns one Status per key: OK
  // with (*values)[i] set, NotFound, or the error of that key's lookup.
  // *values is resized to keys.size(). Where SSD tables are read through
  // io_uring (GetProperty("jigsaw.io")), the blocks the lookups need are
  // read level by level in one parallel batch.
  virtual std::vector<Status> MultiGet(const ReadOptions& options, const std::vector<Slice>& keys,
                                       std::vector<std::string>* values) = 0;

  // The caller owns the iterator and must destroy it before the DB.
  virtual std::unique_ptr<Iterator> NewIterator(const ReadOptions& options) = 0;

  virtual const Snapshot* GetSnapshot() = 0;
  virtual void ReleaseSnapshot(const Snapshot* snapshot) = 0;

  // The sequence number of the newest write reads now see. Every Put and
  // Delete takes the next number: a WriteBatch of n operations takes n
  // consecutive numbers, ending at the value this returns once the batch
  // is visible. 0 for a database never written. Numbers survive reopening
  // and only grow.
  virtual uint64_t GetLatestSequenceNumber() const = 0;

  // The change feed: every committed write batch from the one holding
  // sequence number `sequence` on, up to the newest visible when the call
  // starts, in order, each with its sequence (jigsaw/transaction_log.h).
  // The first batch may begin before `sequence` (when `sequence` is inside
  // a batch); each next one begins where the one before ended. Batches come
  // from the write-ahead logs the DB still holds: the live ones and those
  // archived under Options::wal_ttl_seconds / wal_size_limit_mb. NotFound
  // if `sequence` is older than the oldest batch kept; an empty feed if it
  // is past the newest. A sequence number no batch holds -- an ingest's
  // (IngestExternalFile), or updates lost to WAL damage skipped at
  // recovery -- stops the feed with Corruption naming it; ask again from
  // the number after it. A feed sees writes visible to readers, synced or
  // not: after a crash a database may lose unsynced writes that a feed
  // already passed on (docs/design/025-change-feed.md). NotSupported on a
  // database opened read-only.
  [[nodiscard]] virtual Status GetUpdatesSince(uint64_t sequence, std::unique_ptr<TransactionLogIterator>* iter) = 0;

  // Properties (false if unknown); "table" is a pmem block or an SSD table:
  //   "jigsaw.levels"           tables and bytes per level, one line each
  //   "jigsaw.num-tables-at-level<N>"   tables at level N (0-6); the old
  //                             name "jigsaw.num-blocks-at-level<N>" still
  //                             answers through version 0.2
  //   "jigsaw.pmem-bytes"       bytes of live tables in pmem
  //   "jigsaw.ssd-bytes"        bytes of live SSD tables
  //   "jigsaw.num-range-tombstones"   DeleteRange tombstones kept: in the
  //                             memtables, and in the tree until no table
  //                             holds a version they delete
  //   "jigsaw.table-formats"    live tables by tier and format: pmem KeySet
  //                             blocks and table images of classic blocks,
  //                             SSD tables of KeySet and of classic blocks
  //                             (Options::table_format), two lines
  //   "jigsaw.pool-used-bytes"  bytes of the pmem pool given to objects
  //                             (blocks, WAL segments, manifest), in whole
  //                             256 KiB heap chunks; 0 in disk mode
  //   "jigsaw.compactions"      number of merging compactions run
  //   "jigsaw.flushes"          number of memtable flushes
  //   "jigsaw.write-groups"     group commit: write batches, the WAL records
  //                             (groups) that carried them, how many of
  //                             those were synced, how many groups left
  //                             the queue once their record was written
  //                             and inserted beside other groups, and how
  //                             many batches their own writers inserted
  //                             (Options::concurrent_memtable_writes)
  //   "jigsaw.read-triggered-compactions"   L0 compactions started because
  //                             reads asked for them below the trigger
  //                             (Options::read_triggered_compactions)
  //   "jigsaw.stalls"           write slowdowns and stops, time stalled, and
  //                             flushes run between a compaction's outputs
  //   "jigsaw.sync-stats"       SSD syncs made and bytes synced; hybrid
  //                             mode's pending (unsynced) compactions and
  //                             those redone at this open; the durability
  //                             tracker's rounds (one sync call each where
  //                             the file system syncs itself whole) and the
  //                             compactions they made durable
  //   "jigsaw.block-cache"      SSD block cache capacity, usage, hits, misses
  //   "jigsaw.io"               the SSD I/O engine chosen at open
  //                             (Options::ssd_io) and io_uring rings given up
  //   "jigsaw.pmem-device"      pool path, whether it is pmem, NUMA placement,
  //                             and the pmem namespaces libndctl reports
  //   "jigsaw.set-aside-tables" the tables this open set aside
  //                             (Options::best_efforts_recovery), one line
  //                             each: level, table, why, where its bytes are;
  //                             empty if none
  //   "jigsaw.wal-recovery"     what this open's WAL replay found: logs and
  //                             records replayed, and every damage the
  //                             wal_recovery_mode tolerated (log, offset,
  //                             what was dropped)
  //   "jigsaw.compaction-profile"   with Options::profile_compactions: CSV,
  //                             a header line, then one row per flush (level
  //                             -1) or compaction: start_s, level, to_ssd,
  //                             the phases' seconds (read, decode, merge,
  //                             encode, write, sync, total), bytes_in,
  //                             bytes_out, entries, instrumentation_s,
  //                             entries_moved (> 0: a trivial move),
  //                             entries_spliced (of entries, copied as
  //                             bytes in runs), entries_migrated (> 0: a
  //                             migration, pmem blocks written to SSD
  //                             tables as their bytes), encode_copy_s and
  //                             encode_filter_checksum_s (of encode: bytes
  //                             moved unchanged; key hashes, Bloom bits and
  //                             CRCs -- the rest is conversion into the
  //                             block format), decode_convert_s (of decode:
  //                             conversion out of it)
  //   "jigsaw.stats-json"       the counters of jigsaw.stats, sync-stats,
  //                             stalls, write-groups and block-cache as one
  //                             JSON object, for programs (keys: levels
  //                             [{tables, bytes}], pmem_bytes,
  //                             pmem_hash_index_bytes, ssd_bytes,
  //                             flushes, compactions {...}, trivial_moves,
  //                             migrations, stalls, writes, memtables, sync,
  //                             block_cache, standby, pool_full)
  //   "jigsaw.stats"            a summary for people, of the same numbers as
  //                             jigsaw.stats-json: the levels, pmem bytes,
  //                             the DRAM of the pmem blocks' hash indexes
  //                             (Options::pmem_hash_index), SSD bytes,
  //                             flushes, compactions (bytes read and written,
  //                             split steps, entries merged and how many of
  //                             them were copied as bytes in runs), trivial
  //                             moves (tables and bytes moved by reference),
  //                             migrations (pmem blocks and bytes written to
  //                             SSD as they are), L0 compactions asked for
  //                             by reads, stalls, write batches and groups,
  //                             syncs, the block cache, memtables and the
  //                             pool's standby chunks
  virtual bool GetProperty(const Slice& property, std::string* value) = 0;

  // For each of ranges[0..n), the approximate bytes its keys take in the
  // tables -- pmem blocks and SSD tables, not the memtables -- as LevelDB's
  // GetApproximateSizes: tables inside a range count whole, tables across
  // its ends by an estimate of the keys' position in them. Thread-safe.
  virtual void GetApproximateSizes(const Range* ranges, int n, uint64_t* sizes) = 0;

  // Every live table of the current version (jigsaw/metadata.h), level by
  // level: L0 newest first, deeper levels in key order. Thread-safe.
  virtual void GetLiveTablesMetaData(std::vector<LiveTableMetaData>* tables) = 0;

  // Reads the stored bytes of live table `number` into *contents: a pmem
  // block's or table image's pool object, an SSD table's file. NotFound if
  // no live table has that number (it may have been compacted away);
  // Corruption if pool memory in it is unreadable; IOError from the file.
  [[nodiscard]] virtual Status GetTableContents(uint64_t number, std::string* contents) = 0;

  // Checks every live table as VerifyIntegrity does -- its checksums and
  // structure read afresh, its key range, its order in its level -- and
  // with `checks` non-null reports each one there (GetLiveTablesMetaData's
  // order), going on past damage. Returns OK if every table passed, else
  // Corruption naming the first damaged table.
  [[nodiscard]] virtual Status VerifyTables(std::vector<TableCheck>* checks) = 0;

  // Compacts the key range [*begin, *end] (nullptr = unbounded) down to the
  // last level, dropping overwritten and deleted data.
  [[nodiscard]] virtual Status CompactRange(const Slice* begin, const Slice* end) = 0;

  // Writes an online checkpoint: a new disk-mode database in the directory
  // `dir` (which must not exist) holding exactly the writes up to one
  // sequence number -- the newest visible when the call starts -- returned
  // in *sequence (may be null). Writers and readers go on meanwhile; none
  // is stalled. SSD tables are hard-linked into `dir` where the file system
  // allows it (copied otherwise), pmem tables are written out as SSD table
  // files of their bytes, and the memtables' entries up to the sequence as
  // one L0 table; no write-ahead log is copied.
  //
  // The checkpoint is built in `dir`.tmp (a leftover of a crashed call is
  // removed first; a `dir`.tmp holding other files is InvalidArgument),
  // synced, then renamed to `dir`: after a crash at any instant `dir` is
  // either absent or complete. On OK everything in `dir` is durable. It
  // opens in disk mode (Options::storage_mode kDisk), with any
  // table_format; CopyDB copies it into a pmem or hybrid database. Keys
  // keep their sequence numbers, so DB::GetLatestSequenceNumber of the
  // opened checkpoint is *sequence. InvalidArgument if `dir` exists or is
  // empty. On an error before the rename `dir` is not created and
  // `dir`.tmp is removed; if only the directory sync after the rename
  // fails, `dir` is complete but a crash may undo the rename. A pool
  // database's pmem tables stay pinned while they are written out
  // (docs/design/023-checkpoints.md).
  [[nodiscard]] virtual Status CreateCheckpoint(const std::string& dir, uint64_t* sequence) = 0;

  // Bulk ingest: adds the table files `files`, written by TableFileWriter
  // (jigsaw/table_file_writer.h), to the database as one atomic change:
  // after a crash either every key of them is there or none. Their key
  // ranges must not overlap each other (InvalidArgument); a file that is
  // not a whole table of sequence-0 entries is Corruption or
  // InvalidArgument, and nothing is ingested. Writes wait while the files
  // are added. The ingest takes one sequence number: its keys are newer
  // than every write before the call and older than every write after it
  // (a memtable holding keys in their range is flushed first). Where no
  // table and no snapshot could see the files' keys, they go as they are
  // to the deepest level that has room for them -- an SSD file linked or
  // copied in, or its KeySet blocks copied into pmem blocks in pmem mode
  // -- otherwise their entries are rewritten with that sequence number
  // into L0. The change feed holds no batch for that number
  // (docs/design/026-bulk-ingest.md). Durable on return.
  [[nodiscard]] virtual Status IngestExternalFile(const std::vector<std::string>& files,
                                                  const IngestExternalFileOptions& options) = 0;

  // Full consistency check of the persistent state: every table's checksums
  // and structure (docs/format.md, Validate), and the level invariants (L1+
  // tables sorted and disjoint). Corruption naming the first problem found
  // (VerifyTables reports every table).
  [[nodiscard]] virtual Status VerifyIntegrity() = 0;

  // A secondary (OpenAsSecondary): reads the database's manifest and logs
  // again -- the tables and every write the writer has made so far -- and
  // makes that the state later reads see. Reads already begun, open
  // iterators, and snapshots with the reads through them keep the state
  // they began on. On error the state stays as it was. NotSupported on a
  // database not opened as a secondary.
  [[nodiscard]] virtual Status TryCatchUpWithPrimary();
};

// Deletes the database `name`: its pool (only if the pool records this
// database's id) and its own files in the directory; other files stay.
// IOError while the database is open, in this process or another.
[[nodiscard]] JIGSAW_EXPORT Status DestroyDB(const std::string& name, const Options& options);

// What RepairDB salvaged and what it could not.
struct JIGSAW_EXPORT RepairReport {
  uint64_t entries_kept = 0;  // keys written into the repaired database
  uint64_t tables_read = 0;   // tables opened (pmem blocks and images, SSD files)
  uint64_t tables_lost = 0;   // tables that could not be opened at all
  uint64_t blocks_lost = 0;   // blocks of opened tables that could not be read
  uint64_t logs_read = 0;     // WAL segments and log files replayed
  uint64_t log_records = 0;   // their records salvaged
  // The manifest was read: only the tables and logs it names were used,
  // with its range deletions. Otherwise every table and log found was, and
  // keys deleted (by a tombstone a compaction already dropped, or by a
  // range deletion) may reappear.
  bool manifest_read = false;
  bool resumed = false;    // an interrupted repair was finished
  std::string kept_at;     // where the damaged database's directory now is
  // One line per loss: what (table, block, log, pool, manifest), where and why.
  std::vector<std::string> losses;
  std::string ToString() const;
};

// Rebuilds a damaged database `name` from what can still be read: every
// readable block of its tables (SSD files, pmem blocks, table images) and
// every intact record of its logs, skipping damage, merged so that the
// newest surviving version of each key wins; the keys whose newest version
// is a value (and that no surviving range deletion covers) are written into
// a new database, made at `<name>.repair` with `options` (and its pool at
// `<pmem_path>.repair` when options name one), which then takes the
// database's place. The damaged directory is kept as `<name>.lost` (its
// pool at `<pmem_path>.lost`), for inspection; the repaired database has a
// new database id, no snapshots and no change-feed history.
//
// Offline: the database must not be open (its lock is taken; IOError if it
// is). OK means the repaired database is durable and opens with `options`;
// *report (may be null) says what was kept and what was lost. Each step of
// the final swap is a rename: a crash during it leaves the repaired
// database at `<name>.repair`, and RepairDB run again finishes the swap. A
// crash before it leaves the damaged database as it was. NotSupported for
// a device-DAX pool (the new pool cannot be made beside it).
[[nodiscard]] JIGSAW_EXPORT Status RepairDB(const std::string& name, const Options& options,
                                            RepairReport* report = nullptr);

// Copies the database `from` into a new database `to`: the way out of a
// full pool is a copy into a bigger one (docs/sizing.md).
//
// Offline: `from` must not be open anywhere (it is opened here, taking its
// lock; a database in use gives IOError). `from_options` open it (its
// create_if_missing and error_if_exists are ignored); `to_options` create
// `to`, which must not exist (InvalidArgument otherwise). Every live
// key/value pair of the latest state of `from` is written into `to`;
// snapshots, sequence numbers and overwritten or deleted versions are not
// copied, and `to` may use another storage mode, pool size or memtable
// size. `from` keeps its contents (opening it may recover and compact it,
// as any open does).
//
// On OK, both databases are closed and everything copied is durable in `to`
// (its last write is a sync write). On any error the partial copy is
// destroyed (DestroyDB) and the error returned, naming both databases.
[[nodiscard]] JIGSAW_EXPORT Status CopyDB(const std::string& from, const Options& from_options,
                                          const std::string& to, const Options& to_options);

}  // namespace jigsaw

#endif  // JIGSAW_INCLUDE_JIGSAW_DB_H_
