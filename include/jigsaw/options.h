// Options: how a database is opened (fixed for its lifetime), and per-call
// ReadOptions / WriteOptions. Every field documents its default.
#ifndef JIGSAW_INCLUDE_JIGSAW_OPTIONS_H_
#define JIGSAW_INCLUDE_JIGSAW_OPTIONS_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "jigsaw/comparator.h"
#include "jigsaw/export.h"

namespace jigsaw {

class FileSystem;
class Logger;
class Snapshot;

// Where the LSM tree lives (docs/ssd_format.md, docs/design/004-migration-as-bytes.md).
enum class StorageMode {
  // Everything in the pmem pool: WAL, manifest, every level. Default.
  kPmem,
  // WAL, manifest, L0 and the upper levels in pmem up to `pmem_budget`
  // bytes; deeper levels as SSD table files in the database directory.
  kHybrid,
  // No pmem at all: a WAL file, a MANIFEST file and every level as SSD
  // table files of KeySet blocks in the database directory.
  kDisk,
};

// How stores to the pmem pool are made persistent.
enum class PmemEmulation {
  // Cache-line flush + fence (libpmem pmem_flush/pmem_drain) when the pool is
  // on real pmem (pmem_is_pmem) or on tmpfs such as /dev/shm (DRAM-emulated
  // pmem: the same instructions and ordering as on Optane, data lives until
  // reboot); msync for any other file. Default.
  kAuto,
  // Cache-line flush + fence on any mapping, as PMEM_IS_PMEM_FORCE=1 does for
  // libpmem. On a file of a non-DAX disk filesystem this emulates pmem only:
  // writes survive a process crash, not a power failure.
  kForce,
  // Never emulate: flush + fence only where pmem_is_pmem says the mapping is
  // pmem, msync elsewhere (also on tmpfs). The baseline emulation is compared
  // against.
  kOff,
};

// Which reads of pool memory by Gets and iterators are guarded against
// SIGBUS (a media error of persistent memory: a poisoned line), turning one
// into a Corruption Status naming the block instead of ending the process
// (docs/durability.md, "Media errors"). Opens, WAL replay, the change feed,
// verification, migrations, checkpoints and compactions are guarded
// whatever this says.
enum class PmemReadGuard {
  // Guarded where the pool is on persistent memory (pmem_is_pmem: fsdax or
  // devdax), where media errors happen; not on DRAM-emulated pmem (tmpfs),
  // where only a pool file cut short beneath the engine raises SIGBUS.
  // Default.
  kAuto,
  // Always guarded (about 10% on point reads and up to 2x on in-memory
  // scans of emulated pmem: a sigsetjmp per table read and per iterator
  // step).
  kAlways,
  // Never guarded.
  kNever,
};

// Format of the tables of every tier.
enum class TableFormat {
  // The KeySet format: the same bytes as in DRAM, pmem (one KeySet block
  // per pool object) and SSD tables. Default.
  kKeySet,
  // A LevelDB-style encoding (prefix-compressed keys, varints, restart
  // points) in every tier: SSD tables of classic blocks, and pmem tables
  // that are images of such table files, read in place. What flush and
  // compaction would cost with encode/decode, for the conversion-cost
  // profiler. Reads and writes both work.
  kClassic,
};

// Compression of the blocks of SSD tables (docs/ssd_format.md,
// "Compressed blocks").
enum class Compression {
  kNone,
  // LZ4 (liblz4), fast to decompress: the choice for tables that are read.
  kLZ4,
  // Zstandard (libzstd) at level 1: smaller tables, about twice LZ4's
  // decompression time.
  kZstd,
};

// How SSD table blocks are read ahead (batched reads), and table files
// written.
enum class SsdIo {
  // pread on tmpfs, io_uring elsewhere when the kernel allows it, else
  // pread; table files written with pwrite. Default.
  kAuto,
  // io_uring whenever it can be set up (pread if not), for reads and for
  // table writes.
  kUring,
  // pread(2) only.
  kPread,
};

// What DB::Open does with a damaged WAL record (docs/durability.md, "WAL
// damage and recovery modes"). A *torn tail* is damage a crash may leave
// without any acknowledged write being lost: the records being written
// when it came, never made durable (in the newest log; on pmem, anything
// past the segment's durable end). Every other damage -- a changed byte in
// a record that was durable, a damaged record with intact ones after it in
// a log file, damage in a log that is not the newest -- means that writes
// after it, possibly acknowledged with sync = true, cannot be replayed in
// order.
enum class WalRecoveryMode {
  // A torn tail ends its log and is dropped; any other damage fails Open
  // with Corruption naming the log and the byte offset, and nothing is
  // changed. Never opens with a hole in the history of acknowledged
  // writes. Default.
  kTolerateCorruptedTailRecords,
  // Any damage, even a torn tail, fails Open with Corruption. A power
  // failure while writes are in flight usually leaves a torn tail, and the
  // database then does not open in this mode: for checking a database that
  // was closed cleanly.
  kAbsoluteConsistency,
  // Opens as of the point just before the first damage that is not a torn
  // tail: that log's later records and every newer log are dropped. A
  // consistent prefix of the history, possibly without writes that were
  // acknowledged (also with sync = true).
  kPointInTimeRecovery,
  // Skips every damaged stretch and replays every intact record, of every
  // log. Opens with as much data as possible, but not a prefix of the
  // history: a later write may be kept without an earlier one it depended
  // on, and a write a crash tore half-way is dropped while later ones stay.
  // For salvaging data, not for running on.
  kSkipAnyCorruptedRecords,
};

// Extra costs added to persistent-memory accesses to approximate a slower
// NVM medium on DRAM-emulated pmem (docs/emulation.md). All zero (default):
// off, and no cost is added anywhere. Latencies are busy-waited.
struct JIGSAW_EXPORT NvmTimingModel {
  // Extra nanoseconds per cache line made durable (flush + fence).
  double persist_line_ns = 0;
  // Extra nanoseconds per 256-byte media write unit touched by a persist.
  double write_unit_ns = 0;
  // Extra nanoseconds per random read of a pmem block: each block a Get
  // probes (filter and search), and each positioning of an iterator in a
  // block -- a seek positions one per L0 block and one per level; moving on
  // into a level's next block, or turning from Prev to Next (or back),
  // positions again; a compaction's input positions once per block. SSD
  // tables are not charged.
  double random_read_ns = 0;
  // Cap on the bytes per second that persists reach the medium, counted in
  // whole 256-byte write units; 0 = no cap.
  double write_bandwidth_bytes_per_sec = 0;
  // Cap on the bytes per second that iterators stream out of pmem blocks
  // (scans, and the inputs a flush or compaction reads), shared by all
  // threads; each entry an iterator steps over counts its block's average
  // bytes per entry. 0 = no cap. SSD tables are not charged.
  double read_bandwidth_bytes_per_sec = 0;

