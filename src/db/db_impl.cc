// DBImpl's write path and the state it changes: memtables and WAL
// segments, manifest commits, the writer queue (group commit and pipelined
// memtable inserts), making room for writes, and CompactRange. Reads are in
// db_impl_read.cc, properties and integrity checks in db_impl_properties.cc.
#include "db/db_impl.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <thread>

#include "db/write_batch_internal.h"
#include "pmem/pool_sizing.h"
#include "version/filename.h"

namespace jigsaw {

Snapshot::~Snapshot() = default;
DB::~DB() = default;

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
    if (archive_->archiving() && !archive_->Has(w.number)) {
      // Kept for the change feed. If the move fails or is lost in a crash,
      // the next open finds the log unlisted and archives it then.
      Status s = archive_->AddFile(w.number, LogFileName(name_, w.number));
      if (!s.ok()) Log(info_log_, "Log %llu not archived: %s", static_cast<unsigned long long>(w.number), s.ToString().c_str());
      continue;
    }
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

Status DBImpl::DeleteRange(const WriteOptions& options, const Slice& begin_key, const Slice& end_key) {
  WriteBatch batch;
  batch.DeleteRange(begin_key, end_key);
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
  uint64_t log_end = 0;         // the end of its WAL record
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
  ++counters_.write_groups;
  if (sync) ++counters_.synced_groups;
  for (Writer* x : writers_) {
    ++counters_.write_batches;
    if (x == last) break;
  }
}

void DBImpl::PublishWriteGroup(SequenceNumber last_sequence, uint64_t log_end) {
  published_log_end_ = log_end;
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
  counters_.self_inserted_batches += helpers;
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
        PublishWriteGroup(ready->last_sequence, ready->log_end);
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

Status DBImpl::PrepareWriteGroup(Writer* w, WriteBatch* joined, WriteBatch** group, Writer** last) {
  *last = w;
  *group = w->batch;
  // Room first (this may wait, and others queue meanwhile), then the group
  // of what is queued by then.
  Status s = MakeRoomForWrite(WriteBatchInternal::Contents(*w->batch).size(), w->deletes_only);
  if (!s.ok()) return s;
  BuildWriteGroup(joined, last);
  if (*last != w) *group = joined;
  if (*group != w->batch && !wal_->HasRoom(WriteBatchInternal::Contents(**group).size())) {
    // The joined record does not fit what room was made: alone, then.
    *last = w;
    *group = w->batch;
  }
  return s;
}

Status DBImpl::Write(const WriteOptions& options, WriteBatch* batch) {
  if (read_only_) return Status::NotSupported(name_, "is open read-only (DB::OpenForReadOnly)");
  if (batch == nullptr) return Status::InvalidArgument("write batch is null");
  bool deletes_only = false;
  Status s = WriteBatchInternal::CheckLimits(*batch, ucmp_, &deletes_only);
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

  // The leader.
  Writer* last = &w;
  WriteBatch joined;
  WriteBatch* group = batch;
  s = PrepareWriteGroup(&w, &joined, &group, &last);
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
      if (s.ok()) PublishWriteGroup(last_sequence, wal->end());
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
  ++counters_.pipelined_groups;
  InsertingGroup inserting;
  inserting.leader = &w;
  inserting.last = last;
  inserting.mem = mem;
  inserting.last_sequence = last_sequence;
  inserting.log_end = wal->end();  // still the front: no other record is appended yet
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
      ++counters_.slowdowns;
      mutex_.Unlock();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      mutex_.Lock();
      counters_.stall_micros += 1000;
      allow_delay = false;
      continue;
    }
    if (wal_ != nullptr && (mem_->empty() || mem_->ApproximateMemoryUsage() < options_.memtable_size) &&
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
      ++counters_.stops;
      Log(info_log_, "Writes stopped: %s", imm_full ? "every memtable is waiting for its flush"
                                                    : "L0 has too many tables");
      const auto start = std::chrono::steady_clock::now();
      done_cv_.WaitFor(std::chrono::milliseconds(100));
      counters_.stall_micros += static_cast<uint64_t>(
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
  }
  // The frozen memtable becomes the newest immutable one and a new one
  // takes its place before the commit publishes a read state: a reader
  // must never find one memtable in two places (its entries would come
  // twice through a merge, and a scan that turns round would meet them
  // again).
  const std::shared_ptr<MemTable> frozen = mem_;
  if (freeze) {
    imm_.push_back({mem_, {mem_wal_}, {published_log_end_}});
    mem_ = NewMemTable();
  }
  std::unique_ptr<LogWriter> previous_writer = std::move(wal_);
  const WalSegmentMeta previous = mem_wal_;
  const uint64_t previous_end = published_log_end_;
  mem_wal_ = meta;
  published_log_end_ = kWalHeaderSize;
  wal_ = std::move(writer);
  std::vector<pmem::Reservation*> publish;
  if (reservation.action != nullptr) publish.push_back(&reservation);
  // With mutex_ held throughout: the frozen memtable and the new log are
  // in imm_ and wal_ before the commit that records them.
  s = Commit(versions_->current(), nullptr, publish, {}, may_use_standby, CommitIo::kHoldMutex);
  if (!s.ok()) {
    wal_ = std::move(previous_writer);
    mem_wal_ = previous;
    published_log_end_ = previous_end;
    if (freeze) {
      imm_.pop_back();
      mem_ = frozen;
    }
    if (reservation.action != nullptr) pool()->Cancel(&reservation);
    if (disk_mode() && archive_->archiving()) {
      (void)tables_->fs()->RemoveFile(LogFileName(name_, meta.number));  // never listed: nothing to keep
    } else if (disk_mode()) {
      DeleteLogs({meta});
    }
    return s;
  }
  has_imm_ = !imm_.empty();  // only now: a flush outside mutex_ may act on it
  bg_cv_.Signal();
  return Status::OK();
}

// ---------------------------------------------------------------------------
// Manual compaction

Status DBImpl::AloneInWriteQueue(const std::function<Status()>& work) {
  Writer w(&mutex_);
  writers_.push_back(&w);
  Await(&w, /*for_turn=*/true);
  AwaitInserts();
  Status s = work();
  FinishWriteGroup(&w, &w, s);
  return s;
}

Status DBImpl::CompactRange(const Slice* begin, const Slice* end) {
  if (read_only_) return Status::NotSupported(name_, "is open read-only (DB::OpenForReadOnly)");
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
    Status s = AloneInWriteQueue(
        [&]() REQUIRES(mutex_) { return !mem_->empty() ? SwitchMemTable(0, /*may_use_standby=*/true) : Status::OK(); });
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
      counters_.split_steps += split_steps;
      if (s.IsNoSpace() && level == 0 && take > 1) {
        l0_take = take / 2;  // retry with the older half of the tables taken
        s = Status::OK();
        continue;
      }
      if (!s.ok()) break;
    }
  }
  if (s.ok()) s = RewriteLastLevelUnderTombstones(begin, end);
  if (!s.ok()) return s;
  // Spent tombstones go at once: once the compactions' outputs are durable
  // (hybrid and disk modes), a redo can no longer bring back what they
  // deleted.
  while (!pending_.empty() && bg_error_.ok() && versions_->current()->range_tombstones != nullptr) done_cv_.Wait();
  if (!bg_error_.ok()) return bg_error_;
  mutex_.Unlock();
  s = DropSpentRangeTombstones();
  mutex_.Lock();
  return s;
}

