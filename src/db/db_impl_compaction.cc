// DBImpl's background work: the background thread's loop, flushes,
// compaction steps (picked by compaction/picker.h, merged by
// compaction/merge.h into compaction/output_sink.h's sinks, installed here
// in one commit) and the durability tracker's loop.
#include <algorithm>
#include <chrono>
#include <optional>

#include "db/flush.h"
#include "compaction/merge.h"
#include "compaction/output_sink.h"
#include "db/db_impl.h"
#include "table/iterator_wrappers.h"
#include "pmem/pool_sizing.h"
#include "format/keyset_block.h"
#include "ssd/table.h"
#include "util/guarded_read.h"

namespace jigsaw {

namespace {

// True on a DB's background thread (flushes and automatic compactions).
thread_local bool t_background_thread = false;

}  // namespace

// What a compaction step made, before it is committed.

void DBImpl::BackgroundLoop() {
  t_background_thread = true;
  MutexLock lock(&mutex_);
  while (!shutting_down_) {
    if (!bg_error_.ok()) {
      bg_cv_.Wait();
      continue;
    }
    if (!imm_.empty()) {
      lock.Unlock();
      Status s = FlushOldestImmutable();
      lock.Lock();
      if (s.IsNoSpace()) {
        if (!pool_full_) Log(info_log_, "No room for a flush: %s", s.ToString().c_str());
        pool_full_ = true;
        flush_failed_ = true;
        done_cv_.SignalAll();
        // Compaction may free space; otherwise retry later.
      } else if (!s.ok()) {
        Log(info_log_, "Background error (the store stops taking writes): %s", s.ToString().c_str());
        bg_error_ = s;
        done_cv_.SignalAll();
        continue;
      } else {
        continue;
      }
    }
    Compaction compaction;
    const Version& current = *versions_->current();
    if (current.levels[0].empty()) l0_wanted_by_reads_.store(false, std::memory_order_relaxed);
    const bool wanted_by_reads = l0_wanted_by_reads_.load(std::memory_order_acquire);
    bool read_triggered = false;  // a compaction nothing but reads asked for
    if (!manual_compaction_ &&
        PickCompaction(current, options_, versions_->compact_pointers(), wanted_by_reads, &compaction)) {
      if (compaction.level == 0) {
        read_triggered =
            wanted_by_reads && current.levels[0].size() < static_cast<size_t>(options_.level0_compaction_trigger);
        if (read_triggered) {
          ++counters_.read_triggered_compactions;
          Log(info_log_, "L0 compaction asked for by reads: %zu tables", current.levels[0].size());
        }
        l0_wanted_by_reads_.store(false, std::memory_order_relaxed);
      }
      compaction_running_ = true;
      lock.Unlock();
      // Automatic compactions leave the standby alone: it is kept for
      // flushes and for CompactRange, which must work in a full pool.
      Status s = RunCompaction(&compaction, /*may_use_standby=*/false);
      compaction = Compaction();  // its inputs are freed now unless a reader holds them
      lock.Lock();
      compaction_running_ = false;
      if (pool() != nullptr) tables_->space()->Refill();
      if (s.IsNoSpace() && read_triggered) {
        // Optional work: no room for it says nothing about room for writes.
        Log(info_log_, "No room for an L0 compaction asked for by reads: %s", s.ToString().c_str());
      } else if (s.IsNoSpace()) {
        if (!pool_full_) Log(info_log_, "No room for a compaction: %s", s.ToString().c_str());
        pool_full_ = true;  // writers waiting for compaction get NoSpace
        space_error_ = s;
      } else if (!s.ok()) {
        Log(info_log_, "Background error (the store stops taking writes): %s", s.ToString().c_str());
        bg_error_ = s;
      }
      done_cv_.SignalAll();
      if (s.ok() || (s.IsNoSpace() && read_triggered)) continue;
    }
    bg_cv_.WaitFor(std::chrono::milliseconds(pool_full_ ? 100 : 1000));
  }
}

// ---------------------------------------------------------------------------
// Flush

Status DBImpl::FlushMemTable(const MemTable& mem, TableRef* table, pmem::Reservation* reservation,
                             std::optional<PhaseProfile>* profile) const {
  PhaseProfile timed;
  PhaseProfile* const timing = options_.profile_compactions ? &timed : nullptr;
  Status s = disk_mode() ? FlushToSsdTable(tables_.get(), mem, table, timing)
             : tables_->pmem_table_format() == BlockFormat::kClassic
                 ? FlushToPmemTableImage(tables_.get(), mem, table, reservation, timing)
                 : FlushToPmemBlock(tables_.get(), mem, table, reservation, timing);
  if (s.ok() && options_.profile_compactions) {
    timed.start_s = SecondsSinceOpen();
    *profile = timed;
  }
  return s;
}

void DBImpl::AddRangeTombstones(const MemTable& mem, VersionEdit* edit) {
  if (std::shared_ptr<const RangeTombstoneSet> set = mem.range_tombstones()) {
    edit->added_range_tombstones = set->tombstones();
  }
}

Status DBImpl::FlushOldestImmutable() {
  Immutable imm;
  {
    MutexLock lock(&mutex_);
    if (imm_.empty()) return Status::OK();
    imm = imm_.front();
  }
  TableRef table;
  pmem::Reservation reservation;
  std::optional<PhaseProfile> profile;
  const uint64_t start = SteadyNanos();
  if (imm.mem->num_entries() > 0) {
    Status s = FlushMemTable(*imm.mem, &table, &reservation, &profile);
    if (!s.ok()) {
      Log(info_log_, "Flush of a memtable of %llu entries failed: %s",
          static_cast<unsigned long long>(imm.mem->num_entries()), s.ToString().c_str());
      return s;
    }
  }
  if (archive_->archiving() && !disk_mode() && !imm.archived) ArchiveSegments(imm.wals, imm.wal_ends);
  // No change feed copies these logs while the commit frees them (pmem) or
  // DeleteLogs moves, spares or removes them (log files).
  MutexLock pin(&log_read_mutex_);
  MutexLock lock(&mutex_);
  CommitSlot slot(this);
  // Only this thread removes immutables, and a switch adds them behind.
  assert(!imm_.empty() && imm_.front().mem == imm.mem);
  if (profile.has_value()) AddProfile(*profile);
  VersionEdit edit;
  std::vector<pmem::Reservation*> reservations;
  if (table != nullptr) {
    edit.Add(0, table);
    if (reservation.action != nullptr) reservations.push_back(&reservation);
  }
  AddRangeTombstones(*imm.mem, &edit);
  std::vector<uint64_t> frees;
  if (!disk_mode()) {
    for (const WalSegmentMeta& w : imm.wals) frees.push_back(w.offset);
  }
  CommitChange change;
  change.drop_oldest_immutable = true;
  Status s = Commit(ApplyEdit(*versions_->current(), edit, ucmp_), &change, reservations, frees,
                    /*may_use_standby=*/true, CommitIo::kReleaseMutex);
  if (!s.ok()) {
    if (reservation.action != nullptr) pool()->Cancel(&reservation);
    if (table != nullptr && table->residence == Residence::kSsd) table->obsolete = true;
    return s;
  }
  if (disk_mode()) DeleteLogs(imm.wals);
  if (archive_->archiving()) {
    s = archive_->Purge();
    if (!s.ok()) Log(info_log_, "Archived logs not removed: %s", s.ToString().c_str());
  }
  if (table != nullptr) {
    Log(info_log_, "Flush: %llu entries -> L0 table #%llu (%s), %llu bytes, %.1f ms",
        static_cast<unsigned long long>(table->entries), static_cast<unsigned long long>(table->number),
        table->residence == Residence::kSsd ? "SSD" : "pmem", static_cast<unsigned long long>(table->size),
        (SteadyNanos() - start) / 1e6);
  }
  ++counters_.flushes;
  pool_full_ = false;
  space_error_ = Status::OK();
  flush_failed_ = false;
  done_cv_.SignalAll();
  if (pool() != nullptr) tables_->space()->Refill();
  return Status::OK();
}

Status DBImpl::FlushImmutablesDuringCompaction(uint64_t* nanos) {
  if (!has_imm_.load(std::memory_order_acquire)) return Status::OK();
  const uint64_t start = SteadyNanos();
  Status result;
  for (;;) {
    {
      MutexLock lock(&mutex_);
      // Failures and their retries are BackgroundLoop's business.
      if (imm_.empty() || !bg_error_.ok() || flush_failed_ || shutting_down_) break;
    }
    Status s = FlushOldestImmutable();
    MutexLock lock(&mutex_);
    if (s.ok()) {
      ++counters_.flushes_within_compactions;
      continue;
    }
    if (s.IsNoSpace()) {
      pool_full_ = true;  // the compaction goes on: it may free space
      flush_failed_ = true;
    } else {
      if (bg_error_.ok()) bg_error_ = s;
      result = s;  // the store stops: so does the compaction
    }
    done_cv_.SignalAll();
    break;
  }
  *nanos += SteadyNanos() - start;
  return result;
}

bool DBImpl::PoolHasRoomForFlushesDuringCompaction(uint64_t input_bytes) const {
  if (pool() == nullptr) return false;
  const uint64_t heap = PoolHeapChunks(pool()->pool_size()) * kPoolChunk;
  const uint64_t held_back = tables_->space()->complete_chunks() * kPoolChunk;
  // The outputs: at most the inputs' bytes, each block rounded up to whole
  // chunks; the flushes: an L0 block per memtable (active and frozen).
  const uint64_t outputs = input_bytes + input_bytes / 8 + 2 * OutputBlockChunks(options_.TableSize()) * kPoolChunk;
  const uint64_t flushes = (1 + static_cast<uint64_t>(options_.max_immutable_memtables)) *
                           ObjectChunks(options_.memtable_size + kPoolChunkHeader) * kPoolChunk;
  return pool()->used_bytes() + held_back + outputs + flushes <= heap;
}

// ---------------------------------------------------------------------------
// Compaction

bool DBImpl::OutputToSsd(const Version& version, int output_level, uint64_t bytes) const {
  const uint64_t budget = pool() != nullptr ? PmemBlockBudget(options_, pool()->pool_size()) : 0;
  return ::jigsaw::OutputToSsd(version, options_, budget, pool_full_, output_level, bytes);
}

int64_t DBImpl::AddProfile(PhaseProfile profile) {
  profiles_.push_back(profile);
  return static_cast<int64_t>(profiles_.size()) - 1;
}

double DBImpl::SecondsSinceOpen() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - opened_at_).count();
}

