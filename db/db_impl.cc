#include "db/db_impl.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <thread>

#include <nlohmann/json.hpp>

#include "db/db_identity.h"
#include "db/db_iter.h"
#include "format/bloom.h"  // XXH3_64bits, the key hash of tables' hash indexes and filters
#include "version/level_iterator.h"
#include "db/write_batch_internal.h"
#include "pmem/device.h"
#include "pmem/pool_sizing.h"
#include "ssd/table.h"
#include "table/merging_iterator.h"
#include "version/filename.h"
#include "util/key_prefix.h"

namespace jigsaw {

Snapshot::~Snapshot() = default;
DB::~DB() = default;

namespace {

// Read-triggered compaction's cost model (docs/decisions.md, "Compactions
// asked for by reads"), from this project's measurements: a Get's search of
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
  explicit SnapshotImpl(SequenceNumber sequence) : sequence(sequence) {}
  ~SnapshotImpl() override = default;
  const SequenceNumber sequence;
};

}  // namespace

std::shared_ptr<MemTable> DBImpl::NewMemTable() const {
  // Arena chunks of 1/16 of the memtable size keep the usage estimate close.
  // The whole-key filter gets 1/64 of it: ~20 bits per key for 16-byte keys
  // and 100-byte values (entry + value ~170 bytes of arena).
  return std::make_shared<MemTable>(ucmp_, std::clamp<size_t>(options_.memtable_size / 16, 4096, 1 << 20),
                                    options_.memtable_size / 64);
}

// ---------------------------------------------------------------------------
// Manifest and WAL segments

std::vector<WalSegmentMeta> DBImpl::LiveWalSegments(size_t skip_oldest_immutables) const {
  std::vector<WalSegmentMeta> segments;
  for (size_t i = skip_oldest_immutables; i < imm_.size(); ++i) {
    segments.insert(segments.end(), imm_[i].wals.begin(), imm_[i].wals.end());
  }
  if (wal_ != nullptr) segments.push_back(mem_wal_);
  return segments;
}

void DBImpl::DeleteLogs(const std::vector<WalSegmentMeta>& logs) {
  // Leftovers of a failed removal, and a spare log when the DB closes or
  // crashes: no manifest names them, so the next open removes them.
  for (const WalSegmentMeta& w : logs) {
    if (options_.reuse_log_files) {
      // The newest log no longer needed is kept for the next one to reuse.
      if (spare_log_ != 0 && spare_log_ < w.number) {
        (void)tables_->fs()->RemoveFile(LogFileName(name_, spare_log_));
        spare_log_ = 0;
      }
      if (spare_log_ == 0) {
        spare_log_ = w.number;
        continue;
      }
    }
    (void)tables_->fs()->RemoveFile(LogFileName(name_, w.number));
  }
}

Status DBImpl::PoolFullStatus(const std::string& detail) {
  if (pool() == nullptr) return Status::NoSpace(detail);  // disk-only mode: the file system's NoSpace says more
  return tables_->space()->FullStatus(detail);
}

Status DBImpl::Commit(std::shared_ptr<const Version> next, CommitChange* change,
                      std::vector<pmem::Reservation*> reservations, std::vector<uint64_t> frees, bool may_use_standby,
                      CommitIo io) {
  assert(committing_);
  CommitChange none;
  if (change == nullptr) change = &none;
  const PendingCompaction* added = change->add_pending.has_value() ? &*change->add_pending : nullptr;
  const ManifestState state =
      versions_->PrepareCommit(*next, LiveWalSegments(change->drop_oldest_immutable ? 1 : 0),
                               PendingManifestEntries(pending_, change->drop_oldest_pending, added));
  Status s;
  if (io == CommitIo::kReleaseMutex && versions_->CommitWaitsForDevice()) {
    VersionSet* const versions = versions_.get();  // WriteCommit needs the slot, not mutex_
    mutex_.Unlock();
    s = versions->WriteCommit(state, std::move(reservations), std::move(frees), may_use_standby);
    mutex_.Lock();
  } else {
    s = versions_->WriteCommit(state, std::move(reservations), std::move(frees), may_use_standby);
  }
  if (!s.ok()) return s;
  versions_->FinishCommit(state, std::move(next));
  if (change->drop_oldest_immutable) {
    imm_.pop_front();
    has_imm_ = !imm_.empty();
  }
  for (size_t i = 0; i < change->drop_oldest_pending; ++i) pending_.pop_front();
  if (added != nullptr) {
    pending_.push_back(std::move(*change->add_pending));
    change->add_pending.reset();
  }
  Status late = versions_->TakeLateError();
  if (!late.ok() && bg_error_.ok()) bg_error_ = late;
  PublishReadState();
  return Status::OK();
}

Status DBImpl::NewWalSegment(size_t min_payload, pmem::Reservation* reservation, WalSegmentMeta* meta,
                             bool may_use_standby, std::unique_ptr<LogWriter>* writer) {
  if (disk_mode()) {
    meta->offset = 0;
    meta->capacity = 0;
    meta->number = versions_->NewFileNumber();
    std::unique_ptr<FileWalWriter> file;
    const std::string reuse = spare_log_ != 0 ? LogFileName(name_, spare_log_) : std::string();
    spare_log_ = 0;  // reused, or removed if it cannot be
    Status s = FileWalWriter::Create(tables_->fs(), LogFileName(name_, meta->number), meta->number, reuse, &file);
    if (!s.ok()) return s;
    *writer = std::move(file);
    return Status::OK();
  }
  // 1.5 x memtable_size, trimmed to its pool chunks (pmem/pool_sizing.h), or
  // what the first record needs.
  uint64_t capacity = std::max<uint64_t>(WalSegmentCapacity(options_.memtable_size),
                                         (kWalHeaderSize + WalRecordSize(min_payload) + 4095) & ~uint64_t{4095});
  // Not zeroed: the writer keeps zeros after its last record (docs/wal.md).
  Status s = tables_->space()->Reserve(pmem::ObjectType::kWalSegment, capacity, /*zero=*/false, reservation, may_use_standby);
  if (!s.ok()) return s;
  meta->offset = reservation->offset;
  meta->capacity = capacity;
  meta->number = versions_->NewFileNumber();
  WalWriter::Format(pool()->region(), reservation->data, capacity, meta->number);
  *writer = std::make_unique<WalWriter>(pool()->region(), reservation->data, capacity, meta->number);
  return Status::OK();
}

