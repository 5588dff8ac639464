// DBImpl's read path: the read state readers load without mutex_
// (PublishReadState), read views, Get, MultiGet and NewIterator over the
// memtables and the version's search runs, the L0 charges of
// read-triggered compaction, and snapshots.
#include <algorithm>
#include <cassert>

#include "db/db_impl.h"
#include "db/db_iter.h"
#include "format/bloom.h"  // XXH3_64bits, the key hash of tables' hash indexes and filters
#include "ssd/table.h"
#include "table/merging_iterator.h"
#include "util/key_prefix.h"
#include "version/level_iterator.h"

namespace jigsaw {

namespace {

// Read-triggered compaction's cost model
// (docs/design/008-read-triggered-compactions.md), from this project's measurements: a Get's search of
// an L0 table that does not hold its key costs about what compacting 64
// bytes of pmem tables does (~35 ns; an L0 compaction into pmem ~0.45 ns
// per byte, into SSD tables ~1 ns: their bytes count twice), and a scan
// pays about 1/16 of such a probe per entry for each L0 table in its merge.
constexpr uint64_t kBytesPerWastedProbe = 64;
constexpr uint64_t kScanStepsPerProbe = 16;
// Gets charge their waste in samples: one Get in this many, for all.
constexpr uint32_t kReadChargeSample = 64;

class SnapshotImpl final : public Snapshot {
 public:
  explicit SnapshotImpl(SequenceNumber sequence) : sequence_(sequence) {}
  ~SnapshotImpl() override = default;
  uint64_t sequence() const override { return sequence_; }