SequenceNumber DBImpl::SmallestSnapshot() const {
  return snapshots_.empty() ? versions_->last_sequence() : *snapshots_.begin();
}

void DBImpl::WaitUntilInputsDurable(const Compaction& compaction) {
  // Redoing a pending compaction at recovery needs its outputs untouched and
  // its output range free.
  while (ConflictsWithPending(ucmp_, compaction, pending_) && bg_error_.ok()) done_cv_.Wait();
}

Status DBImpl::RunCompaction(Compaction* compaction, bool may_use_standby) {
  SequenceNumber smallest_snapshot;
  std::shared_ptr<const Version> base;
  const uint64_t bytes_read = compaction->InputBytes();
  bool to_ssd;
  {
    MutexLock lock(&mutex_);
    WaitUntilInputsDurable(*compaction);
    if (!bg_error_.ok()) return bg_error_;
    smallest_snapshot = SmallestSnapshot();
    base = versions_->current();
    to_ssd = OutputToSsd(*base, compaction->output_level(), bytes_read);
  }
  if (IsTrivialMove(*compaction, ucmp_, to_ssd)) {
    MutexLock lock(&mutex_);
    return InstallTrivialMove(*compaction);
  }
  const uint64_t run_start = SteadyNanos();
  const bool profiling = options_.profile_compactions;
  PhaseProfile profile;
  const uint64_t start_ns = profiling ? SteadyNanos() : 0;
  CompactionOutputs out;
  Status s = IsMigration(*compaction, ucmp_, to_ssd) && MigratesAsBytes(*compaction)
                 ? MigrateBlocks(*compaction, &out, profiling ? &profile : nullptr)
                 : WriteCompactionOutputs(*compaction, to_ssd, smallest_snapshot, *base, may_use_standby, &out,
                                          profiling ? &profile : nullptr);
  if (profiling) {
    profile.start_s = SecondsSinceOpen();
    profile.level = compaction->level;
    profile.to_ssd = to_ssd;
    profile.bytes_in = bytes_read;
    profile.Finish(SteadyNanos() - start_ns);
  }
  if (s.ok()) {
    MutexLock lock(&mutex_);
    // Read before the install hands the outputs' files to the tracker.
    uint64_t bytes_written = 0;
    for (const auto* tables : {&out.outputs, &out.remainder}) {
      for (const TableRef& t : *tables) bytes_written += t->size;
    }
    const size_t outputs = out.outputs.size() + out.remainder.size();
    const uint64_t migrated = out.tables_migrated, entries = out.entries_read, spliced = out.entries_spliced;
    s = InstallCompaction(*compaction, to_ssd, &out, profiling ? &profile : nullptr, may_use_standby);
    const double ms = (SteadyNanos() - run_start) / 1e6;
    if (!s.ok()) {
      Log(info_log_, "Compaction L%d -> L%d failed: %s", compaction->level, compaction->output_level(),
          s.ToString().c_str());
    } else if (migrated > 0) {
      Log(info_log_, "Migration L%d -> L%d: %llu pmem blocks, %llu bytes, written to SSD tables as their bytes, %.1f ms",
          compaction->level, compaction->output_level(), static_cast<unsigned long long>(migrated),
          static_cast<unsigned long long>(bytes_written), ms);
    } else {
      Log(info_log_,
          "Compaction L%d -> L%d%s: %zu+%zu tables, %llu bytes -> %zu tables, %llu bytes; %llu entries merged, "
          "%llu of them spliced as bytes; %.1f ms",
          compaction->level, compaction->output_level(), to_ssd ? " (SSD)" : "", compaction->inputs[0].size(),
          compaction->inputs[1].size(), static_cast<unsigned long long>(bytes_read), outputs,
          static_cast<unsigned long long>(bytes_written), static_cast<unsigned long long>(entries),
          static_cast<unsigned long long>(spliced), ms);
    }
  } else {
    Log(info_log_, "Compaction L%d -> L%d failed: %s", compaction->level, compaction->output_level(),
        s.ToString().c_str());
  }
  // Inputs no reader holds are freed when `compaction` and `base` let go;
  // the standby is refilled by the next flush or compaction.
  if (!s.ok()) out.Abandon(pool());
  if (s.ok()) s = DropSpentRangeTombstones();
  return s;
}

