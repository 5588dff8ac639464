// VersionSet: the LSM tree's persistent state as the engine sees it -- the
// current Version, the file-number counter, the last sequence number, the
// compaction pointers -- and the manifest store that makes it durable.
// Every change of the persistent state goes through Commit: one manifest
// record, written atomically, then the new version is installed.
//
// Thread-safety: NewFileNumber may be called from any thread. Everything
// else requires the DB mutex (Recover runs alone before other threads
// start), but for WriteCommit, which requires only that the caller be the
// one committer (the DB's commit slot): a file store's commit is two syncs,
// and the DB lets writers go on meanwhile.
#ifndef JIGSAW_VERSION_VERSION_SET_H_
#define JIGSAW_VERSION_VERSION_SET_H_

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "version/manifest.h"
#include "version/version.h"

namespace jigsaw {

class VersionSet {
 public:
  VersionSet() : current_(std::make_shared<Version>()) {}

  // Takes the manifest store, loads the committed manifest into *state and
  // takes its counters; *exists is false for a new database (the counters
  // stay at their start). Called before any other method but
  // NewFileNumber: once, or -- a read-only open -- once per attempt.
  Status Load(std::unique_ptr<ManifestStore> store, ManifestState* state, bool* exists);

  // A new, unique table or log number. Thread-safe.
  uint64_t NewFileNumber() { return next_number_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t next_file_number() const { return next_number_.load(std::memory_order_relaxed); }

  SequenceNumber last_sequence() const { return last_sequence_; }
  void SetLastSequence(SequenceNumber sequence) { last_sequence_ = sequence; }

  const std::shared_ptr<const Version>& current() const { return current_; }
  // Installs `version` without a commit (recovery, before the first one).
  void SetCurrent(std::shared_ptr<const Version> version) { current_ = std::move(version); }

  // Per level, the key after which its next compaction starts (round
  // robin; compaction/picker.h): kNumLevels strings.
  std::string* compact_pointers() { return compact_pointer_; }

  // Writes a manifest of `next` with the live WAL segments `wals` and the
  // compactions in `pending` -- publishing `reservations` and freeing
  // `frees` with it (see ManifestStore::Commit) -- and, if that worked,
  // installs `next` as the current version. On error nothing changes.
  Status Commit(std::shared_ptr<const Version> next, const std::vector<WalSegmentMeta>& wals,
                std::vector<ManifestState::PendingCompaction> pending, std::vector<pmem::Reservation*> reservations,
                std::vector<uint64_t> frees, bool may_use_standby);

  // Commit in three steps, for a caller that releases the DB mutex while
  // the manifest is written: the manifest of `next` (DB mutex held), its
  // durable write (only the one committer; no mutex needed), and, if the
  // write worked, its installation (DB mutex held; no other commit between
  // PrepareCommit and FinishCommit).
  ManifestState PrepareCommit(const Version& next, const std::vector<WalSegmentMeta>& wals,
                              std::vector<ManifestState::PendingCompaction> pending) const;
  Status WriteCommit(const ManifestState& state, std::vector<pmem::Reservation*> reservations,
                     std::vector<uint64_t> frees, bool may_use_standby);
  void FinishCommit(const ManifestState& state, std::shared_ptr<const Version> next);
  // Whether WriteCommit waits for a device (a file store's syncs) rather
  // than for a few persists to pmem.
  bool CommitWaitsForDevice() const { return store_->WritesFiles(); }

  // An error found after a commit took effect (see
  // ManifestStore::TakeLateError).
  Status TakeLateError() { return store_->TakeLateError(); }
  // The pool object of the committed manifest (0: none, or a file).
  uint64_t manifest_pool_object() const { return store_->pool_object(); }

 private:
  std::unique_ptr<ManifestStore> store_;
  std::shared_ptr<const Version> current_;
  uint64_t generation_ = 0;  // of the committed manifest
  std::atomic<uint64_t> next_number_{1};
  SequenceNumber last_sequence_ = 0;
  std::string compact_pointer_[kNumLevels];
};

}  // namespace jigsaw

#endif  // JIGSAW_VERSION_VERSION_SET_H_