 private:
  const SequenceNumber sequence_;
};

}  // namespace

void DBImpl::PublishReadState() {
  std::shared_ptr<ReadState> building = std::make_shared<ReadState>();
  ReadState* state = building.get();
  state->db = this;
  state->mem = mem_;
  for (auto it = imm_.rbegin(); it != imm_.rend(); ++it) {
    assert(it->mem != mem_);  // each memtable once (db_impl.h, "What a read searches")
    state->imm.push_back(it->mem);
  }
  state->version = versions_->current();
  const bool fences = ucmp_ == BytewiseComparator();
  auto add_run = [&](std::span<const TableRef> tables) {
    SearchRun run;
    run.tables = tables;
    if (fences) {
      run.smallest.reserve(tables.size());
      run.largest.reserve(tables.size());
      for (const TableRef& t : tables) {
        run.smallest.push_back(LoadKeyPrefix(t->smallest));
        run.largest.push_back(LoadKeyPrefix(t->largest));
      }
    }
    state->runs.push_back(std::move(run));
  };
  const auto& levels = state->version->levels;
  for (const TableRef& t : levels[0]) add_run(std::span<const TableRef>(&t, 1));
  for (int level = 1; level < kNumLevels; ++level) {
    if (!levels[level].empty()) add_run(levels[level]);
  }
  if (options_.read_triggered_compactions && !levels[0].empty()) {
    // What compacting L0 would cost: its tables and their overlap in L1,
    // each byte worth 1/kBytesPerWastedProbe of a probe -- twice that for
    // an SSD table, whose merge writes a file and syncs it.
    Compaction l0;
    l0.inputs[0] = levels[0];
    AddOverlappingInputs(*state->version, ucmp_, &l0);
    uint64_t bytes = 0;
    for (const auto& tables : l0.inputs) {
      for (const TableRef& t : tables) bytes += t->residence == Residence::kSsd ? 2 * t->size : t->size;
    }
    state->l0_read_budget = std::max<uint64_t>(1, bytes / kBytesPerWastedProbe);
  }
  published_version_.store(state->version.get(), std::memory_order_release);
  std::shared_ptr<const ReadState> published = std::move(building);
  {
    MutexLock lock(&read_state_mutex_);
    read_state_.swap(published);
  }  // the previous state is released outside the lock
  read_state_cache_.Invalidate();
  visible_sequence_.store(versions_->last_sequence(), std::memory_order_release);
}

DBImpl::ReadView DBImpl::GetReadView(const ReadOptions& options) {
  ReadView view;
  {
    // The state a Get on this thread would read, taken from the thread's
    // lease without read_state_mutex_ (which every reading core would
    // otherwise pass between them).
    const PerThreadCache<ReadState>::Lease lease = read_state_cache_.Acquire([this] { return PublishedReadState(); });
    view.pin = lease.get() != nullptr ? lease.Share() : PublishedReadState();
  }
  view.state = view.pin.get();
  view.sequence = ReadSequence(options);
  return view;
}

bool DBImpl::IsCurrentReadView(const ReadOptions& options, const ReadView& view) {
  const PerThreadCache<ReadState>::Lease lease = read_state_cache_.Acquire([this] { return PublishedReadState(); });
  if (lease.get() == nullptr) {
    const ReadView now = GetReadView(options);
    return now.state == view.state && now.sequence == view.sequence;
  }
  return lease.get() == view.state && ReadSequence(options) == view.sequence;
}

std::shared_ptr<const DBImpl::ReadState> DBImpl::PublishedReadState() const {
  MutexLock lock(&read_state_mutex_);
  return read_state_;
}

SequenceNumber DBImpl::ReadSequence(const ReadOptions& options) const {
  // Loaded after the state: a compaction in the state dropped only
  // versions shadowed at or below a sequence visible before it was
  // published, so none that this sequence still needs.
  return options.snapshot != nullptr ? static_cast<const SnapshotImpl*>(options.snapshot)->sequence()
                                     : visible_sequence_.load(std::memory_order_acquire);
}

DBImpl::ReadView DBImpl::GetCompleteReadView() {
  for (;;) {
    ReadView view;
    view.pin = PublishedReadState();
    view.state = view.pin.get();
    view.sequence = ReadSequence(ReadOptions());
    MutexLock lock(&read_state_mutex_);
    if (read_state_ == view.pin) return view;
  }
}

bool DBImpl::MemTablesGet(const ReadView& view, const Slice& key, std::string* value, Status* status,
                          SequenceNumber* found_sequence) const {
  ValueType type;
  bool found = view.state->mem->Get(key, view.sequence, &type, value, found_sequence);
  for (size_t i = 0; !found && i < view.state->imm.size(); ++i) {
    found = view.state->imm[i]->Get(key, view.sequence, &type, value, found_sequence);
  }
  if (found) *status = type == ValueType::kValue ? Status::OK() : Status::NotFound(Slice());
  return found;
}

SequenceNumber DBImpl::CoveringTombstone(const ReadView& view, const Slice& key) const {
  SequenceNumber covering = 0;
  const ReadState& state = *view.state;
  if (state.version->range_tombstones != nullptr) {
    covering = state.version->range_tombstones->Covering(key, view.sequence);
  }
  auto add = [&](const MemTable& mem) {
    if (mem.has_range_tombstones()) covering = std::max(covering, mem.range_tombstones()->Covering(key, view.sequence));
  };
  add(*state.mem);
  for (const auto& imm : state.imm) add(*imm);
  return covering;
}

std::shared_ptr<const RangeTombstoneSet> DBImpl::RangeTombstones(const ReadView& view) const {
  const ReadState& state = *view.state;
  std::shared_ptr<const RangeTombstoneSet> all = state.version->range_tombstones;
  all = MergeRangeTombstones(ucmp_, all, state.mem->range_tombstones());
  for (const auto& imm : state.imm) all = MergeRangeTombstones(ucmp_, all, imm->range_tombstones());
  return all;
}

std::span<const TableRef> DBImpl::Candidates(const SearchRun& run, const KeyTarget& target) const {
  const std::span<const TableRef> tables = run.tables;
  // <0, 0, >0 as table i's first or last key sorts before, with, after the
  // key: by its prefix when the run has them.
  auto compare = [&](size_t i, const std::vector<KeyPrefix>& prefixes, const std::string TableMeta::*bound) {
    const std::string& key = (*tables[i]).*bound;
    return prefixes.empty() ? target.Compare(key) : target.CompareLazily(prefixes[i], [&] { return Slice(key); });
  };
  // The first table whose last key is >= the key, then those after it
  // whose first key is <= the key.
  size_t first = 0;
  for (size_t n = tables.size(); n > 0;) {
    const size_t half = n / 2;
    if (compare(first + half, run.largest, &TableMeta::largest) < 0) {
      first += half + 1;
      n -= half + 1;
    } else {
      n = half;
    }
  }
  size_t last = first;
  while (last < tables.size() && compare(last, run.smallest, &TableMeta::smallest) <= 0) ++last;
  return tables.subspan(first, last - first);
}

Status DBImpl::TableGet(const ReadOptions& options, const TableMeta& block, const Slice& key,
                        SequenceNumber sequence, std::string* value, bool* done, SequenceNumber* found) const {
  ValueType type;
  Status s = block.table->Get(options, key, sequence, &type, value, found);
  if (s.IsNotFound()) return Status::OK();
  *done = true;
  if (!s.ok()) return s;
  return type == ValueType::kValue ? Status::OK() : Status::NotFound(Slice());
}

Status DBImpl::Get(const ReadOptions& options, const Slice& key, std::string* value) {
  const PerThreadCache<ReadState>::Lease lease = read_state_cache_.Acquire([this] { return PublishedReadState(); });
  if (lease.get() == nullptr) return GetInView(options, GetReadView(options), key, value);
  ReadView view;
  view.state = lease.get();
  view.sequence = ReadSequence(options);
  return GetInView(options, view, key, value);
}

Status DBImpl::GetInView(const ReadOptions& options, const ReadView& view, const Slice& key, std::string* value) {
  Status s;
  SequenceNumber found = 0;
  // A version below a covering range tombstone is deleted.
  const SequenceNumber covering = CoveringTombstone(view, key);
  if (MemTablesGet(view, key, value, &s, &found)) return found < covering ? Status::NotFound(Slice()) : s;
  // Runs in search order: each L0 block, newest first (they may overlap),
  // then each level. They are searched in batches whose candidate tables
  // are all hinted first, so that their first cache misses (a hash index
  // slot, a filter line) overlap instead of adding up.
  const std::vector<SearchRun>& runs = view.state->runs;
  const KeyTarget target(ucmp_, key);
  const uint64_t key_hash = XXH3_64bits(key.data(), key.size());
  constexpr size_t kBatch = 32;
  // Trivially constructed: a Get does not zero 768 bytes of stack.
  struct Batched {
    const TableRef* tables;
    size_t count;
    size_t run;
  };
  Batched batch[kBatch];
  const size_t l0_runs = view.state->version->levels[0].size();
  size_t l0_missed = 0;  // L0 tables searched that did not decide the key
  bool done = false;
  for (size_t next = 0; next < runs.size() && !done;) {
    size_t count = 0;
    for (; next < runs.size() && count < kBatch; ++next) {
      const std::span<const TableRef> candidates = Candidates(runs[next], target);
      if (candidates.empty()) continue;
      for (const TableRef& table : candidates) table->table->PrefetchForGet(key_hash);
      batch[count++] = {candidates.data(), candidates.size(), next};
    }
    for (size_t i = 0; i < count && !done; ++i) {
      for (const TableRef& table : std::span<const TableRef>(batch[i].tables, batch[i].count)) {
        s = TableGet(options, *table, key, view.sequence, value, &done, &found);
        if (done) break;
        if (batch[i].run < l0_runs) ++l0_missed;
      }
    }
  }
  // One Get in kReadChargeSample charges for all of them: readers on
  // several cores do not share a counter's cache line on every Get.
  if (l0_missed > 0 && view.state->l0_read_budget != 0) {
    thread_local uint32_t t_gets = 0;
    if (++t_gets % kReadChargeSample == 0) ChargeL0Reads(*view.state, l0_missed * kReadChargeSample);
  }
  if (done && s.ok() && found < covering) return Status::NotFound(Slice());
  return done ? s : Status::NotFound(Slice());
}

void DBImpl::ChargeL0Reads(const ReadState& state, uint64_t probes) {
  const uint64_t waste = state.l0_read_waste.fetch_add(probes, std::memory_order_relaxed) + probes;
  if (waste < state.l0_read_budget || state.l0_compaction_asked.load(std::memory_order_relaxed) ||
      state.l0_compaction_asked.exchange(true, std::memory_order_relaxed)) {
    return;
  }
  // A stale state (its L0 compacted since, perhaps) asks for nothing.
  if (published_version_.load(std::memory_order_acquire) != state.version.get()) return;
  l0_wanted_by_reads_.store(true, std::memory_order_release);
  // Without mutex_, the background thread may be about to wait and miss
  // this; it wakes on its own within a second.
  bg_cv_.Signal();
}

std::vector<Status> DBImpl::MultiGet(const ReadOptions& options, const std::vector<Slice>& keys,
                                     std::vector<std::string>* values) {
  values->resize(keys.size());
  std::vector<Status> statuses(keys.size(), Status::NotFound(Slice()));
  ReadView view = GetReadView(options);
  std::vector<size_t> pending;  // keys not decided yet
  std::vector<SequenceNumber> covering(keys.size());
  SequenceNumber found = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    covering[i] = CoveringTombstone(view, keys[i]);
    if (!MemTablesGet(view, keys[i], &(*values)[i], &statuses[i], &found)) {
      pending.push_back(i);
    } else if (found < covering[i]) {
      statuses[i] = Status::NotFound(Slice());
    }
  }
  // Runs in the order a Get searches them: each L0 block, then each level.
  const std::vector<SearchRun>& runs = view.state->runs;