bool DBImpl::HoldsCoveredVersion(const TableMeta& table, const RangeTombstone& tombstone) {
  const auto key = std::make_pair(table.number, tombstone.sequence);
  auto memo = tables_covered_.find(key);
  if (memo != tables_covered_.end()) return memo->second;
  std::unique_ptr<InternalIterator> it = table.table->NewIterator(ReadOptions());
  bool holds = false;
  for (it->Seek(tombstone.begin); it->Valid() && ucmp_->Compare(it->user_key(), tombstone.end) < 0; it->Next()) {
    if (it->sequence() < tombstone.sequence) {
      holds = true;
      break;
    }
  }
  if (!it->status().ok()) return true;  // unknown: kept, asked again next time
  tables_covered_[key] = holds;
  return holds;
}

Status DBImpl::DropSpentRangeTombstones() {
  MutexLock gc(&range_gc_mutex_);
  std::shared_ptr<const Version> base;
  {
    MutexLock lock(&mutex_);
    // A pending compaction redone at recovery keeps every version of its
    // inputs: nothing is spent while one may be redone.
    if (!pending_.empty()) return Status::OK();
    base = versions_->current();
  }
  if (base->range_tombstones == nullptr) {
    tables_covered_.clear();
    return Status::OK();
  }
  // Answers about tables and tombstones that have left the tree go.
  std::set<uint64_t> live;
  for (const auto& tables : base->levels) {
    for (const TableRef& t : tables) live.insert(t->number);
  }
  std::erase_if(tables_covered_, [&](const auto& memo) { return live.count(memo.first.first) == 0; });
  std::vector<SequenceNumber> spent;
  for (const RangeTombstone& t : base->range_tombstones->tombstones()) {
    bool holds = false;
    for (int level = 0; level < kNumLevels && !holds; ++level) {
      for (const TableRef& table : base->Overlapping(ucmp_, level, t.begin, t.end)) {
        if (HoldsCoveredVersion(*table, t)) {
          holds = true;
          break;
        }
      }
    }
    if (!holds) spent.push_back(t.sequence);
  }
  if (spent.empty()) return Status::OK();
  MutexLock lock(&mutex_);
  if (!pending_.empty()) return Status::OK();
  CommitSlot slot(this);
  // Tables added since `base` hold nothing these cover: flushes hold newer
  // versions, compactions' outputs come from tables checked here, an
  // ingest under a tombstone takes a newer sequence.
  VersionEdit edit;
  edit.removed_range_tombstones = spent;
  Status s = Commit(ApplyEdit(*versions_->current(), edit, ucmp_), nullptr, {}, {}, /*may_use_standby=*/true,
                    CommitIo::kReleaseMutex);
  if (!s.ok()) return s;
  std::erase_if(tables_covered_, [&](const auto& memo) {
    return std::find(spent.begin(), spent.end(), memo.first.second) != spent.end();
  });
  Log(info_log_, "Range tombstones dropped: %zu, no table holds a version they cover", spent.size());
  return Status::OK();
}