// ---------------------------------------------------------------------------
// Writes

Status DBImpl::Put(const WriteOptions& options, const Slice& key, const Slice& value) {
  WriteBatch batch;
  // The header, the type byte, two length prefixes of up to 5 bytes each.
  WriteBatchInternal::Reserve(&batch, WriteBatchInternal::kHeaderSize + 11 + key.size() + value.size());
  batch.Put(key, value);
  return Write(options, &batch);
}

Status DBImpl::Delete(const WriteOptions& options, const Slice& key) {
  WriteBatch batch;
  batch.Delete(key);
  return Write(options, &batch);
}

struct DBImpl::Writer {
  explicit Writer(Mutex* mu) : cv(mu) {}
  WriteBatch* batch = nullptr;
  bool sync = false;
  bool deletes_only = false;
  bool done = false;
  Status status;
  CondVar cv;
  // The next writer of the group this one leads or is part of (set by
  // BuildWriteGroup; the group's writers stay until it is finished).
  Writer* next_in_group = nullptr;
  // Set by the leader (mutex held) when this writer is to insert its own
  // batch into the memtable: concurrent memtable writes.
  InsertingGroup* insert_into = nullptr;
  // Set (with the mutex held) when the writer is done, has reached the
  // front or has an insert to do: lets Await poll without the mutex before
  // it blocks.
  std::atomic<bool> woken{false};
  // True while the writer polls without the mutex: it is on a core and
  // will see `woken` at once, so it can insert its own batch.
  std::atomic<bool> spinning{false};
};

// A group whose WAL record is written and whose batches are being inserted
// into the memtable, by the leader and by the writers given their own
// insert; several such groups may insert at once (pipelined: the next
// leader writes its record meanwhile), and they become visible in sequence
// order (inserting_). Lives on the leader's stack: the leader returns only
// when the group is published.
struct DBImpl::InsertingGroup {
  Writer* leader = nullptr;
  Writer* last = nullptr;
  MemTable* mem = nullptr;
  SequenceNumber last_sequence = 0;
  std::atomic<int> pending{0};  // inserts not yet ended
  bool inserted = false;        // every insert ended (mutex_)
};

void DBImpl::Await(Writer* w, bool for_turn) {
  auto ready = [&]() REQUIRES(mutex_) {
    // A member of a pipelined group has left writers_ (which may be empty)
    // and waits for its insert or for being done, never for the front.
    return w->done ||
           (for_turn && (w->insert_into != nullptr || (!writers_.empty() && w == writers_.front())));
  };
  if (ready()) return;
  // A leader's group on pmem takes about a microsecond: waiting for it by
  // polling costs less than sleeping on the condition variable and being
  // woken, a context switch per writer -- as long as every waiting writer
  // has a core (else polling takes the leader's). Block after ~50 us, as
  // behind a leader that syncs a file.
  static const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  if (writers_.size() > cores) {
    while (!ready()) w->cv.Wait();
    return;
  }
  w->spinning.store(true, std::memory_order_relaxed);
  mutex_.Unlock();
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
  for (int i = 0; !w->woken.load(std::memory_order_acquire); ++i) {
    if (i < 100) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
      continue;
    }
    std::this_thread::yield();
    if (i % 16 == 0 && std::chrono::steady_clock::now() >= give_up) break;
  }
  w->spinning.store(false, std::memory_order_relaxed);
  mutex_.Lock();
  while (!ready()) w->cv.Wait();
}

void DBImpl::BuildWriteGroup(WriteBatch* group, Writer** last) {
  Writer* const first = writers_.front();
  *last = first;
  size_t size = WriteBatchInternal::Contents(*first->batch).size();
  // A small write is not held up by much bigger ones behind it; a group
  // stays well within a WAL segment, so that memtables keep their size.
  const size_t max_size = std::max(
      size, std::min<size_t>(size <= (128 << 10) ? size + (128 << 10) : (1 << 20), options_.memtable_size / 8));
  for (auto it = writers_.begin() + 1; it != writers_.end(); ++it) {
    Writer* w = *it;
    // A non-sync leader must not answer for a sync write; a deletes-only
    // batch keeps the room rules of deletes (MakeRoomForWrite).
    if (w->batch == nullptr || (w->sync && !first->sync) || w->deletes_only != first->deletes_only) break;
    size += WriteBatchInternal::Contents(*w->batch).size() - WriteBatchInternal::kHeaderSize;
    if (size > max_size) break;
    if (*last == first) group->Append(*first->batch);
    group->Append(*w->batch);
    (*last)->next_in_group = w;
    *last = w;
  }
}