  bool enabled() const {
    return persist_line_ns != 0 || write_unit_ns != 0 || random_read_ns != 0 || write_bandwidth_bytes_per_sec != 0 ||
           read_bandwidth_bytes_per_sec != 0;
  }
  // Intel Optane DCPMM, after Yang et al., FAST'20: random read ~305 ns vs
  // ~100 ns for DRAM (+205 ns), writes complete in the memory controller's
  // ADR domain at DRAM-like latency (+0 ns), ~2.2 GB/s write bandwidth per
  // DIMM in 256-byte units, ~6.6 GB/s sequential read bandwidth per DIMM.
  static NvmTimingModel Optane() {
    NvmTimingModel model;
    model.random_read_ns = 205;
    model.write_bandwidth_bytes_per_sec = 2.2e9;
    model.read_bandwidth_bytes_per_sec = 6.6e9;
    return model;
  }
};

struct JIGSAW_EXPORT Options {
  // Order of user keys. Its Name() is stored in the pool and must match on
  // every later open. Default: BytewiseComparator(). Must outlive the DB.
  const Comparator* comparator = BytewiseComparator();

  // Create the database if it does not exist. Default: false.
  bool create_if_missing = false;
  // Fail if the database already exists. Default: false.
  bool error_if_exists = false;

  // Path of the persistent-memory pool file: a file on a DAX filesystem, a
  // device-DAX character device, or a file on tmpfs (/dev/shm) for
  // DRAM-emulated pmem. Empty (default): "<name>/pool" inside the database
  // directory given to DB::Open, which must then be on tmpfs to create a
  // database (elsewhere the pool would only be persisted by msync: name it
  // explicitly). The pool records the database's id: a pool moved to
  // another path may be named here; another database's pool is refused.
  std::string pmem_path;
  // Cache-line flush + fence or msync; see PmemEmulation. Default: kAuto.
  PmemEmulation pmem_emulation = PmemEmulation::kAuto;
  // Extra NVM costs for measurements on emulated pmem. Default: off.
  NvmTimingModel nvm_timing;
  // Size of the pool created when the database does not exist (ignored on
  // open). At least 16 MiB, and at least what memtable_size,
  // max_immutable_memtables, level0_compaction_trigger and table_size need:
  // with create_if_missing, DB::Open refuses a smaller one (InvalidArgument
  // naming the smallest that fits) before creating anything. The rule, and
  // how much data a pool holds: docs/sizing.md. Default: 1 GiB.
  uint64_t pmem_pool_size = uint64_t{1} << 30;