Status DBImpl::WriteCompactionOutputs(const Compaction& compaction, bool to_ssd, SequenceNumber smallest_snapshot,
                                      const Version& base, bool may_use_standby, CompactionOutputs* out,
                                      PhaseProfile* profile) {
  if (compaction.split && (to_ssd || !AllInPmem(compaction.inputs[0]))) {
    // CompactRange checked this against an older version; flushes since may
    // have moved the output level past the pmem budget.
    return Status::NoSpace("a split compaction step needs pmem outputs");
  }
  // Profiling: the inputs charge the block format's work (opening blocks,
  // stepping their iterators) to decode; block reads are timed where they
  // happen and taken out of it. The sinks charge encode, write and sync.
  OutputPhases phases;
  OutputPhases* const timed = profile != nullptr ? &phases : nullptr;
  SampledPhase decode([](const void*) { return ssd::ThreadReadNanos(); });
  SampledPhase* const decode_phase = profile != nullptr ? &decode : nullptr;
  const uint64_t read_before = profile != nullptr ? ssd::ThreadReadNanos() : 0;

  MergeRules rules;
  rules.ucmp = ucmp_;
  rules.smallest_snapshot = smallest_snapshot;
  rules.base = &base;
  rules.range_tombstones = base.range_tombstones.get();
  rules.output_level = compaction.output_level();
  std::function<Status()> between_outputs;
  // Into pmem only while the pool has room for the compaction's outputs
  // beside the flushes' blocks: in a tight pool a flush in its middle would
  // take space its outputs were sized against.
  uint64_t input_bytes = 0;
  for (const auto& inputs : compaction.inputs) {
    for (const TableRef& t : inputs) input_bytes += t->size;
  }
  if (t_background_thread) {
    between_outputs = [this, profile, to_ssd, input_bytes] {
      if (!to_ssd && !PoolHasRoomForFlushesDuringCompaction(input_bytes)) return Status::OK();
      uint64_t flush_ns = 0;
      Status s = FlushImmutablesDuringCompaction(&flush_ns);
      if (profile != nullptr) profile->preempted_ns += flush_ns;
      return s;
    };
  }
  uint64_t entries = 0;
  uint64_t spliced = 0;
  // A split step's first merge makes the outputs of the keys up to
  // split_key; the second puts the upper inputs' keys above it back at
  // their level.
  const std::string* const upto = compaction.split ? &compaction.split_key : nullptr;
  Status s;
  if (to_ssd) {
    SsdTableSink sink(tables_.get(), /*sync_each=*/false, timed);
    s = MergeCompaction(compaction, 2, nullptr, upto, rules, &sink, between_outputs, decode_phase, &entries, &spliced);
    if (!s.ok()) sink.Abandon();
    out->outputs = std::move(sink.outputs());
    out->files = std::move(sink.files());
  } else {
    std::unique_ptr<PmemSink> sink = NewPmemSink(tables_.get(), may_use_standby, timed);
    s = MergeCompaction(compaction, 2, nullptr, upto, rules, sink.get(), between_outputs, decode_phase, &entries,
                        &spliced);
    if (!s.ok()) sink->Abandon();
    out->outputs = std::move(sink->outputs());
    out->reservations = std::move(sink->reservations());
  }
  if (s.ok() && compaction.split) {
    rules.output_level = compaction.level;
    std::unique_ptr<PmemSink> sink = NewPmemSink(tables_.get(), may_use_standby, timed);
    s = MergeCompaction(compaction, 1, &compaction.split_key, nullptr, rules, sink.get(), {}, decode_phase, &entries,
                        &spliced);
    if (!s.ok()) sink->Abandon();
    out->remainder = std::move(sink->outputs());
    for (auto& r : sink->reservations()) out->reservations.push_back(std::move(r));
  }
  if (profile != nullptr) {
    phases.AddTo(profile);
    profile->read_ns = ssd::ThreadReadNanos() - read_before;
    profile->decode_ns = decode.EstimatedNanos();
    profile->decode_convert_ns = decode.EstimatedPartNanos(WorkPart::kConvert);
    profile->instrumentation_ns += decode.InstrumentationNanos();
    for (const auto* tables : {&out->outputs, &out->remainder}) {
      for (const TableRef& t : *tables) profile->bytes_out += t->size;
    }
    profile->entries += entries;
    profile->entries_spliced += spliced;
  }
  out->entries_read = entries;
  out->entries_spliced = spliced;
  return s;
}

