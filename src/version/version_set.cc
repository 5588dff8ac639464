#include "version/version_set.h"

namespace jigsaw {

Status VersionSet::Load(std::unique_ptr<ManifestStore> store, ManifestState* state, bool* exists) {
  store_ = std::move(store);
  Status s = store_->Load(state, exists);
  if (!s.ok() || !*exists) return s;
  generation_ = state->generation;
  next_number_.store(state->next_number, std::memory_order_relaxed);
  last_sequence_ = state->last_sequence;
  return Status::OK();
}

Status VersionSet::Commit(std::shared_ptr<const Version> next, const std::vector<WalSegmentMeta>& wals,
                          std::vector<ManifestState::PendingCompaction> pending,
                          std::vector<pmem::Reservation*> reservations, std::vector<uint64_t> frees,
                          bool may_use_standby) {
  const ManifestState state = PrepareCommit(*next, wals, std::move(pending));
  Status s = WriteCommit(state, std::move(reservations), std::move(frees), may_use_standby);
  if (s.ok()) FinishCommit(state, std::move(next));
  return s;
}

ManifestState VersionSet::PrepareCommit(const Version& next, const std::vector<WalSegmentMeta>& wals,
                                        std::vector<ManifestState::PendingCompaction> pending) const {
  ManifestState state;
  state.generation = generation_ + 1;
  state.last_sequence = last_sequence_;
  state.next_number = next_file_number();
  state.wal_segments = wals;
  for (int level = 0; level < kNumLevels; ++level) {
    for (const TableRef& t : next.levels[level]) {
      state.blocks.push_back({t->offset, t->size, t->number, level, t->residence, t->pmem_layout});
    }
  }
  state.pending = std::move(pending);
  if (next.range_tombstones != nullptr) state.range_tombstones = next.range_tombstones->tombstones();
  return state;
}

Status VersionSet::WriteCommit(const ManifestState& state, std::vector<pmem::Reservation*> reservations,
                               std::vector<uint64_t> frees, bool may_use_standby) {
  return store_->Commit(state, std::move(reservations), std::move(frees), may_use_standby);
}

void VersionSet::FinishCommit(const ManifestState& state, std::shared_ptr<const Version> next) {
  generation_ = state.generation;
  current_ = std::move(next);
}

}  // namespace jigsaw