void DBImpl::FinishWriteGroup(Writer* self, Writer* last, const Status& status) {
  for (;;) {
    Writer* ready = writers_.front();
    writers_.pop_front();
    if (ready != self) {
      ready->status = status;
      ready->done = true;
      ready->woken.store(true, std::memory_order_release);
      ready->cv.Signal();
    }
    if (ready == last) break;
  }
  if (!writers_.empty()) {
    writers_.front()->woken.store(true, std::memory_order_release);
    writers_.front()->cv.Signal();
  }
}

void DBImpl::CountWriteGroup(Writer* last, bool sync) {
  ++write_groups_;
  if (sync) ++synced_groups_;
  for (Writer* x : writers_) {
    ++write_batches_;
    if (x == last) break;
  }
}

void DBImpl::PublishWriteGroup(SequenceNumber last_sequence) {
  // Readers pin the last sequence: the group becomes visible all at once.
  versions_->SetLastSequence(last_sequence);
  visible_sequence_.store(last_sequence, std::memory_order_release);
}

int DBImpl::StartInserts(Writer* leader, SequenceNumber first_sequence, InsertingGroup* group) {
  int helpers = 0;
  SequenceNumber sequence = first_sequence;
  for (Writer* x = leader;; x = x->next_in_group) {
    WriteBatchInternal::SetSequence(x->batch, sequence);
    sequence += WriteBatchInternal::Count(*x->batch);
    if (x != leader && x->spinning.load(std::memory_order_relaxed)) {
      x->insert_into = group;
      x->woken.store(true, std::memory_order_release);
      x->cv.Signal();
      ++helpers;
    }
    if (x == group->last) break;
  }
  self_inserted_batches_ += helpers;
  group->pending.store(helpers + 1, std::memory_order_relaxed);
  return helpers;
}

void DBImpl::LeaveWriteQueue(Writer* last) {
  for (;;) {
    Writer* x = writers_.front();
    writers_.pop_front();
    if (x == last) break;
  }
  if (!writers_.empty()) {
    writers_.front()->woken.store(true, std::memory_order_release);
    writers_.front()->cv.Signal();
  }
}

Status DBImpl::EndInsert(Writer* w, InsertingGroup* group, const Status& inserted) {
  if (!inserted.ok()) w->status = inserted;  // read by whoever publishes (after the count drops)
  // Reset before the count drops, so that the publisher's wake-up is not lost.
  w->woken.store(false, std::memory_order_relaxed);
  const bool last_to_end = group->pending.fetch_sub(1, std::memory_order_acq_rel) == 1;
  MutexLock lock(&mutex_);
  if (last_to_end) {
    group->inserted = true;
    // Publish every group at the head of inserting_ whose inserts have
    // ended: the groups before them are visible, so their sequences may be.
    while (!inserting_.empty() && inserting_.front()->inserted) {
      InsertingGroup* ready = inserting_.front();
      inserting_.pop_front();
      Status s;
      for (Writer* x = ready->leader;; x = x->next_in_group) {
        if (s.ok()) s = x->status;
        if (x == ready->last) break;
      }
      if (s.ok()) {
        PublishWriteGroup(ready->last_sequence);
      } else if (bg_error_.ok()) {
        bg_error_ = s;  // a batch is half in the memtable: no later write may be published after it
      }
      Writer* x = ready->leader;
      for (;;) {
        // x may return once done is set and the mutex is released: read
        // its link first.
        Writer* const next = x->next_in_group;
        const bool end = x == ready->last;
        x->status = s;
        x->done = true;
        if (x != w) {
          x->woken.store(true, std::memory_order_release);
          x->cv.Signal();
        }
        if (end) break;
        x = next;
      }
      if (inserting_.empty()) inserts_done_cv_.SignalAll();
    }
  }
  Await(w, /*for_turn=*/false);  // until this writer's group is published
  return w->status;
}