bool DBImpl::MigratesAsBytes(const Compaction& compaction) const {
  if (pool() == nullptr) return false;
  for (const TableRef& t : compaction.inputs[0]) {
    if (t->pmem_layout == PmemLayout::kTableImage) {
      // An image is a table file of classic blocks: it becomes one as is
      // where new SSD tables are classic.
      if (tables_->ssd_block_format() != BlockFormat::kClassic) return false;
      continue;
    }
    keyset::BlockOutline outline;
    Status read;
    if (tables_->ssd_block_format() != BlockFormat::kKeySet ||
        !GuardedRead([&] { read = keyset::ReadOutline(pool()->Direct(t->offset), t->size, ucmp_, &outline); }) ||
        !read.ok() || !outline.piece_reads) {
      return false;
    }
  }
  return true;
}

Status DBImpl::MigrateBlocks(const Compaction& compaction, CompactionOutputs* out, PhaseProfile* profile) {
  OutputPhases phases;
  std::vector<TableRef> inputs = compaction.inputs[0];  // L0 is newest first: into key order
  std::sort(inputs.begin(), inputs.end(),
            [&](const TableRef& a, const TableRef& b) { return ucmp_->Compare(a->smallest, b->smallest) < 0; });
  SsdTableSink sink(tables_.get(), /*sync_each=*/false, profile != nullptr ? &phases : nullptr);
  Status s;
  for (const TableRef& t : inputs) {
    // The write reads the object from NVM, sequentially.
    if (pool()->timing() != nullptr) pool()->timing()->ChargeSequentialRead(t->size);
    const Slice bytes(pool()->Direct(t->offset), t->size);
    // The sink copies the bytes unguarded: a block with a media error is a
    // failed migration, not a SIGBUS (util/guarded_read.h).
    if (!ProbeReadable(bytes.data(), bytes.size())) {
      s = Status::Corruption("block " + std::to_string(t->number),
                             "unreadable pool memory at " + DescribeUnreadable(bytes.data(), bytes.size()));
      break;
    }
    s = t->pmem_layout == PmemLayout::kTableImage ? sink.AddTableImage(bytes)
                                                  : sink.AddWholeBlock(bytes, t->smallest, t->largest);
    if (!s.ok()) break;
    ++out->tables_migrated;
    out->bytes_migrated += t->size;
  }
  if (!s.ok()) sink.Abandon();
  out->outputs = std::move(sink.outputs());
  out->files = std::move(sink.files());
  if (profile != nullptr) {
    phases.AddTo(profile);
    for (const TableRef& t : out->outputs) profile->bytes_out += t->size;
    profile->entries_migrated = sink.entries_added();
  }
  return s;
}