  // kPmem, kHybrid or kDisk. pmem-only and hybrid databases may be reopened
  // in each other's mode (existing SSD tables stay readable; new compaction
  // outputs follow the new mode); a disk-only database is always disk-only.
  // Default: kPmem.
  StorageMode storage_mode = StorageMode::kPmem;
  // Hybrid: bytes of blocks the pmem levels may hold; a compaction whose
  // output would exceed it writes SSD tables instead. 0 (default): half of
  // pmem_pool_size. Never more than the pool holds for blocks (its size less
  // libpmemobj's metadata, the standby space and the WAL segments); a
  // compaction that finds the pool full writes SSD tables too.
  uint64_t pmem_budget = 0;
  // Target bytes of one KeySet block inside an SSD table (the unit the block
  // cache holds and a cache miss reads). 4 KiB .. 4 MiB. Default: 8 KiB.
  size_t ssd_block_size = 8 << 10;
  // Bytes of SSD table blocks kept in DRAM by the block cache. Default 64 MiB.
  size_t block_cache_capacity = size_t{64} << 20;
  // Serve SSD tables from a read-only mmap instead of the block cache: no
  // copy, the page cache is the cache; but an I/O error or a file truncated
  // behind the engine's back becomes SIGBUS instead of a Status. Default:
  // false.
  bool ssd_use_mmap = false;
  // Point lookups (Get, MultiGet) read SSD table blocks in place from a
  // read-only mmap of the table -- the page cache is their cache; no system
  // call, no copy, no block cache entry -- under a SIGBUS guard: an I/O
  // error or a table truncated behind the engine's back makes that Get
  // return IOError, and the process lives on. Values are copied out before
  // the guard ends; iterators and compactions keep the block cache, and so
  // do reads with ReadOptions::verify_checksums. With paranoid_checks a
  // block's CRC is checked once, when a Get first reads it from the
  // mapping.
  // Scans that read windows of adjacent blocks copy a window from the same
  // mapping, under the same guard, when Gets have read every block in it
  // (its pages are then mapped already), and read it from the file
  // otherwise.
  // The guard installs a process-wide SIGBUS handler that passes every
  // other SIGBUS on to the handler it found; an application that sets its
  // own SIGBUS handler later must chain to the previous one
  // (docs/design/014-ssd-reads.md, "Point reads through a guarded mapping").
  // Default: true.
  bool ssd_mapped_gets = true;
  // Disk-only mode: a log file no longer needed (its memtable flushed) is
  // kept, and the next log is written over it (FileSystem::ReuseLogFile)
  // instead of a new file whose every page must be allocated and faulted
  // in. Reused log files carry WAL header version 2, which releases before
  // it cannot read (docs/wal.md). Default: true.
  bool reuse_log_files = true;
  // Log retention for the change feed (DB::GetUpdatesSince): when either
  // is nonzero, a log whose memtable is flushed is archived in
  // <db>/archive/<number>.log (a disk-mode log file is moved there, a pmem
  // segment's records are written out) instead of being freed, and log
  // files are not reused. Archived logs older than wal_ttl_seconds, and the
  // oldest ones while the archive holds more than wal_size_limit_mb, are
  // removed after each archiving and at open; 0 sets no limit of that
  // kind. Both 0 (the default): nothing is archived, and archived logs
  // already there are left alone (GetUpdatesSince still reads them).
  uint64_t wal_ttl_seconds = 0;
  uint64_t wal_size_limit_mb = 0;
  // Point lookups in pmem blocks go through a hash index per block, kept in
  // DRAM: a Get probes one slot per block and reads one entry, instead of a
  // Bloom filter line, a search and a walk through the block. Built by the
  // block's first Get (one pass over it; Gets meanwhile search the block),
  // not persistent; it takes about 11 bytes of DRAM per pmem entry. SSD
  // tables keep their Bloom filters.
  // Default: true.
  bool pmem_hash_index = true;

