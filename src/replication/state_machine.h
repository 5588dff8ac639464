// A JigsawDB database as the state machine of one raft server (libraft's
// struct raft_fsm): committed entries are WriteBatches applied in log
// order, raft snapshots are the database's checkpoints
// (docs/replication.md).
//
// Directory of a replica:
//   <dir>/CURRENT      the name of the live database directory ("db-<N>")
//   <dir>/db-<N>/      the live database (N grows by one per restore)
//   <dir>/incoming/    a snapshot being unpacked (removed at Open)
//   <dir>/snapshot/    a checkpoint being archived (removed at Open)
// With Options::pmem_path set, generation N's pool is "<pmem_path>.<N>".
//
// Thread-safety: the fsm callbacks run on the raft server's thread, one at
// a time, except snapshot_async, which runs on a worker thread beside them;
// db(), applied_index() and restores() may be called from any thread.
#ifndef JIGSAW_REPLICATION_STATE_MACHINE_H_
#define JIGSAW_REPLICATION_STATE_MACHINE_H_

// libraft's headers declare no C linkage of their own.
extern "C" {
#include <raft.h>
}

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "jigsaw/comparator.h"
#include "jigsaw/db.h"
#include "jigsaw/options.h"
#include "jigsaw/slice.h"
#include "jigsaw/status.h"
#include "jigsaw/write_batch.h"

namespace jigsaw::replication {

// Keys that begin with this prefix are the replication's own: the applied
// index lives under it, and a replicated write may not name one.
Slice ReservedPrefix();
bool IsReservedKey(const Slice& key);
// The key whose value (fixed64) is the raft index of the last entry the
// database applied; written in the same batch as the entry's updates.
Slice AppliedIndexKey();

// A raft command (docs/replication.md): an 8-byte header (u8 version 1,
// u8 flags with bit 0 sync, u8 padding, 5 zero bytes), the batch's
// encoding (docs/wal.md), `padding` zero bytes to a multiple of 8.
// InvalidArgument if the batch names a reserved key or breaks the DB's
// limits, range deletes checked in `comparator`'s order (unchecked if
// null; the database's own Write refuses them then, and apply records the
// entry as malformed).
Status EncodeCommand(const WriteBatch& batch, bool sync, const Comparator* comparator, std::string* command);

// What apply hands back as its result: null when the entry's updates were
// applied, else this (the entry was not a command this code reads, or the
// database refused its batch as InvalidArgument; only its index was
// recorded).
extern const Status kMalformedCommand;

class StateMachine {
 public:
  // Opens (creating with options.create_if_missing) the replica at `dir`.
  static Status Open(const Options& options, const std::string& dir, std::unique_ptr<StateMachine>* machine);
  ~StateMachine();
  StateMachine(const StateMachine&) = delete;
  StateMachine& operator=(const StateMachine&) = delete;

  // The struct to give libraft (raft_init, raft_fixture_grow): version 2
  // (apply, restore, snapshot + snapshot_finalize, the snapshot taken on
  // the raft thread), or version 3 after UseAsyncSnapshots (the snapshot
  // taken by snapshot_async on a worker thread while entries are applied;
  // libraft requires an I/O of version 2 with async_work for it).
  struct raft_fsm* fsm() { return &fsm_; }
  void UseAsyncSnapshots();
  // The raft server whose entries this machine applies: apply learns an
  // entry's index from it (raft_last_applied + 1). Set before raft_start.
  void Attach(struct raft* raft) { raft_ = raft; }

  // The live database. A restore replaces it; a caller's reference keeps
  // the replaced one open until released.
  std::shared_ptr<DB> db() const;
  uint64_t applied_index() const { return applied_index_.load(std::memory_order_acquire); }
  // Snapshots installed since Open.
  uint64_t restores() const { return restores_.load(std::memory_order_relaxed); }

  // Tests: called at each step of a restore (1: unpacked, 2: database
  // built, 3: opened, 4: CURRENT replaced); returning true stops the
  // restore there as a crash would, leaving the directory as it is.
  std::function<bool(int step)> crash_point;

 private:
  StateMachine(const Options& options, const std::string& dir);
  Status OpenGeneration(uint64_t generation, bool create, std::shared_ptr<DB>* db,
                        std::shared_ptr<std::atomic<bool>>* replaced);
  Options GenerationOptions(uint64_t generation) const;
  std::string GenerationDir(uint64_t generation) const;

  int Apply(const struct raft_buffer* buf, void** result);
  int Snapshot(struct raft_buffer* bufs[], unsigned* n_bufs);
  int SnapshotAsync(struct raft_buffer* bufs[], unsigned* n_bufs);
  int Restore(struct raft_buffer* buf);
  Status InstallSnapshot(const Slice& archive, bool* installed);

  static int ApplyThunk(struct raft_fsm* fsm, const struct raft_buffer* buf, void** result);
  static int SnapshotThunk(struct raft_fsm* fsm, struct raft_buffer* bufs[], unsigned* n_bufs);
  static int SnapshotAsyncThunk(struct raft_fsm* fsm, struct raft_buffer* bufs[], unsigned* n_bufs);
  static int SnapshotFinalizeThunk(struct raft_fsm* fsm, struct raft_buffer* bufs[], unsigned* n_bufs);
  static int RestoreThunk(struct raft_fsm* fsm, struct raft_buffer* buf);

  const Options options_;
  FileSystem* const fs_;
  const std::string dir_;
  struct raft_fsm fsm_ {};
  struct raft* raft_ = nullptr;
  mutable std::mutex mu_;  // guards db_
  std::shared_ptr<DB> db_;
  // Set when a restore replaces db_'s generation: it is then destroyed
  // with the last reference to it. Raft thread only, as generation_.
  std::shared_ptr<std::atomic<bool>> replaced_;
  uint64_t generation_ = 0;
  std::atomic<uint64_t> applied_index_{0};
  std::atomic<uint64_t> restores_{0};
};

}  // namespace jigsaw::replication

#endif  // JIGSAW_REPLICATION_STATE_MACHINE_H_