Status DBImpl::InstallCompaction(const Compaction& compaction, bool to_ssd, CompactionOutputs* out,
                                 const PhaseProfile* profile, bool may_use_standby) {
  CommitSlot slot(this);
  VersionEdit edit;
  for (const auto& inputs : compaction.inputs) edit.Remove(inputs);
  uint64_t bytes_written = 0;
  for (const TableRef& t : out->outputs) {
    edit.Add(compaction.output_level(), t);
    bytes_written += t->size;
  }
  // L0 is newest first: a split there takes all of L0, so its remainder is
  // older than every table flushed meanwhile. (It may be several tables;
  // the next step takes them all again.)
  for (const TableRef& t : out->remainder) {
    edit.Add(compaction.level, t);
    bytes_written += t->size;
  }
  edit.l0_added_are_oldest = true;
  std::vector<pmem::Reservation*> publish;
  for (auto& r : out->reservations) publish.push_back(&r);
  const int64_t profile_index = profile != nullptr ? AddProfile(*profile) : -1;
  // NobLSM: no sync on the critical path. The inputs stay as shadows until
  // the tracker has made the outputs durable.
  const bool pending = to_ssd && !out->outputs.empty();
  CommitChange change;
  if (pending) {
    PendingCompaction& p = change.add_pending.emplace();
    p.profile = profile_index;
    p.output_level = compaction.output_level();
    p.outputs = out->outputs;
    for (int which = 0; which < 2; ++which) {
      for (const TableRef& t : compaction.inputs[which]) {
        p.shadows.push_back(t);
        p.shadow_levels.push_back(compaction.level + which);
      }
    }
    p.files = std::move(out->files);
  }
  Status s = Commit(ApplyEdit(*versions_->current(), edit, ucmp_), &change, publish, {}, may_use_standby,
                    CommitIo::kReleaseMutex);
  if (!s.ok()) {
    if (pending) out->files = std::move(change.add_pending->files);
    return s;
  }
  out->reservations.clear();  // published
  if (pending) {
    tracker_cv_.Signal();
  } else {
    for (const auto& inputs : compaction.inputs) {
      for (const TableRef& t : inputs) t->obsolete.store(true, std::memory_order_release);
    }
  }
  ++counters_.compactions;
  counters_.compaction_bytes_read += compaction.InputBytes();
  counters_.compaction_bytes_written += bytes_written;
  counters_.compaction_entries_read += out->entries_read;
  counters_.compaction_entries_spliced += out->entries_spliced;
  counters_.tables_migrated += out->tables_migrated;
  counters_.bytes_migrated += out->bytes_migrated;
  pool_full_ = false;
  space_error_ = Status::OK();
  return Status::OK();
}