  // Guarding of point reads and iterators over pool memory against media
  // errors (PmemReadGuard). Default: kAuto, guarded on real pmem.
  PmemReadGuard pmem_read_guard = PmemReadGuard::kAuto;
  // Memtable inserts run concurrently (RocksDB's
  // allow_concurrent_memtable_write with its pipelined write): when other
  // writers wait, a write group leaves the queue as soon as its WAL record
  // is written and inserts into the memtable while the next group writes
  // its record; within a group, writers still spinning for their turn
  // insert their own batches beside the leader. Groups become visible in
  // sequence order, each whole. A writer alone inserts with the faster
  // single-writer path either way. Off: one group at a time, its leader
  // inserting every batch. Default: true.
  bool concurrent_memtable_writes = true;
  // Compression of the blocks that flushes, merging compactions and
  // TableFileWriter write into SSD tables, each kept only if that saves an
  // eighth of it. With kLZ4 a KeySet block's key part and its values (in
  // groups of 1 KiB) are compressed apart: a Get or an iterator's seek
  // keeps the key part it reads decompressed in the block cache and
  // decompresses only the groups of the values it reads. With kZstd, and
  // for classic blocks, blocks are compressed whole. Scans decompress whole
  // blocks. Reads of a table with compressed blocks go through the cache
  // (not ssd_mapped_gets' mapping). Pmem blocks and the
  // pmem blocks that migrate to SSD as their bytes are never compressed:
  // they are read in place. Tables written with one setting are read under
  // any other. Default: kNone.
  Compression compression = Compression::kNone;
  // Format of new tables, pmem and SSD (existing ones keep theirs: a
  // database reopened with the other format reads both). Default: kKeySet.
  TableFormat table_format = TableFormat::kKeySet;
  // Time every flush and compaction by phase (read, decode, merge, encode,
  // write, sync): GetProperty("jigsaw.compaction-profile"). Off: no timing
  // code runs. Default: false.
  bool profile_compactions = false;
  // Batched read-ahead of SSD table blocks: io_uring or pread; table writes
  // through io_uring only with kUring. The choice made at open is reported
  // by GetProperty("jigsaw.io"), with the io_uring rings given up because a
  // wait on them exceeded its bound. Default: kAuto.
  SsdIo ssd_io = SsdIo::kAuto;
  // Verify the CRC of every SSD block once, when it first enters memory:
  // read into the block cache, first read in place through a mapping
  // (ssd_mapped_gets, ssd_use_mmap), or -- a large block that Gets read in
  // pieces -- read whole once before its first piece is used. A damaged
  // block is then Corruption naming the table and block for every read
  // that needs it, never data. Off, a damaged block still never makes a
  // read go out of bounds, but its damaged values may be returned; reads
  // with ReadOptions::verify_checksums verify anyway, and so do compactions
  // (which read their inputs past the cache), DB::VerifyIntegrity and
  // recovery of pending compactions. Pmem blocks are verified when the
  // database is opened. WAL damage at open is wal_recovery_mode's concern,
  // not this option's.
  // Default: true (as RocksDB's; LevelDB's paranoid_checks is off).
  bool paranoid_checks = true;
  // What DB::Open does with a damaged WAL record; see WalRecoveryMode.
  // Damage a mode tolerated is described by
  // GetProperty("jigsaw.wal-recovery"). Default:
  // kTolerateCorruptedTailRecords.
  WalRecoveryMode wal_recovery_mode = WalRecoveryMode::kTolerateCorruptedTailRecords;

  // A table the manifest names that cannot be opened -- a damaged or missing
  // SSD table file, a pmem block failing its checksum or unreadable (a media
  // error) -- is set aside instead of failing DB::Open: the database opens
  // without it. Its bytes are kept in <db>/lost/ (an SSD table file moved
  // there; a pmem block's readable bytes copied to <number>.block, its
  // unreadable pages as zeros) for RepairDB or inspection, and
  // GetProperty("jigsaw.set-aside-tables") lists what was set aside and why.
  // The keys it held are gone from the database: older versions of them in
  // other tables show again, and keys it deleted may reappear. A read-only
  // open sets tables aside without moving anything. Default: false (Open
  // fails with Corruption naming the table).
  bool best_efforts_recovery = false;
  // File system for SSD tables. nullptr (default): FileSystem::Default().
  // Must outlive the DB.
  FileSystem* file_system = nullptr;
  // Where the DB logs its events (include/jigsaw/logger.h). nullptr
  // (default): the file <name>/LOG (the previous one kept as LOG.old).
  // Must outlive the DB.
  Logger* info_log = nullptr;