  // Batching reads pays only where they run in parallel; with pread a Get
  // reads the same blocks one by one anyway.
  const bool batch_reads = tables_->io()->is_uring();
  std::vector<ssd::BlockFetch> fetches;
  std::vector<std::span<const TableRef>> candidates;  // per pending key
  std::vector<size_t> undecided;
  const size_t l0_runs = view.state->version->levels[0].size();
  uint64_t l0_missed = 0;  // L0 tables searched that did not decide a key
  for (size_t r = 0; r < runs.size(); ++r) {
    const SearchRun& run = runs[r];
    if (pending.empty()) break;
    candidates.clear();
    for (size_t i : pending) candidates.push_back(Candidates(run, KeyTarget(ucmp_, keys[i])));
    if (batch_reads) {  // one batch of reads for every SSD block this run's lookups need
      fetches.clear();
      for (size_t k = 0; k < pending.size(); ++k) {
        for (const TableRef& block : candidates[k]) {
          if (block->residence == Residence::kSsd) {
            static_cast<const ssd::SsdTable*>(block->table.get())->PlanGet(keys[pending[k]], &fetches);
          }
        }
      }
      ssd::FetchBlocks(tables_->io(), std::move(fetches));
      fetches.clear();
    }
    undecided.clear();
    for (size_t k = 0; k < pending.size(); ++k) {
      const size_t i = pending[k];
      bool done = false;
      for (const TableRef& block : candidates[k]) {
        statuses[i] = TableGet(options, *block, keys[i], view.sequence, &(*values)[i], &done, &found);
        if (done) {
          if (statuses[i].ok() && found < covering[i]) statuses[i] = Status::NotFound(Slice());
          break;
        }
        if (r < l0_runs) ++l0_missed;
      }
      if (!done) {
        statuses[i] = Status::NotFound(Slice());
        undecided.push_back(i);
      }
    }
    pending.swap(undecided);
  }
  if (l0_missed > 0 && view.state->l0_read_budget != 0) ChargeL0Reads(*view.state, l0_missed);
  return statuses;
}