Status DBImpl::InstallTrivialMove(const Compaction& compaction) {
  CommitSlot slot(this);
  VersionEdit edit;
  edit.Remove(compaction.inputs[0]);
  uint64_t bytes = 0, entries = 0;
  for (const TableRef& t : compaction.inputs[0]) {
    edit.Add(compaction.output_level(), t);
    bytes += t->size;
    entries += t->entries;
  }
  Status s = Commit(ApplyEdit(*versions_->current(), edit, ucmp_), nullptr, {}, {}, /*may_use_standby=*/true,
                    CommitIo::kReleaseMutex);
  if (!s.ok()) return s;
  if (options_.profile_compactions) {
    PhaseProfile profile;
    profile.start_s = SecondsSinceOpen();
    profile.level = compaction.level;
    profile.to_ssd = compaction.inputs[0].front()->residence == Residence::kSsd;
    profile.entries_moved = entries;
    AddProfile(profile);
  }
  Log(info_log_, "Trivial move L%d -> L%d: %zu tables, %llu bytes, by reference", compaction.level,
      compaction.output_level(), compaction.inputs[0].size(), static_cast<unsigned long long>(bytes));
  counters_.tables_moved += compaction.inputs[0].size();
  counters_.bytes_moved += bytes;
  pool_full_ = false;
  space_error_ = Status::OK();
  return Status::OK();
}

