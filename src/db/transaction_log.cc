// The change feed: DB::GetUpdatesSince over the live and archived
// write-ahead logs (docs/design/025-change-feed.md).
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "db/db_impl.h"
#include "db/write_batch_internal.h"
#include "version/filename.h"
#include "util/guarded_read.h"

namespace jigsaw {

TransactionLogIterator::~TransactionLogIterator() = default;

std::vector<DBImpl::FeedLog> DBImpl::FeedLogs(SequenceNumber* last) {
  MutexLock lock(&mutex_);
  *last = visible_sequence_.load(std::memory_order_acquire);
  std::vector<FeedLog> live;
  for (const Immutable& imm : imm_) {
    for (size_t i = 0; i < imm.wals.size(); ++i) live.push_back({imm.wals[i].number, imm.wal_ends[i], !imm.archived});
  }
  if (wal_ != nullptr) live.push_back({mem_wal_.number, published_log_end_, true});
  // A flush archives its pmem segments before its commit and its log files
  // after it, both before mutex_ is released: a log gone from the
  // memtables is in the archive already (or was never kept).
  std::vector<FeedLog> logs;
  uint64_t first_live = UINT64_MAX;
  for (const FeedLog& log : live) {
    if (log.live) first_live = std::min(first_live, log.number);
  }
  for (uint64_t number : archive_->Numbers()) {
    if (number < first_live) logs.push_back({number, 0, false});
  }
  for (const FeedLog& log : live) {
    if (log.live) logs.push_back(log);
  }
  return logs;
}

Status DBImpl::ReadFeedLog(const FeedLog& log, std::string* bytes) {
  bytes->clear();
  if (log.live && log.end <= kWalHeaderSize) {
    // No records (a memtable frozen empty): nothing to copy, even if it is
    // flushed and gone by now.
    bytes->resize(kWalHeaderSize);
    EncodeLogFileHeader(log.number, bytes->data());
    return Status::OK();
  }
  if (log.live) {
    MutexLock pin(&log_read_mutex_);
    const char* segment = nullptr;
    bool found = false;
    {
      MutexLock lock(&mutex_);
      std::vector<WalSegmentMeta> live = LiveWalSegments();
      for (const WalSegmentMeta& w : live) {
        if (w.number != log.number) continue;
        found = true;
        if (!disk_mode()) segment = pool()->Direct(w.offset);
      }
    }
    if (found && segment != nullptr) {
      // Records before log.end were written before it was published, and
      // the segment stays allocated while log_read_mutex_ is held. Not its
      // header: the writer updates the durable end there.
      bytes->resize(std::max(log.end, kWalHeaderSize));
      EncodeLogFileHeader(log.number, bytes->data());
      if (!GuardedCopy(bytes->data() + kWalHeaderSize, segment + kWalHeaderSize, bytes->size() - kWalHeaderSize)) {
        return Status::Corruption("WAL segment " + std::to_string(log.number),
                                  "unreadable pool memory at " +
                                      DescribeUnreadable(segment + kWalHeaderSize, bytes->size() - kWalHeaderSize) +
                                      " (past its header)");
      }
      return Status::OK();
    }
    if (found) {
      std::unique_ptr<RandomAccessFile> file;
      const std::string path = LogFileName(name_, log.number);
      Status s = tables_->fs()->NewRandomAccessFile(path, &file);
      if (!s.ok()) return s;
      bytes->resize(log.end);
      Slice read;
      s = file->Read(0, log.end, bytes->data(), &read);
      if (s.ok() && read.size() != log.end) s = Status::Corruption(path, "shorter than its published records");
      if (s.ok() && read.data() != bytes->data()) bytes->assign(read.data(), read.size());
      return s;
    }
    // Flushed since it was listed: archived then, if kept at all.
  }
  const std::string path = archive_->PathOf(log.number);
  std::unique_ptr<RandomAccessFile> file;
  Status s = tables_->fs()->NewRandomAccessFile(path, &file);
  if (s.IsNotFound() || (!s.ok() && !tables_->fs()->FileExists(path))) {
    return Status::NotFound("log " + std::to_string(log.number), "no longer kept (flushed and not archived, or "
                                                                 "removed by Options::wal_ttl_seconds / "
                                                                 "wal_size_limit_mb)");
  }
  if (!s.ok()) return s;
  bytes->resize(file->Size());
  Slice read;
  s = file->Read(0, file->Size(), bytes->data(), &read);
  if (s.ok() && read.data() != bytes->data()) bytes->assign(read.data(), read.size());
  if (s.ok()) bytes->resize(read.size());
  return s;
}

void DBImpl::ArchiveSegments(const std::vector<WalSegmentMeta>& wals, const std::vector<uint64_t>& ends) {
  for (size_t i = 0; i < wals.size(); ++i) {
    if (ends[i] <= kWalHeaderSize) continue;  // no records
    // The archive copies the records unguarded (util/guarded_read.h).
    if (!ProbeReadable(pool()->Direct(wals[i].offset) + kWalHeaderSize, ends[i] - kWalHeaderSize)) {
      Log(info_log_, "Log %llu not archived: a media error in its segment",
          static_cast<unsigned long long>(wals[i].number));
      continue;
    }
    Status s = archive_->AddRecords(wals[i].number, pool()->Direct(wals[i].offset) + kWalHeaderSize,
                                    ends[i] - kWalHeaderSize);
    if (!s.ok()) {
      Log(info_log_, "Log %llu not archived: %s", static_cast<unsigned long long>(wals[i].number),
          s.ToString().c_str());
    }
  }
}

// Reads the logs one at a time, whole, into memory; positioned at a batch
// whose sequence follows on from the one before.
class UpdatesIterator final : public TransactionLogIterator {
 public:
  UpdatesIterator(DBImpl* db, SequenceNumber last, std::vector<DBImpl::FeedLog> logs)
      : db_(db), last_(last), logs_(std::move(logs)) {}