void DBImpl::ReadState::Closed(uint64_t moves) const {
  db->ChargeL0Reads(*this, version->levels[0].size() * (1 + moves / kScanStepsPerProbe));
}

// An iterator's probes and its merge, in the read view the iterator took.
class DBImpl::ViewProbe final : public SeekProbe {
 public:
  ViewProbe(DBImpl* db, const ReadOptions& options, ReadView view) : db_(db), options_(options), view_(std::move(view)) {
    options_.iterate_lower_bound = options_.iterate_upper_bound = nullptr;  // the caller's (NewBoundedIterator)
  }
  bool Probe(const Slice& key, std::string* value) override {
    return db_->GetInView(options_, view_, key, value).ok();
  }
  std::unique_ptr<InternalIterator> NewMerge() override { return db_->NewMerge(options_, view_, &tombstones_); }
  std::unique_ptr<SeekProbe> Renew() override {
    if (db_->IsCurrentReadView(options_, view_)) return nullptr;
    return std::make_unique<ViewProbe>(db_, options_, db_->GetReadView(options_));
  }
  SequenceNumber sequence() const override { return view_.sequence; }
  // Told how many moves an iterator made, which reads owed L0 compactions charge.
  const IteratorObserver* observer() const override {
    return view_.state->l0_read_budget != 0 ? view_.state : nullptr;
  }

