// Pool: JigsawDB's persistent-memory pool, a libpmemobj pool (layout
// "jigsawdb") holding a root object and the engine's persistent objects:
// KeySet blocks, WAL segments and manifest records. docs/pool_layout.md is
// the spec.
//
// Objects are created in two steps: Reserve gives memory to fill (not yet
// durable, gone after a crash), Commit publishes reservations together with
// the new manifest pointer in one atomic, crash-consistent step
// (pmemobj_publish), optionally freeing objects in the same step.
//
// Thread-safety: Reserve/Cancel/Free/Direct are thread-safe; Commit calls are
// serialised by the caller (the DB's version lock).
#ifndef JIGSAW_PMEM_POOL_H_
#define JIGSAW_PMEM_POOL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pmem/nvm_timing.h"
#include "jigsaw/options.h"
#include "jigsaw/slice.h"
#include "jigsaw/status.h"
#include "pmem/region.h"

namespace jigsaw::pmem {

// Kinds of objects in the pool (pmemobj type numbers, part of the layout).
enum class ObjectType : uint64_t {
  kBlock = 1,
  kWalSegment = 2,
  kManifest = 3,
};

struct PoolOptions {
  std::string path;
  uint64_t size = 0;  // for creation
  bool create_if_missing = false;
  bool error_if_exists = false;
  std::string comparator_name;
  // The database's identity (32 hex digits). A new pool records it; an
  // existing pool that records another one is refused with InvalidArgument
  // before anything is written. Empty: not checked, and a new pool records
  // none.
  std::string database_id;
  PmemEmulation emulation = PmemEmulation::kAuto;
  NvmTimingModel timing;  // validated by the caller
};

// A reserved object: `data` is usable at once; `offset` identifies it in the
// pool once committed.
struct Reservation {
  char* data = nullptr;
  uint64_t size = 0;
  uint64_t offset = 0;
  std::shared_ptr<void> action;  // the pending pmemobj action
};

class Pool {
 public:
  // 2: the root records the database id. Version-1 pools (no id) are
  // opened and upgraded to 2 when the caller gives an id.
  static constexpr uint32_t kFormatVersion = 2;
  static constexpr const char* kLayout = "jigsawdb";
  static constexpr uint64_t kMinPoolSize = uint64_t{16} << 20;

  // What an existing pool says about itself, read without changing a byte.
  struct Facts {
    std::string database_id;  // "" for a version-1 pool or one whose creation never finished
    bool has_manifest = false;  // a database has committed into it
    bool locked = false;        // held open by another process or handle (the Status is IOError)
  };
  // Inspects the pool at options.path through a copy-on-write mapping.
  // Errors as Open's; NotFound if there is no file.
  static Status Inspect(const PoolOptions& options, Facts* facts);

  // Opens or creates the pool. Errors: InvalidArgument (bad options, exists
  // with error_if_exists, missing without create_if_missing, comparator or
  // database id mismatch), NotSupported (newer format version), Corruption
  // (not a JigsawDB pool: empty, truncated, foreign or damaged file), IOError
  // (the pool is open in another process or handle -- libpmemobj's flock --,
  // a read-only file system, no permission). A file that is not a JigsawDB
  // pool is not modified. A new pool file is created under a temporary name
  // ("<path>.creating") and renamed into place only when whole, so a crash
  // never leaves a half-made pool at `path` (device-DAX nodes are formatted
  // in place).
  static Status Open(const PoolOptions& options, std::unique_ptr<Pool>* pool);
  ~Pool();

  Region* region() { return region_.get(); }
  // The timing model, or nullptr when it is off.
  pmem::NvmTiming* timing() { return timing_.get(); }
  // How persists are made: "pmem", "emulated pmem (tmpfs)", "emulated pmem
  // (forced)" (flush + fence) or "msync".
  const std::string& persistence() const { return persistence_; }
  // True if the pool is mapped from persistent memory (pmem_is_pmem), not
  // from DRAM or a disk file.
  bool real_pmem() const { return real_pmem_; }
  // True if this Open created the pool file (or formatted the device).
  bool created() const { return created_; }
  // The database id recorded in the root ("" if none).
  std::string database_id() const;

  // Reserves `size` bytes, zeroed if `zero`. NoSpace if the pool is full.
  Status Reserve(ObjectType type, uint64_t size, bool zero, Reservation* reservation);
  // Drops a reservation that will not be committed.
  void Cancel(Reservation* reservation);