Status DBImpl::Write(const WriteOptions& options, WriteBatch* batch) {
  if (batch == nullptr) return Status::InvalidArgument("write batch is null");
  bool deletes_only = false;
  Status s = WriteBatchInternal::CheckLimits(*batch, &deletes_only);
  if (!s.ok()) return s;
  if (WriteBatchInternal::Count(*batch) == 0) return Status::OK();
  Writer w(&mutex_);
  w.batch = batch;
  w.sync = options.sync;
  w.deletes_only = deletes_only;
  MutexLock lock(&mutex_);
  writers_.push_back(&w);
  Await(&w, /*for_turn=*/true);
  if (w.done) return w.status;  // a leader wrote this batch in its group
  if (w.insert_into != nullptr) {
    // The leader wrote this batch into the WAL and left its insert to us.
    InsertingGroup* const group = w.insert_into;
    lock.Unlock();
    const Status inserted = WriteBatchInternal::InsertInto(*batch, group->mem, /*concurrently=*/true);
    return EndInsert(&w, group, inserted);
  }

  // The leader. Room first (this may wait, and others queue meanwhile),
  // then the group of what is queued by then.
  s = MakeRoomForWrite(WriteBatchInternal::Contents(*batch).size(), deletes_only);
  Writer* last = &w;
  WriteBatch joined;
  WriteBatch* group = batch;
  if (s.ok()) {
    BuildWriteGroup(&joined, &last);
    if (last != &w) group = &joined;
    if (group != batch && !wal_->HasRoom(WriteBatchInternal::Contents(*group).size())) {
      // The joined record does not fit what room was made: alone, then.
      last = &w;
      group = batch;
    }
  }
  if (!s.ok()) {
    FinishWriteGroup(&w, last, s);
    return s;
  }
  // Sequences follow those of the groups still inserting.
  const SequenceNumber first_sequence =
      (inserting_.empty() ? versions_->last_sequence() : inserting_.back()->last_sequence) + 1;
  const SequenceNumber last_sequence = first_sequence + WriteBatchInternal::Count(*group) - 1;
  WriteBatchInternal::SetSequence(group, first_sequence);
  LogWriter* const wal = wal_.get();
  MemTable* const mem = mem_.get();
  // Pipelined when another writer is about (in the group, waiting behind
  // it, or inserting): once its record is written the group leaves the
  // queue and inserts while the next leader writes its own record.
  // Otherwise no insert can run beside ours (inserting_ only grows from the
  // front of the queue, which we are) and the leader inserts alone with the
  // faster single-writer MemTable::Add.
  const bool pipelined =
      options_.concurrent_memtable_writes && (last != &w || writers_.back() != last || !inserting_.empty());
  lock.Unlock();
  // The front of the queue alone writes the log.
  s = wal->Append(WriteBatchInternal::Contents(*group), options.sync);
  if (!pipelined) {
    Status inserted;
    if (s.ok()) inserted = WriteBatchInternal::InsertInto(*group, mem);
    lock.Lock();
    if (!s.ok()) {
      bg_error_ = s;  // the log may hold a torn record: no later write may follow it
    } else {
      s = inserted;
      if (s.ok()) PublishWriteGroup(last_sequence);
    }
    CountWriteGroup(last, options.sync);
    FinishWriteGroup(&w, last, s);
    return s;
  }
  lock.Lock();
  CountWriteGroup(last, options.sync);
  if (!s.ok()) {
    bg_error_ = s;
    FinishWriteGroup(&w, last, s);
    return s;
  }
  ++pipelined_groups_;
  InsertingGroup inserting;
  inserting.leader = &w;
  inserting.last = last;
  inserting.mem = mem;
  inserting.last_sequence = last_sequence;
  StartInserts(&w, first_sequence, &inserting);
  inserting_.push_back(&inserting);
  LeaveWriteQueue(last);
  lock.Unlock();
  // Our batch and those of the writers that sleep; the others insert
  // theirs meanwhile.
  Status inserted;
  for (Writer* x = &w;; x = x->next_in_group) {
    if (x->insert_into == nullptr && inserted.ok()) {
      inserted = WriteBatchInternal::InsertInto(*x->batch, mem, /*concurrently=*/true);
    }
    if (x == last) break;
  }
  return EndInsert(&w, &inserting, inserted);
}