 private:
  DBImpl* const db_;  // outlives its iterators (DB::NewIterator)
  ReadOptions options_;
  const ReadView view_;
  std::shared_ptr<const RangeTombstoneSet> tombstones_;  // what the merge's deletion filter reads
};

std::unique_ptr<Iterator> DBImpl::NewIterator(const ReadOptions& options) {
  // The view's read state pins the memtables and the version it reads.
  std::unique_ptr<Iterator> iter =
      NewProbingDBIterator(ucmp_, std::make_unique<ViewProbe>(this, options, GetReadView(options)));
  return NewBoundedIterator(ucmp_, std::move(iter), options.iterate_lower_bound, options.iterate_upper_bound);
}

std::unique_ptr<InternalIterator> DBImpl::NewMerge(const ReadOptions& options, const ReadView& view,
                                                   std::shared_ptr<const RangeTombstoneSet>* tombstones) {
  // Sized once: a short scan is dominated by setting up (ycsbe).
  const Version& version = *view.state->version;
  std::vector<std::unique_ptr<InternalIterator>> children;
  children.reserve(1 + view.state->imm.size() + version.levels[0].size() + kNumLevels - 1);
  children.push_back(view.state->mem->NewIterator(view.sequence));
  for (const auto& imm : view.state->imm) children.push_back(imm->NewIterator(view.sequence));
  for (const TableRef& block : version.levels[0]) children.push_back(block->table->NewIterator(options));
  for (int level = 1; level < kNumLevels; ++level) {
    if (!version.levels[level].empty()) {
      children.push_back(NewLevelIterator(ucmp_, version.levels[level], options));
    }
  }
  std::unique_ptr<InternalIterator> merged = NewMergingIterator(ucmp_, std::move(children));
  *tombstones = RangeTombstones(view);
  if (*tombstones != nullptr) merged = NewRangeDeletionFilter(std::move(merged), tombstones->get(), view.sequence);
  return merged;
}

const Snapshot* DBImpl::GetSnapshot() {
  MutexLock lock(&mutex_);
  snapshots_.insert(versions_->last_sequence());
  return new SnapshotImpl(versions_->last_sequence());
}

void DBImpl::ReleaseSnapshot(const Snapshot* snapshot) {
  if (snapshot == nullptr) return;
  const auto* impl = static_cast<const SnapshotImpl*>(snapshot);
  {
    MutexLock lock(&mutex_);
    auto it = snapshots_.find(impl->sequence());
    if (it != snapshots_.end()) snapshots_.erase(it);
  }
  delete impl;
}

}  // namespace jigsaw