  // Atomically: publishes `reservations` (whose bytes the caller has already
  // persisted), sets the root's manifest pointer to `manifest_offset`, and
  // frees the objects at `frees`. Durable on return.
  Status Commit(std::vector<Reservation*> reservations, uint64_t manifest_offset,
                const std::vector<uint64_t>& frees);
  // Frees one committed object (atomic, durable on return).
  void Free(uint64_t offset);

  // Address of a committed or reserved object; nullptr for offset 0.
  char* Direct(uint64_t offset) const;
  // Size usable in the object at `offset`.
  uint64_t ObjectSize(uint64_t offset) const;
  // The current manifest pointer (0 = none yet).
  uint64_t manifest_offset() const;

  // Every committed object of `type` (for garbage collection at open).
  // Walks libpmemobj's object list: no object may be freed meanwhile, so
  // only while no other thread uses the pool (at open). used_bytes() is
  // the pool's usage at any time.
  std::vector<uint64_t> Objects(ObjectType type) const;

  uint64_t pool_size() const { return pool_size_; }
  // Bytes of committed objects, in whole 256 KiB chunks (what the heap has
  // given to them): counted at open and kept by Commit and Free. Cheap;
  // reservations (committed or not) are not included.
  uint64_t used_bytes() const { return used_bytes_.load(std::memory_order_relaxed); }
  // 256 KiB spans of the pool this process has made writable ahead of a
  // write to a reserved object (Reserve without `zero`: the bytes asked
  // for, once per span). For tests.
  uint64_t populated_chunks() const;

 private:
  Pool() = default;
  struct Root;
  static Status CheckRoot(const Root& root, const PoolOptions& options);
  // Inspect's work, in this process: the pool opened through a
  // copy-on-write mapping and its root read.
  static Status InspectHere(const PoolOptions& options, Facts* facts);
  // The same in a child process, the result sent back through a pipe
  // (see pool.cc). False if the child could not tell (fork failed, it died
  // of something other than a fault, it did not answer in time and was
  // killed): the caller forks another or inspects here.
  static bool InspectInChild(const PoolOptions& options, Facts* facts, Status* result);
  // Creates a pool file at options.path through a temporary file.
  static Status CreatePoolFile(const PoolOptions& options);
  // Writes a new root (magic, version, comparator, id) in one transaction.
  static Status InitialiseRoot(void* pop, Root* root, const PoolOptions& options);
  // Open's steps: the pool file checked (or created), mapped, its root
  // checked (or initialised, or upgraded).
  struct PoolFile {
    bool device_dax = false;
    bool created = false;  // by this open
    uint64_t size = 0;
  };
  static Status PreparePoolFile(const PoolOptions& options, PoolFile* file);
  Status Map(const PoolOptions& options, const PoolFile& file);
  Status LoadRoot(const PoolOptions& options);

  // Populates the pages of [data, data + size), the object at `offset`
  // (util/populate.h), in each 256 KiB span of the pool this process has not
  // populated before: once per span, since on pages already mapped the call
  // is pure overhead (~76 us per 4 MiB against ~164 us to copy it).
  void PopulateOnce(uint64_t offset, char* data, uint64_t size);

  void* pop_ = nullptr;  // PMEMobjpool*
  uint64_t pool_uuid_lo_ = 0;
  uint64_t pool_size_ = 0;
  // A bit per 256 KiB of the pool: populated by this process (PopulateOnce).
  std::unique_ptr<std::atomic<uint64_t>[]> populated_;
  uint64_t populated_bits_ = 0;
  Root* root_ = nullptr;
  std::unique_ptr<pmem::NvmTiming> timing_;  // before region_: it uses it
  std::unique_ptr<Region> region_;
  std::string persistence_;
  bool real_pmem_ = false;
  bool created_ = false;
  std::atomic<uint64_t> used_bytes_{0};  // see used_bytes()
};

// Deletes the pool file (or, for a device-DAX path, leaves it). IOError if
// the pool is open (libpmemobj holds a lock on it while it is).
Status DestroyPool(const std::string& path);

// The id of a new database: 32 random hex digits.
std::string NewDatabaseId();

}  // namespace jigsaw::pmem

#endif  // JIGSAW_PMEM_POOL_H_