Status DBImpl::MakeRoomForWrite(size_t payload, bool deletes_only) {
  bool allow_delay = true;
  for (;;) {
    if (!bg_error_.ok()) return bg_error_;
    // A full pool (or disk): compaction has failed for want of room, or
    // the standby is no longer complete.
    const bool pool_tight = pool_full_ || (pool() != nullptr && deletes_only && tables_->space()->held() < tables_->space()->complete_chunks());
    if (deletes_only && pool_full_ && pool() == nullptr && wal_ != nullptr && wal_->HasRoom(payload)) {
      // Disk-only mode: the log file takes deletes past the memtable limit.
      // (In a pool they would make the memtable's L0 block bigger than the
      // standby counts on; deletes switch memtables on the standby instead.)
      return Status::OK();
    }
    const size_t l0 = versions_->current()->levels[0].size();
    if (allow_delay && l0 >= static_cast<size_t>(options_.level0_slowdown_trigger) && !(deletes_only && pool_tight)) {
      // Give compaction a millisecond per write rather than stopping later.
      ++slowdowns_;
      mutex_.Unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      mutex_.Lock();
      stall_micros_ += 1000;
      allow_delay = false;
      continue;
    }
    if (wal_ != nullptr && (mem_->num_entries() == 0 || mem_->ApproximateMemoryUsage() < options_.memtable_size) &&
        wal_->HasRoom(payload)) {
      return Status::OK();
    }
    const bool imm_full = imm_.size() >= static_cast<size_t>(options_.max_immutable_memtables);
    // Deletes pass a stopped L0 in a full pool (and are not slowed down
    // above): its compaction cannot run, and deleting (then CompactRange)
    // is how the pool is emptied.
    const bool l0_stopped = l0 >= static_cast<size_t>(options_.level0_stop_trigger) && !(deletes_only && pool_tight);
    if (imm_full || l0_stopped) {
      // Wait, unless what the write waits for has failed for want of room:
      // the flush of the frozen memtables, or the compaction of L0. In a
      // full pool, writes give up at once -- except deletes in pmem-only
      // mode, whose flush may use the standby and runs next on the
      // background thread (in hybrid mode that thread may be held up by a
      // pending compaction whose syncs hit a full device).
      const bool flush_waits_for_room =
          flush_failed_ || (pool_full_ && !(deletes_only && options_.storage_mode == StorageMode::kPmem));
      if (imm_full && flush_waits_for_room) {
        const std::string what = "the memtables are full and their flush found no room";
        // The flush's own failure, or the one that filled the pool (or disk).
        return flush_failed_ || space_error_.ok() ? PoolFullStatus(what)
                                                  : Status::NoSpace(what, space_error_.message());
      }
      if (!imm_full && pool_full_) {
        const std::string what = "L0 is full and its compaction found no room";
        return space_error_.ok() ? PoolFullStatus(what) : Status::NoSpace(what, space_error_.message());
      }
      ++stops_;
      Log(info_log_, "Writes stopped: %s", imm_full ? "every memtable is waiting for its flush"
                                                    : "L0 has too many tables");
      const auto start = std::chrono::steady_clock::now();
      done_cv_.WaitFor(std::chrono::milliseconds(100));
      stall_micros_ += static_cast<uint64_t>(
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
      continue;
    }
    if (deletes_only && pool() != nullptr &&
        tables_->space()->held() < std::min<uint64_t>(tables_->space()->complete_chunks(),
                                           CompactRangeReserveChunks(options_) + DeleteCycleChunks(options_))) {
      // Each memtable of deletes becomes an L0 block taken from the standby;
      // what CompactRange needs to reclaim the deleted keys' space stays.
      return PoolFullStatus("deletes have used the space held back for them; CompactRange reclaims the space of "
                            "the deleted keys");
    }
    Status s = SwitchMemTable(payload, /*may_use_standby=*/deletes_only);
    if (!s.ok()) return s;
  }
}

void DBImpl::AwaitInserts() {
  while (!inserting_.empty()) inserts_done_cv_.Wait();
}

Status DBImpl::SwitchMemTable(size_t payload, bool may_use_standby) {
  CommitSlot slot(this);
  AwaitInserts();  // the memtable is complete before it is frozen
  pmem::Reservation reservation;
  WalSegmentMeta meta;
  std::unique_ptr<LogWriter> writer;
  Status s = NewWalSegment(payload, &reservation, &meta, may_use_standby, &writer);
  if (!s.ok()) return s;
  const bool freeze = wal_ != nullptr;  // without a segment the memtable is empty
  if (freeze) {
    s = wal_->Sync();  // the frozen segment's unsynced records become durable
    if (!s.ok()) {
      bg_error_ = s;
      return s;
    }
    imm_.push_back({mem_, {mem_wal_}});
  }
  std::unique_ptr<LogWriter> previous_writer = std::move(wal_);
  const WalSegmentMeta previous = mem_wal_;
  mem_wal_ = meta;
  wal_ = std::move(writer);
  std::vector<pmem::Reservation*> publish;
  if (reservation.action != nullptr) publish.push_back(&reservation);
  // With mutex_ held throughout: the frozen memtable and the new log are
  // in imm_ and wal_ before the commit that records them.
  s = Commit(versions_->current(), nullptr, publish, {}, may_use_standby, CommitIo::kHoldMutex);
  if (!s.ok()) {
    wal_ = std::move(previous_writer);
    mem_wal_ = previous;
    if (freeze) imm_.pop_back();
    if (reservation.action != nullptr) pool()->Cancel(&reservation);
    if (disk_mode()) DeleteLogs({meta});
    return s;
  }
  if (freeze) mem_ = NewMemTable();
  has_imm_ = !imm_.empty();  // only now: a flush outside mutex_ may act on it
  PublishReadState();
  bg_cv_.Signal();
  return Status::OK();
}

// ---------------------------------------------------------------------------
// Reads

void DBImpl::PublishReadState() {
  std::shared_ptr<ReadState> building = std::make_shared<ReadState>();
  ReadState* state = building.get();
  state->db = this;
  state->mem = mem_;
  for (auto it = imm_.rbegin(); it != imm_.rend(); ++it) state->imm.push_back(it->mem);
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
  visible_sequence_.store(versions_->last_sequence(), std::memory_order_release);
}

DBImpl::ReadView DBImpl::GetReadView(const ReadOptions& options) {
  ReadView view;
  {
    MutexLock lock(&read_state_mutex_);
    view.state = read_state_;
  }
  // The sequence after the state: a compaction in the state dropped only
  // versions shadowed at or below a sequence visible before it was
  // published, so none that this sequence still needs.
  view.sequence = options.snapshot != nullptr ? static_cast<const SnapshotImpl*>(options.snapshot)->sequence
                                              : visible_sequence_.load(std::memory_order_acquire);
  return view;
}

bool DBImpl::MemTablesGet(const ReadView& view, const Slice& key, std::string* value, Status* status) const {
  ValueType type;
  bool found = view.state->mem->Get(key, view.sequence, &type, value);
  for (size_t i = 0; !found && i < view.state->imm.size(); ++i) found = view.state->imm[i]->Get(key, view.sequence, &type, value);
  if (found) *status = type == ValueType::kValue ? Status::OK() : Status::NotFound(Slice());
  return found;
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
                        SequenceNumber sequence, std::string* value, bool* done) const {
  ValueType type;
  Status s = block.table->Get(options, key, sequence, &type, value);
  if (s.IsNotFound()) return Status::OK();
  *done = true;
  if (!s.ok()) return s;
  return type == ValueType::kValue ? Status::OK() : Status::NotFound(Slice());
}

Status DBImpl::Get(const ReadOptions& options, const Slice& key, std::string* value) {
  ReadView view = GetReadView(options);
  Status s;
  if (MemTablesGet(view, key, value, &s)) return s;
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
        s = TableGet(options, *table, key, view.sequence, value, &done);
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
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!MemTablesGet(view, keys[i], &(*values)[i], &statuses[i])) pending.push_back(i);
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
        statuses[i] = TableGet(options, *block, keys[i], view.sequence, &(*values)[i], &done);
        if (done) break;
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

std::unique_ptr<Iterator> DBImpl::NewIterator(const ReadOptions& options) {
  ReadView view = GetReadView(options);
  // Sized once: a short scan is dominated by setting up (ycsbe).
  const Version& version = *view.state->version;
  std::vector<std::unique_ptr<InternalIterator>> children;
  children.reserve(1 + view.state->imm.size() + version.levels[0].size() + kNumLevels - 1);
  children.push_back(view.state->mem->NewIterator());
  for (const auto& imm : view.state->imm) children.push_back(imm->NewIterator());
  for (const TableRef& block : version.levels[0]) children.push_back(block->table->NewIterator(options));
  for (int level = 1; level < kNumLevels; ++level) {
    if (!version.levels[level].empty()) {
      children.push_back(NewLevelIterator(ucmp_, version.levels[level], options));
    }
  }
  // The read state pins the memtables and the version the children read.
  const IteratorObserver* observer = view.state->l0_read_budget != 0 ? view.state.get() : nullptr;
  return NewDBIterator(ucmp_, NewMergingIterator(ucmp_, std::move(children)), view.sequence, {view.state}, observer);
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
    auto it = snapshots_.find(impl->sequence);
    if (it != snapshots_.end()) snapshots_.erase(it);
  }
  delete impl;
}