  // Bytes of writes buffered in the DRAM memtable before it is frozen and
  // flushed to a KeySet block in pmem. 64 KiB .. 1 GiB. Default: 4 MiB.
  // Each memtable (the active one and every frozen one) also holds a
  // whole-key Bloom filter of memtable_size / 64 bytes.
  size_t memtable_size = 4 << 20;
  // Frozen memtables that may wait for their flush before writes stall.
  // 1 .. 16. Default: 2.
  int max_immutable_memtables = 2;

  // Number of L0 blocks that triggers a compaction into L1. Default: 4.
  int level0_compaction_trigger = 4;
  // Reads ask for L0 to be compacted into L1 below the trigger: when Gets
  // and MultiGets searching L0 blocks that do not hold their key (counted
  // in samples, one Get in 64 per thread), and iterators that merged L0
  // blocks into their scans (counted when destroyed), have spent about what
  // compacting L0 would cost since L0 or the memtable last changed, and no
  // level needs compaction, every L0 block goes into L1 (LevelDB's seek
  // compaction, for L0 only; in hybrid mode L1 may be SSD tables). A
  // read-mostly phase after a burst of writes then stops paying for the
  // blocks the burst left in L0; a workload that keeps writing rarely asks.
  // GetProperty("jigsaw.read-triggered-compactions") counts these
  // compactions. Default: true.
  bool read_triggered_compactions = true;
  // Number of L0 blocks at which each write is delayed by 1 ms. Default: 8.
  int level0_slowdown_trigger = 8;
  // Number of L0 blocks at which writes wait for compaction. Default: 12.
  int level0_stop_trigger = 12;
  // Target size of L1; each deeper level is `level_size_multiplier` times
  // larger. Defaults: 64 MiB and 10.
  uint64_t level1_size = uint64_t{64} << 20;
  int level_size_multiplier = 10;
  // Target size of a level's table -- a pmem block, or an SSD table file --
  // as flushes and compactions write them: 64 KiB to 256 MiB. (Not the
  // size of the blocks inside an SSD table: ssd_block_size.) Default: 4 MiB.
  size_t table_size = 4 << 20;
  // Deprecated: table_size's old name, which said "block" for a table.
  // When not 0 it is used instead of table_size. Removed after version 0.2.
  size_t block_size = 0;
  // The table size in effect: block_size if set, else table_size.
  size_t TableSize() const { return block_size != 0 ? block_size : table_size; }
  // Bloom filter bits per key in every block; 0 disables filters. Default: 10.
  int bloom_bits_per_key = 10;

  // NUMA node for the background thread (flush, compaction) on a machine
  // with several nodes. -1 (default): the node of the pmem device holding
  // the pool, found through sysfs; no binding if unknown (tmpfs).
  int numa_node = -1;
};

struct JIGSAW_EXPORT ReadOptions {
  // Verify the checksum of every SSD table block the read uses -- from the
  // file, the block cache or the mapping; once per cached or mapped block --
  // also with Options::paranoid_checks off: Get and MultiGet return
  // Corruption for a damaged block, an iterator ends with it. Pmem blocks
  // need nothing more: they are verified when the database is opened, or
  // were written since by this process.
  // Default: false.
  bool verify_checksums = false;
  // Read as of this snapshot (from DB::GetSnapshot) instead of the latest
  // state. Default: nullptr.
  const Snapshot* snapshot = nullptr;
  // Iterators (DB::NewIterator) show only keys k with
  // *iterate_lower_bound <= k < *iterate_upper_bound; a null bound leaves
  // that side open. The bounds are copied when the iterator is made. A Seek
  // below the lower bound seeks to it; SeekToLast starts below the upper
  // bound; an iterator that steps past a bound is !Valid() with an OK
  // status. Get and MultiGet ignore them. Default: nullptr (unbounded).
  const Slice* iterate_lower_bound = nullptr;
  const Slice* iterate_upper_bound = nullptr;
};

struct JIGSAW_EXPORT WriteOptions {
  // true: the write is durable when the call returns (its WAL record is
  // persisted in pmem). false: see docs/durability.md. Default: false.
  bool sync = false;
};

// Options for DB::IngestExternalFile.
struct IngestExternalFileOptions {
  // Link the files into the database and remove the originals once the
  // ingest is committed (a copy where they cannot be linked: another file
  // system). false: the database takes a copy and the originals stay.
  bool move_files = false;
};

}  // namespace jigsaw

#endif  // JIGSAW_INCLUDE_JIGSAW_OPTIONS_H_