Status DBImpl::RewriteLastLevelUnderTombstones(const Slice* begin, const Slice* end) {
  std::shared_ptr<const Version> version = versions_->current();
  if (version->range_tombstones == nullptr) return Status::OK();
  const std::vector<TableRef>& last = version->levels[kNumLevels - 1];
  std::vector<bool> taken(last.size(), false);
  for (size_t i = 0; i < last.size(); ++i) {
    const TableMeta& t = *last[i];
    const bool in_range = (begin == nullptr || ucmp_->Compare(t.largest, *begin) >= 0) &&
                          (end == nullptr || ucmp_->Compare(t.smallest, *end) <= 0);
    taken[i] = in_range && version->range_tombstones->Overlaps(t.smallest, t.largest, kMaxSequenceNumber);
  }
  // And every table between two taken ones: the outputs span the keys from
  // the first taken table to the last, and a table left inside that span
  // would overlap them in the level.
  const auto first_taken = std::find(taken.begin(), taken.end(), true);
  const auto last_taken = std::find(taken.rbegin(), taken.rend(), true);
  if (first_taken != taken.end()) std::fill(first_taken, last_taken.base(), true);
  // With its neighbours sharing a boundary key: one key's versions move
  // together.
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i + 1 < last.size(); ++i) {
      if (taken[i] != taken[i + 1] && ucmp_->Compare(last[i]->largest, last[i + 1]->smallest) == 0) {
        taken[i] = taken[i + 1] = true;
        grew = true;
      }
    }
  }
  Compaction step;
  step.level = kNumLevels - 2;  // no upper input: the last level merged into itself
  for (size_t i = 0; i < last.size(); ++i) {
    if (taken[i]) step.inputs[1].push_back(last[i]);
  }
  if (step.inputs[1].empty()) return Status::OK();
  version.reset();
  mutex_.Unlock();
  Status s = RunCompaction(&step, /*may_use_standby=*/true);
  step = Compaction();
  mutex_.Lock();
  return s;
}

}  // namespace jigsaw