Status DBImpl::CompactRange(const Slice* begin, const Slice* end) {
  MutexLock lock(&mutex_);
  // Take over compaction from the background thread, which keeps flushing.
  while (manual_compaction_) done_cv_.Wait();  // one CompactRange at a time
  manual_compaction_ = true;
  while (compaction_running_) done_cv_.Wait();
  Status s = RunManualCompaction(begin, end);
  manual_compaction_ = false;
  done_cv_.SignalAll();
  bg_cv_.Signal();
  return s;
}

Status DBImpl::RunManualCompaction(const Slice* begin, const Slice* end) {
  // Flush the memtable: freeze it (at the front of the write queue, where
  // no writer is using it), then wait until every frozen one is in L0.
  {
    Writer w(&mutex_);
    writers_.push_back(&w);
    Await(&w, /*for_turn=*/true);
    AwaitInserts();
    Status s = mem_->num_entries() > 0 ? SwitchMemTable(0, /*may_use_standby=*/true) : Status::OK();
    FinishWriteGroup(&w, &w, s);
    if (!s.ok()) return s;
  }
  flush_failed_ = false;
  bg_cv_.Signal();
  while (!imm_.empty() && bg_error_.ok() && !flush_failed_) done_cv_.WaitFor(std::chrono::milliseconds(100));
  if (!bg_error_.ok()) return bg_error_;
  if (!imm_.empty()) return PoolFullStatus("CompactRange cannot flush the memtable");
  // Level by level down to the last one. L0 tables overlap, so they move
  // together; deeper levels move one table (with its overlaps) per step, so
  // that each step needs little free space and frees its inputs before the
  // next -- which is what lets a nearly full pool be compacted.
  Status s;
  // L0 tables taken per step, oldest first: all of them unless a step did
  // not fit the pool.
  size_t l0_take = SIZE_MAX;
  for (int level = 0; level < kNumLevels - 1 && s.ok(); ++level) {
    // What reads asked for is being done (or was, by an earlier step).
    if (level == 0) l0_wanted_by_reads_.store(false, std::memory_order_relaxed);
    Compaction step;
    while (PickRangeStep(*versions_->current(), ucmp_, level, begin, end, l0_take, &step)) {
      const size_t take = step.inputs[0].size();
      // A split step writes its outputs and the remainder of its upper
      // tables into the pool (an SSD output would need a pending-compaction
      // record for two levels). In L0 its inputs are the oldest tables, so
      // their remainder is older than any table left in L0 or flushed
      // meanwhile.
      const bool splittable =
          AllInPmem(step.inputs[0]) && !OutputToSsd(*versions_->current(), level + 1, step.InputBytes());
      mutex_.Unlock();
      s = RunCompaction(&step, /*may_use_standby=*/true);
      const Status unsplit = s;
      // A full pool cannot hold the outputs of a step whose upper tables
      // overlap many lower ones (wide tombstone ranges do): split it, moving
      // the keys up to a lower table's end down first and rewriting the rest
      // of the upper tables in place; halve the lower tables taken until a
      // step fits. Each step frees what it consumed for the next.
      const std::vector<TableRef> lower = step.inputs[1];
      uint64_t split_steps = 0;
      size_t lower_count = lower.size();
      while (s.IsNoSpace() && splittable && NextSplit(ucmp_, lower, &lower_count, &step)) {
        if (pool() != nullptr) tables_->space()->Refill();
        s = RunCompaction(&step, /*may_use_standby=*/true);
        if (s.ok()) ++split_steps;
      }
      if (s.IsNoSpace()) s = unsplit;  // no split fits either: report the step's own shortage
      step = Compaction();  // drop the input references: obsolete tables are freed now
      if (pool() != nullptr) tables_->space()->Refill();
      mutex_.Lock();
      split_steps_ += split_steps;
      if (s.IsNoSpace() && level == 0 && take > 1) {
        l0_take = take / 2;  // retry with the older half of the tables taken
        s = Status::OK();
        continue;
      }
      if (!s.ok()) break;
    }
  }
  return s;
}

Status DBImpl::VerifyIntegrity() {
  std::shared_ptr<const Version> version;
  {
    MutexLock lock(&mutex_);
    version = versions_->current();
  }
  for (int level = 0; level < kNumLevels; ++level) {
    for (const TableRef& table : version->levels[level]) {
      Status s = VerifyTable(*table);
      if (!s.ok()) {
        return Status::Corruption("block " + std::to_string(table->number) + " at level " + std::to_string(level),
                                  s.ToString());
      }
    }
  }
  return CheckLevelShape(*version, ucmp_);
}

Slice DBImpl::PmemBlockContents(const TableMeta& table) const {
  if (table.residence != Residence::kPmem || pool() == nullptr) return Slice();
  return Slice(pool()->Direct(table.offset), table.size);
}

Status DBImpl::VerifyTable(const TableMeta& table) const {
  if (table.residence == Residence::kPmem) {
    BlockReadOptions options;
    options.comparator = ucmp_;
    std::unique_ptr<BlockReader> checked;  // a fresh reader verifies the checksum
    Status s = BlockReader::Open(BlockFormat::kKeySet, PmemBlockContents(table), options, &checked);
    if (s.ok()) s = checked->Validate();
    return s;
  }
  return table.table->Validate();  // reads every block afresh and checks it
}

