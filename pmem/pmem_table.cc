#include "pmem/pmem_table.h"

#include <string>
#include <utility>

#include "table/iterator_wrappers.h"

namespace jigsaw::pmem {

namespace {

class PmemTable final : public Table {
 public:
  explicit PmemTable(std::unique_ptr<BlockReader> reader) : reader_(std::move(reader)) {}

  // ReadOptions::verify_checksums has nothing to add: see NewPmemTable.
  Status Get(const ReadOptions&, const Slice& user_key, SequenceNumber snapshot, ValueType* type,
             std::string* value) const override {
    BlockLookup result;
    Status s = reader_->Get(user_key, snapshot, &result);
    if (!s.ok()) return s;
    *type = result.type;
    if (result.type == ValueType::kValue) value->assign(result.value.data(), result.value.size());
    return Status::OK();
  }
  std::unique_ptr<InternalIterator> NewIterator(const ReadOptions&) const override { return reader_->NewIterator(); }
  std::unique_ptr<InternalIterator> NewScanIterator(SampledPhase* decode) const override {
    auto it = reader_->NewIterator();
    return decode != nullptr ? NewTimedIterator(std::move(it), decode) : std::move(it);
  }
  uint64_t num_entries() const override { return reader_->num_entries(); }
  Status Validate() const override { return reader_->Validate(); }

 private:
  std::unique_ptr<BlockReader> reader_;
};

// Forwards to `base`, charging one random read per positioning.
class NvmTimedIterator final : public InternalIterator {
 public:
  NvmTimedIterator(std::unique_ptr<InternalIterator> base, const NvmTiming* timing)
      : base_(std::move(base)), timing_(timing) {}

  void SeekToFirst() override {
    timing_->ChargeRandomRead();
    base_->SeekToFirst();
    Moved();
  }
  void SeekToLast() override {
    timing_->ChargeRandomRead();
    base_->SeekToLast();
    Moved();
  }
  void Seek(const Slice& user_key, SequenceNumber sequence) override {
    timing_->ChargeRandomRead();
    base_->Seek(user_key, sequence);
    Moved();
  }
  void Next() override {
    base_->Next();
    Moved();
  }
  void Prev() override {
    base_->Prev();
    Moved();
  }
  Status status() const override { return base_->status(); }
  uint32_t PeekRun(const Slice* limit_key, uint64_t limit_tag, uint32_t max_entries, EntryRun* run) override {
    return base_->PeekRun(limit_key, limit_tag, max_entries, run);
  }
  void SkipRun(uint32_t n) override {
    base_->SkipRun(n);
    Moved();
  }

 private:
  void Moved() {
    valid_ = base_->Valid();
    if (valid_) SetEntryFrom(*base_);
  }

  std::unique_ptr<InternalIterator> base_;
  const NvmTiming* const timing_;
};

class NvmTimedTable final : public Table {
 public:
  NvmTimedTable(std::unique_ptr<Table> base, const NvmTiming* timing) : base_(std::move(base)), timing_(timing) {}

  Status Get(const ReadOptions& options, const Slice& user_key, SequenceNumber snapshot, ValueType* type,
             std::string* value) const override {
    timing_->ChargeRandomRead();
    return base_->Get(options, user_key, snapshot, type, value);
  }
  std::unique_ptr<InternalIterator> NewIterator(const ReadOptions& options) const override {
    return std::make_unique<NvmTimedIterator>(base_->NewIterator(options), timing_);
  }
  std::unique_ptr<InternalIterator> NewScanIterator(SampledPhase* decode) const override {
    return base_->NewScanIterator(decode);
  }
  uint64_t num_entries() const override { return base_->num_entries(); }
  Status Validate() const override { return base_->Validate(); }

 private:
  const std::unique_ptr<Table> base_;
  const NvmTiming* const timing_;
};

}  // namespace

std::unique_ptr<Table> NewPmemTable(std::unique_ptr<BlockReader> reader) {
  return std::make_unique<PmemTable>(std::move(reader));
}

std::unique_ptr<Table> NewNvmTimedTable(std::unique_ptr<Table> base, const NvmTiming* timing) {
  return std::make_unique<NvmTimedTable>(std::move(base), timing);
}

}  // namespace jigsaw::pmem