  // Positions at the batch holding `sequence`; status NotFound if no kept
  // log has it.
  void Start(SequenceNumber sequence) {
    if (logs_.empty()) {
      status_ = Status::NotFound("sequence " + std::to_string(sequence), "no kept log holds it");
      return;
    }
    // The newest log whose first batch is at or before `sequence`, looked
    // for from the newest: a follower's sequence is mostly in the last log.
    for (size_t i = logs_.size(); i-- > 0;) {
      if (!Load(i)) return;
      if (!batches_.empty() && batches_.front().sequence <= sequence) break;
      if (i == 0) {
        status_ = Status::NotFound("sequence " + std::to_string(sequence),
                                   batches_.empty() ? "no kept log holds it"
                                                    : "older than the oldest kept batch, at " +
                                                          std::to_string(batches_.front().sequence));
        return;
      }
    }
    // The first batch to end past `sequence`; continuity is checked from
    // it on (a gap before it, an ingest's, is none of this feed's).
    while (Settle() && next_ <= sequence) {
      ++index_;
      next_ = 0;
    }
    if (valid_ && batches_[index_].sequence > sequence) {
      valid_ = false;
      status_ = Status::Corruption("change feed", "update " + std::to_string(sequence) +
                                                      " is not in the kept logs (an ingest takes a sequence number "
                                                      "no log holds; see DB::GetUpdatesSince)");
    }
  }

  bool Valid() const override { return valid_; }
  void Next() override {
    assert(valid_);
    ++index_;
    Settle();
  }
  Status status() const override { return status_; }
  BatchResult GetBatch() override {
    assert(valid_);
    const Batch& b = batches_[index_];
    BatchResult result;
    result.sequence = b.sequence;
    (void)WriteBatchInternal::SetContents(&result.batch, b.contents);
    return result;
  }

 private:
  struct Batch {
    SequenceNumber sequence;
    uint32_t count;
    Slice contents;  // into bytes_
  };

  // Loads log i into bytes_ and batches_; false (status_ set) on error.
  bool Load(size_t i) {
    log_ = i;
    index_ = 0;
    batches_.clear();
    Status s = db_->ReadFeedLog(logs_[i], &bytes_);
    if (s.ok()) {
      const uint64_t end = logs_[i].live ? std::min<uint64_t>(logs_[i].end, bytes_.size()) : bytes_.size();
      s = ReadWholeWal(bytes_.data(), end, logs_[i].number, [&](const Slice& record) {
        if (record.size() < WriteBatchInternal::kHeaderSize) return Status::Corruption("a record too short");
        WriteBatch batch;
        Status r = WriteBatchInternal::SetContents(&batch, record);
        if (r.ok()) batches_.push_back({WriteBatchInternal::Sequence(batch), WriteBatchInternal::Count(batch), record});
        return r;
      });
    }
    if (!s.ok()) {
      status_ = s;
      valid_ = false;
    }
    return s.ok();
  }

  // Moves to the next batch from (log_, index_) on, across logs; checks
  // that it follows on. Returns valid_.
  bool Settle() {
    valid_ = false;
    while (index_ >= batches_.size()) {
      if (log_ + 1 >= logs_.size()) return false;
      if (!Load(log_ + 1)) return false;
    }
    const Batch& b = batches_[index_];
    if (b.sequence > last_) return false;  // written after the call
    if (next_ != 0 && b.sequence != next_) {
      status_ = Status::Corruption("change feed", b.sequence > next_
                                                      ? "updates " + std::to_string(next_) + " to " +
                                                            std::to_string(b.sequence - 1) +
                                                            " are not in the kept logs (an ingest takes a sequence "
                                                            "number no log holds; see DB::GetUpdatesSince)"
                                                      : "batch at " + std::to_string(b.sequence) + " repeats updates");
      return false;
    }
    next_ = b.sequence + b.count;
    valid_ = true;
    return true;
  }

  DBImpl* const db_;
  const SequenceNumber last_;
  const std::vector<DBImpl::FeedLog> logs_;
  size_t log_ = 0;
  std::string bytes_;
  std::vector<Batch> batches_;
  size_t index_ = 0;
  SequenceNumber next_ = 0;  // the sequence the next batch must begin at; 0: any
  bool valid_ = false;
  Status status_;
};

Status DBImpl::GetUpdatesSince(uint64_t sequence, std::unique_ptr<TransactionLogIterator>* iter) {
  iter->reset();
  if (read_only_) return Status::NotSupported(name_, "is open read-only (DB::OpenForReadOnly): no change feed");
  SequenceNumber last = 0;
  std::vector<FeedLog> logs = FeedLogs(&last);
  auto it = std::make_unique<UpdatesIterator>(this, last, std::move(logs));
  if (sequence == 0) sequence = 1;
  if (sequence <= last) {
    it->Start(sequence);
    if (!it->status().ok()) return it->status();
  }
  *iter = std::move(it);
  return Status::OK();
}

}  // namespace jigsaw