// ---------------------------------------------------------------------------
// Properties

void DBImpl::GetApproximateSizes(const Range* ranges, int n, uint64_t* sizes) {
  std::shared_ptr<const Version> version;
  {
    MutexLock lock(&mutex_);
    version = versions_->current();
  }
  // Bytes of table t before user_key.
  auto offset_in = [&](const TableMeta& t, const Slice& user_key) -> double {
    if (ucmp_->Compare(user_key, t.smallest) <= 0) return 0;
    if (ucmp_->Compare(user_key, t.largest) > 0) return static_cast<double>(t.size);
    return t.table->ApproximatePosition(user_key) * static_cast<double>(t.size);
  };
  for (int i = 0; i < n; ++i) {
    double bytes = 0;
    if (ucmp_->Compare(ranges[i].start, ranges[i].limit) < 0) {
      for (const auto& level : version->levels) {
        for (const TableRef& t : level) {
          const double end = offset_in(*t, ranges[i].limit), begin = offset_in(*t, ranges[i].start);
          if (end > begin) bytes += end - begin;
        }
      }
    }
    sizes[i] = static_cast<uint64_t>(bytes);
  }
}

std::string DBImpl::StatsJson(uint64_t pmem_bytes, uint64_t index_bytes) const {
  const Version& v = *versions_->current();
  nlohmann::json j;
  uint64_t ssd_bytes = 0;
  for (int level = 0; level < kNumLevels; ++level) {
    j["levels"].push_back({{"tables", v.levels[level].size()}, {"bytes", v.LevelBytes(level)}});
    for (const TableRef& t : v.levels[level]) {
      if (t->residence == Residence::kSsd) ssd_bytes += t->size;
    }
  }
  j["pmem_bytes"] = pmem_bytes;
  j["pmem_hash_index_bytes"] = index_bytes;
  j["ssd_bytes"] = ssd_bytes;
  j["flushes"] = flushes_;
  j["compactions"] = {{"count", compactions_},
                      {"bytes_read", compaction_bytes_read_},
                      {"bytes_written", compaction_bytes_written_},
                      {"split_steps", split_steps_},
                      {"entries_merged", compaction_entries_read_},
                      {"entries_spliced", compaction_entries_spliced_},
                      {"read_triggered", read_triggered_compactions_}};
  j["trivial_moves"] = {{"tables", tables_moved_}, {"bytes", bytes_moved_}};
  j["migrations"] = {{"tables", tables_migrated_}, {"bytes", bytes_migrated_}};
  j["stalls"] = {{"slowdowns", slowdowns_}, {"stops", stops_}, {"micros", stall_micros_},
                 {"flushes_within_compactions", flushes_within_compactions_}};
  j["writes"] = {{"batches", write_batches_},
                {"groups", write_groups_},
                {"synced_groups", synced_groups_},
                {"pipelined_groups", pipelined_groups_},
                {"self_inserted", self_inserted_batches_}};
  j["memtables"] = 1 + imm_.size();
  j["sync"] = {{"calls", tables_->sync_stats()->syncs.load()},
               {"bytes", tables_->sync_stats()->bytes.load()},
               {"pending_compactions", pending_.size()},
               {"redone_at_recovery", redone_compactions_},
               {"tracker_rounds", tracker_rounds_},
               {"durable_compactions", tracker_compactions_}};
  j["block_cache"] = {{"capacity", tables_->block_cache()->capacity()},
                      {"usage", tables_->block_cache()->usage()},
                      {"hits", tables_->block_cache()->hits()},
                      {"misses", tables_->block_cache()->misses()}};
  j["pool_full"] = pool_full_;
  return j.dump();
}

