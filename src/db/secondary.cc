// DB::OpenAsSecondary: a disk-mode database followed beside the process
// that writes it (docs/design/024-read-only-open.md, "Secondary opens").
// A SecondaryDB holds one read-only open (DB::OpenForReadOnly) at a time;
// TryCatchUpWithPrimary makes a new one and swaps it in. Reads go to the
// current open; an iterator, and a snapshot with every read through it,
// keep the open they began on, so each sees one state whole.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "jigsaw/db.h"
#include "jigsaw/iterator.h"
#include "jigsaw/transaction_log.h"

namespace jigsaw {

namespace {

// A snapshot of one read-only open, which it keeps alive.
class SecondarySnapshot final : public Snapshot {
 public:
  SecondarySnapshot(std::shared_ptr<DB> db, const Snapshot* inner) : db_(std::move(db)), inner_(inner) {}
  ~SecondarySnapshot() override { db_->ReleaseSnapshot(inner_); }
  uint64_t sequence() const override { return inner_->sequence(); }
  const std::shared_ptr<DB>& db() const { return db_; }
  const Snapshot* inner() const { return inner_; }

 private:
  const std::shared_ptr<DB> db_;
  const Snapshot* const inner_;
};

// An iterator of one read-only open, which it keeps alive.
class SecondaryIterator final : public Iterator {
 public:
  SecondaryIterator(std::shared_ptr<DB> db, std::unique_ptr<Iterator> inner)
      : db_(std::move(db)), inner_(std::move(inner)) {}
  bool Valid() const override { return inner_->Valid(); }
  void SeekToFirst() override { inner_->SeekToFirst(); }
  void SeekToLast() override { inner_->SeekToLast(); }
  void Seek(const Slice& target) override { inner_->Seek(target); }
  void Next() override { inner_->Next(); }
  void Prev() override { inner_->Prev(); }
  Slice key() const override { return inner_->key(); }
  Slice value() const override { return inner_->value(); }
  Status status() const override { return inner_->status(); }

 private:
  const std::shared_ptr<DB> db_;  // declared first: destroyed after the iterator
  std::unique_ptr<Iterator> inner_;
};

class SecondaryDB final : public DB {
 public:
  SecondaryDB(Options options, std::string name, std::shared_ptr<DB> current)
      : options_(std::move(options)), name_(std::move(name)), current_(std::move(current)) {}

  Status TryCatchUpWithPrimary() override {
    std::unique_ptr<DB> next;
    Status s = DB::OpenForReadOnly(options_, name_, &next);
    if (!s.ok()) return s;
    std::shared_ptr<DB> replaced;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      replaced = std::move(current_);
      current_ = std::move(next);
    }
    return Status::OK();  // `replaced` goes once its iterators and snapshots have
  }

  Status Put(const WriteOptions&, const Slice&, const Slice&) override { return Refused(); }
  Status Delete(const WriteOptions&, const Slice&) override { return Refused(); }
  Status DeleteRange(const WriteOptions&, const Slice&, const Slice&) override { return Refused(); }
  Status Write(const WriteOptions&, WriteBatch*) override { return Refused(); }
  Status CompactRange(const Slice*, const Slice*) override { return Refused(); }
  Status IngestExternalFile(const std::vector<std::string>&, const IngestExternalFileOptions&) override {
    return Refused();
  }
  Status GetUpdatesSince(uint64_t, std::unique_ptr<TransactionLogIterator>*) override {
    return Status::NotSupported(name_, "is open as a secondary: no change feed");
  }

  Status Get(const ReadOptions& options, const Slice& key, std::string* value) override {
    ReadOptions inner = options;
    return For(options, &inner)->Get(inner, key, value);
  }
  std::vector<Status> MultiGet(const ReadOptions& options, const std::vector<Slice>& keys,
                               std::vector<std::string>* values) override {
    ReadOptions inner = options;
    return For(options, &inner)->MultiGet(inner, keys, values);
  }
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& options) override {
    ReadOptions inner = options;
    std::shared_ptr<DB> db = For(options, &inner);
    std::unique_ptr<Iterator> it = db->NewIterator(inner);
    return std::make_unique<SecondaryIterator>(std::move(db), std::move(it));
  }
  const Snapshot* GetSnapshot() override {
    std::shared_ptr<DB> db = Current();
    const Snapshot* inner = db->GetSnapshot();
    return new SecondarySnapshot(std::move(db), inner);
  }
  void ReleaseSnapshot(const Snapshot* snapshot) override { delete static_cast<const SecondarySnapshot*>(snapshot); }
  uint64_t GetLatestSequenceNumber() const override { return Current()->GetLatestSequenceNumber(); }
  bool GetProperty(const Slice& property, std::string* value) override {
    return Current()->GetProperty(property, value);
  }
  void GetApproximateSizes(const Range* ranges, int n, uint64_t* sizes) override {
    Current()->GetApproximateSizes(ranges, n, sizes);
  }
  Status CreateCheckpoint(const std::string& dir, uint64_t* sequence) override {
    return Current()->CreateCheckpoint(dir, sequence);
  }
  Status VerifyIntegrity() override { return Current()->VerifyIntegrity(); }
  void GetLiveTablesMetaData(std::vector<LiveTableMetaData>* tables) override {
    Current()->GetLiveTablesMetaData(tables);
  }
  Status GetTableContents(uint64_t number, std::string* contents) override {
    return Current()->GetTableContents(number, contents);
  }
  Status VerifyTables(std::vector<TableCheck>* checks) override { return Current()->VerifyTables(checks); }

 private:
  Status Refused() const {
    return Status::NotSupported(name_, "is open as a secondary (DB::OpenAsSecondary): reads only");
  }
  std::shared_ptr<DB> Current() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return current_;
  }
  // The open a read goes to: its snapshot's, else the current one; sets
  // *inner's snapshot to the open's own.
  std::shared_ptr<DB> For(const ReadOptions& options, ReadOptions* inner) const {
    if (options.snapshot == nullptr) return Current();
    const auto* snapshot = static_cast<const SecondarySnapshot*>(options.snapshot);
    inner->snapshot = snapshot->inner();
    return snapshot->db();
  }

  const Options options_;
  const std::string name_;
  mutable std::mutex mutex_;
  std::shared_ptr<DB> current_;  // guarded by mutex_
};

}  // namespace

Status DB::OpenAsSecondary(const Options& options, const std::string& name, std::unique_ptr<DB>* db) {
  db->reset();
  std::unique_ptr<DB> first;
  Status s = DB::OpenForReadOnly(options, name, &first);
  if (!s.ok()) return s;
  *db = std::make_unique<SecondaryDB>(options, name, std::move(first));
  return Status::OK();
}

Status DB::TryCatchUpWithPrimary() {
  return Status::NotSupported("TryCatchUpWithPrimary", "the database was not opened with DB::OpenAsSecondary");
}

}  // namespace jigsaw