// ---------------------------------------------------------------------------
// The durability tracker

void DBImpl::TrackerLoop() {
  MutexLock lock(&mutex_);
  for (;;) {
    while (pending_.empty() && !tracker_stop_) tracker_cv_.Wait();
    if (pending_.empty()) return;  // stopping, and everything is durable
    // Every compaction pending now becomes durable in one round: one sync
    // of their files (one call where the file system can sync itself
    // whole) and one commit.
    const size_t round = pending_.size();
    std::vector<std::unique_ptr<WritableFile>> files;
    std::vector<size_t> taken;  // files taken from each pending compaction
    for (size_t i = 0; i < round; ++i) {
      taken.push_back(pending_[i].files.size());
      for (auto& f : pending_[i].files) files.push_back(std::move(f));
      pending_[i].files.clear();
    }
    lock.Unlock();
    const uint64_t sync_start = SteadyNanos();
    Status s = SyncOutputFiles(tables_.get(), files);
    const uint64_t sync_ns = SteadyNanos() - sync_start;
    lock.Lock();
    // The round's time is shared by its profiled compactions.
    std::vector<int64_t> profiled;
    for (size_t i = 0; i < round; ++i) {
      if (pending_[i].profile >= 0) profiled.push_back(pending_[i].profile);
    }
    for (int64_t p : profiled) profiles_[static_cast<size_t>(p)].sync_ns += sync_ns / profiled.size();
    if (!s.ok()) {
      // The files go back to their compactions, still open.
      size_t next = 0;
      for (size_t i = 0; i < round; ++i) {
        for (size_t j = 0; j < taken[i]; ++j) pending_[i].files.push_back(std::move(files[next++]));
      }
      Log(info_log_, "Durability tracker: syncing %zu compactions' table files failed: %s", round,
          s.ToString().c_str());
      if (s.IsNoSpace() && !tracker_stop_) {
        // A full device: keep the outputs pending and retry; writers see
        // NoSpace meanwhile.
        pool_full_ = true;
        space_error_ = s;
        done_cv_.SignalAll();
        tracker_cv_.WaitFor(std::chrono::milliseconds(100));
        continue;
      }
      if (bg_error_.ok()) bg_error_ = s;
      done_cv_.SignalAll();
      return;  // the outputs stay pending; recovery redoes them from the shadows
    }
    for (auto& f : files) (void)f->Close();  // synced: a close error loses nothing
    std::vector<TableRef> shadows;
    {
      CommitSlot slot(this);
      // Compactions installed meanwhile are behind the round: only this
      // thread removes pending ones.
      for (size_t i = 0; i < round; ++i) {
        shadows.insert(shadows.end(), pending_[i].shadows.begin(), pending_[i].shadows.end());
      }
      CommitChange change;
      change.drop_oldest_pending = round;
      s = Commit(versions_->current(), &change, {}, {}, /*may_use_standby=*/true, CommitIo::kReleaseMutex);
    }
    if (s.ok()) {
      for (const TableRef& t : shadows) t->obsolete.store(true, std::memory_order_release);
      ++counters_.tracker_rounds;
      counters_.tracker_compactions += round;
      Log(info_log_, "Durability tracker: %zu compactions' %zu table files made durable in one round, %.1f ms", round,
          files.size(), sync_ns / 1e6);
      if (pending_.empty() && versions_->current()->range_tombstones != nullptr) {
        // What the round's compactions deleted under range tombstones can
        // no longer come back in a redo: the tombstones may be spent.
        lock.Unlock();
        s = DropSpentRangeTombstones();
        if (!s.ok()) Log(info_log_, "Range tombstones not dropped: %s", s.ToString().c_str());
        lock.Lock();
      }
    } else {
      // The record on media still lists the compactions as pending: they
      // stay (with their shadows); retry the commit; at shutdown recovery
      // finishes them.
      done_cv_.SignalAll();
      if (tracker_stop_) return;
      tracker_cv_.WaitFor(std::chrono::milliseconds(100));
      continue;
    }
    done_cv_.SignalAll();
  }
}

}  // namespace jigsaw