bool DBImpl::GetProperty(const Slice& property, std::string* value) {
  MutexLock lock(&mutex_);
  const std::string p = property.ToString();
  const Version& v = *versions_->current();
  auto levels = [&]() {
    std::string out = "level  blocks       bytes\n";
    char line[80];
    for (int level = 0; level < kNumLevels; ++level) {
      std::snprintf(line, sizeof(line), "%5d %7zu %11" PRIu64 "\n", level, v.levels[level].size(),
                    v.LevelBytes(level));
      out += line;
    }
    return out;
  };
  uint64_t pmem_bytes = 0;
  uint64_t index_bytes = 0;  // DRAM held by pmem blocks' hash indexes
  for (const auto& level : v.levels) {
    for (const TableRef& b : level) {
      if (b->residence == Residence::kPmem) {
        pmem_bytes += b->size;
        index_bytes += b->table->MemoryUsage();
      }
    }
  }
  if (p == "jigsaw.levels") {
    *value = levels();
  } else if (p.rfind("jigsaw.num-blocks-at-level", 0) == 0) {
    const std::string n = p.substr(std::strlen("jigsaw.num-blocks-at-level"));
    if (n.size() != 1 || n[0] < '0' || n[0] >= '0' + kNumLevels) return false;
    *value = std::to_string(v.levels[n[0] - '0'].size());
  } else if (p == "jigsaw.pmem-bytes") {
    *value = std::to_string(pmem_bytes);
  } else if ((p == "jigsaw.pool-used-bytes" || p == "jigsaw.pmem-device") && pool() == nullptr) {
    *value = p == "jigsaw.pool-used-bytes" ? "0" : "no pmem pool (disk-only mode)";
  } else if (p == "jigsaw.pool-used-bytes") {
    uint64_t used = 0;
    for (auto type : {pmem::ObjectType::kBlock, pmem::ObjectType::kWalSegment, pmem::ObjectType::kManifest}) {
      for (uint64_t offset : pool()->Objects(type)) used += pool()->ObjectSize(offset);
    }
    *value = std::to_string(used);
  } else if (p == "jigsaw.pmem-device") {
    *value = "pool " + PoolPathFor(options_, name_) + " (" + pool()->persistence() + ")" +
             (pool()->timing() != nullptr ? " with an NVM timing model" : "") +
             ", numa node " + std::to_string(pmem::NumaNodeForPath(PoolPathFor(options_, name_))) +
             ", background thread on node " + std::to_string(numa_node_) + "\n";
    for (const pmem::PmemDevice& d : pmem::ListPmemDevices()) {
      *value += d.namespace_name + " " + d.mode + " " + d.device_path + " " + std::to_string(d.size) +
                " bytes, numa node " + std::to_string(d.numa_node) + "\n";
    }
  } else if (p == "jigsaw.ssd-bytes") {
    uint64_t bytes = 0;
    for (const auto& level : v.levels) {
      for (const TableRef& b : level) {
        if (b->residence == Residence::kSsd) bytes += b->size;
      }
    }
    *value = std::to_string(bytes);
  } else if (p == "jigsaw.sync-stats") {
    *value = "syncs " + std::to_string(tables_->sync_stats()->syncs.load()) + " bytes_synced " +
             std::to_string(tables_->sync_stats()->bytes.load()) +
             " pending_compactions " + std::to_string(pending_.size()) + " redone_at_recovery " +
             std::to_string(redone_compactions_) + " tracker_rounds " + std::to_string(tracker_rounds_) +
             " durable_compactions " + std::to_string(tracker_compactions_);
  } else if (p == "jigsaw.stats-json") {
    *value = StatsJson(pmem_bytes, index_bytes);
  } else if (p == "jigsaw.compaction-profile") {
    // CSV, one row per flush (level -1) or compaction.
    *value = CompactionProfileCsvHeader();
    for (const PhaseProfile& r : profiles_) *value += CompactionProfileCsvRow(r);
  } else if (p == "jigsaw.io") {
    const ssd::UringStallCounts stalls = ssd::UringStalls();
    *value = io_description_ + "; io_uring rings given up in this process: table writes " +
             std::to_string(stalls.table_writes) + ", reads " + std::to_string(stalls.reads);
  } else if (p == "jigsaw.wal-recovery") {
    *value = wal_recovery_;
  } else if (p == "jigsaw.block-cache") {
    *value = "capacity " + std::to_string(tables_->block_cache()->capacity()) + " usage " +
             std::to_string(tables_->block_cache()->usage()) + " hits " + std::to_string(tables_->block_cache()->hits()) + " misses " +
             std::to_string(tables_->block_cache()->misses());
  } else if (p == "jigsaw.compactions") {
    *value = std::to_string(compactions_);
  } else if (p == "jigsaw.read-triggered-compactions") {
    *value = std::to_string(read_triggered_compactions_);
  } else if (p == "jigsaw.flushes") {
    *value = std::to_string(flushes_);
  } else if (p == "jigsaw.write-groups") {
    *value = "batches " + std::to_string(write_batches_) + " groups " + std::to_string(write_groups_) + " synced " +
             std::to_string(synced_groups_) + " pipelined " + std::to_string(pipelined_groups_) + " self_inserted " +
             std::to_string(self_inserted_batches_);
  } else if (p == "jigsaw.stalls") {
    *value = "slowdowns " + std::to_string(slowdowns_) + " stops " + std::to_string(stops_) + " stall_micros " +
             std::to_string(stall_micros_) + " flushes_within_compactions " + std::to_string(flushes_within_compactions_);
  } else if (p == "jigsaw.stats") {
    *value = levels() + "pmem bytes " + std::to_string(pmem_bytes) + "\npmem hash index " +
             std::to_string(index_bytes) + " bytes of DRAM\nflushes " + std::to_string(flushes_) +
             "\ncompactions " + std::to_string(compactions_) + " (read " + std::to_string(compaction_bytes_read_) +
             " bytes, wrote " + std::to_string(compaction_bytes_written_) + " bytes; " +
             std::to_string(split_steps_) + " split steps; " + std::to_string(compaction_entries_read_) +
             " entries merged, " + std::to_string(compaction_entries_spliced_) +
             " of them copied as bytes in runs; " + std::to_string(read_triggered_compactions_) +
             " of L0 asked for by reads)\ntrivial moves: " + std::to_string(tables_moved_) +
             " tables, " + std::to_string(bytes_moved_) + " bytes moved by reference\nmigrations: " + std::to_string(tables_migrated_) + " pmem blocks, " +
             std::to_string(bytes_migrated_) + " bytes written to SSD tables as their bytes\nslowdowns " +
             std::to_string(slowdowns_) + " stops " + std::to_string(stops_) + " stall_micros " +
             std::to_string(stall_micros_) + "\nwrites: " + std::to_string(write_batches_) + " batches in " +
             std::to_string(write_groups_) + " WAL records (" + std::to_string(synced_groups_) + " synced; " +
             std::to_string(pipelined_groups_) + " inserted beside other groups); " +
             std::to_string(self_inserted_batches_) + " batches inserted by their own writer\nmemtables " + std::to_string(1 + imm_.size()) + "\nstandby chunks " +
             (pool() != nullptr ? tables_->space()->State() : std::string("0/0")) + (pool_full_ ? " (pool full)" : "") + "\n";
  } else {
    return false;
  }
  return true;
}

}  // namespace jigsaw
