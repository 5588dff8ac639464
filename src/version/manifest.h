// The manifest: the record of the persistent state -- every table of every
// level, the live WAL segments, the next file number and sequence, and the
// compactions whose outputs are not yet durable (docs/manifest.md) -- and
// the two places it is kept: in the pmem pool, committed atomically with
// the objects it names (PoolManifestStore), or in <db>/MANIFEST in
// disk-only mode (FileManifestStore).
#ifndef JIGSAW_VERSION_MANIFEST_H_
#define JIGSAW_VERSION_MANIFEST_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "version/version.h"
#include "jigsaw/comparator.h"
#include "jigsaw/file_system.h"
#include "pmem/pool.h"
#include "pmem/pool_space.h"

namespace jigsaw {

struct WalSegmentMeta {
  uint64_t offset = 0;
  uint64_t capacity = 0;
  uint64_t number = 0;
};

// What a manifest record stores.
struct ManifestState {
  uint64_t generation = 0;
  SequenceNumber last_sequence = 0;
  uint64_t next_number = 1;
  std::vector<WalSegmentMeta> wal_segments;  // oldest first
  struct BlockEntry {
    uint64_t offset, size, number;
    int level;
    Residence residence = Residence::kPmem;
    PmemLayout pmem_layout = PmemLayout::kKeySetBlock;  // pmem only
  };
  std::vector<BlockEntry> blocks;
  // Compactions whose SSD outputs are not yet durable (NobLSM): the outputs
  // are in `blocks`; their inputs are kept, unserved, as shadows.
  struct PendingCompaction {
    int output_level = 0;
    std::vector<uint64_t> outputs;    // block numbers
    std::vector<BlockEntry> shadows;  // the inputs, with their old levels
  };
  std::vector<PendingCompaction> pending;
  // The version's range tombstones (version 4).
  std::vector<RangeTombstone> range_tombstones;
};

// Size of the encoded record.
uint64_t ManifestSize(const ManifestState& state);
// Encodes into dest (ManifestSize bytes): version 4 if the state has range
// tombstones, else version 3 if a table (or shadow) is a pmem table image,
// else version 2 -- the oldest version that holds it, which older builds
// read.
void EncodeManifest(const ManifestState& state, char* dest);
// Decodes and verifies (magic, version, CRC, flags). `capacity`: bytes
// available.
Status DecodeManifest(const char* data, uint64_t capacity, ManifestState* state);

// fdatasync/fsync calls made on SSD files and the bytes they covered
// (jigsaw.sync-stats). Thread-safe.
struct SyncStats {
  std::atomic<uint64_t> syncs{0};
  std::atomic<uint64_t> bytes{0};
  void Add(uint64_t calls, uint64_t synced_bytes) {
    syncs.fetch_add(calls, std::memory_order_relaxed);
    bytes.fetch_add(synced_bytes, std::memory_order_relaxed);
  }
};

// Where the manifest is kept, and how a new one replaces it.
//
// Thread-safety: Load runs alone (at open); Commit and TakeLateError calls
// are serialised by the caller (the DB's commit slot: one committer at a
// time, which for a file store need not hold the DB mutex).
class ManifestStore {
 public:
  virtual ~ManifestStore() = default;

  // The committed manifest; *exists is false when there is none yet (a new
  // database). Corruption or NotSupported if it cannot be read.
  virtual Status Load(ManifestState* state, bool* exists) = 0;

  // Makes `state` the manifest in one atomic, durable step. A pool store
  // publishes `reservations` (their bytes already persisted by the caller)
  // and frees the objects at `frees` in the same step; a file store ignores
  // both. may_use_standby: see pmem::PoolSpace::Reserve. On error the old
  // manifest stays in force.
  virtual Status Commit(const ManifestState& state, std::vector<pmem::Reservation*> reservations,
                        std::vector<uint64_t> frees, bool may_use_standby) = 0;

  // An error met after a commit took effect (a file store's directory
  // sync): the commit stands, but later writes must fail. Returned once.
  virtual Status TakeLateError() { return Status::OK(); }

  // The pool object holding the committed manifest; 0 for a file store or
  // before the first commit.
  virtual uint64_t pool_object() const { return 0; }

  // Whether Commit writes and syncs files (a device's latency, milliseconds)
  // rather than persisting to pmem.
  virtual bool WritesFiles() const { return false; }
};

// The manifest as a pool object that the pool's root points to; replaced
// by Pool::Commit together with the objects it names.
class PoolManifestStore final : public ManifestStore {
 public:
  // `pool` and `space` must outlive the store.
  PoolManifestStore(pmem::Pool* pool, pmem::PoolSpace* space) : pool_(pool), space_(space) {}
  Status Load(ManifestState* state, bool* exists) override;
  Status Commit(const ManifestState& state, std::vector<pmem::Reservation*> reservations, std::vector<uint64_t> frees,
                bool may_use_standby) override;
  uint64_t pool_object() const override { return offset_; }

 private:
  pmem::Pool* const pool_;
  pmem::PoolSpace* const space_;
  uint64_t offset_ = 0;  // the committed manifest's object
};

// Disk-only mode: <dir>/MANIFEST, a 256-byte header naming the comparator
// and format version, then one manifest record; replaced whole through a
// synced temporary file and a rename.
class FileManifestStore final : public ManifestStore {
 public:
  // `fs`, `comparator` and `sync_stats` must outlive the store.
  FileManifestStore(FileSystem* fs, std::string dir, const Comparator* comparator, SyncStats* sync_stats)
      : fs_(fs), dir_(std::move(dir)), comparator_(comparator), sync_stats_(sync_stats) {}
  Status Load(ManifestState* state, bool* exists) override;
  Status Commit(const ManifestState& state, std::vector<pmem::Reservation*> reservations, std::vector<uint64_t> frees,
                bool may_use_standby) override;
  Status TakeLateError() override;
  bool WritesFiles() const override { return true; }

 private:
  FileSystem* const fs_;
  const std::string dir_;
  const Comparator* const comparator_;
  SyncStats* const sync_stats_;
  Status late_error_;
};

}  // namespace jigsaw

#endif  // JIGSAW_VERSION_MANIFEST_H_
