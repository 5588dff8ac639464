#include "pmem/pmem_table.h"

#include <string>
#include <utility>

#include "format/keyset_block.h"
#include "table/iterator_wrappers.h"

namespace jigsaw::pmem {

namespace {

class PmemTable final : public Table {
 public:
  PmemTable(std::unique_ptr<BlockReader> reader, const Slice& contents)
      : reader_(std::move(reader)), contents_(contents) {}

  // ReadOptions::verify_checksums has nothing to add: see NewPmemTable.
  Status Get(const ReadOptions&, const Slice& user_key, SequenceNumber snapshot, ValueType* type,
             std::string* value, SequenceNumber* sequence) const override {
    BlockLookup result;
    Status s = reader_->Get(user_key, snapshot, &result);
    if (!s.ok()) return s;
    *type = result.type;
    *sequence = result.sequence;
    if (result.type == ValueType::kValue) value->assign(result.value.data(), result.value.size());
    return Status::OK();
  }
  void PrefetchForGet(uint64_t key_hash) const override { reader_->PrefetchForGet(key_hash); }
  std::unique_ptr<InternalIterator> NewIterator(const ReadOptions&) const override { return reader_->NewIterator(); }
  std::unique_ptr<InternalIterator> NewScanIterator(SampledPhase* decode) const override {
    auto it = reader_->NewIterator();
    return decode != nullptr ? NewTimedIterator(std::move(it), decode) : std::move(it);
  }
  // Blocks of the current entry layout only: the entry cursor reads no
  // other.
  std::unique_ptr<BlockScan> NewBlockScan(SampledPhase*) const override {
    if (!keyset::HasEntryLayout(contents_)) return nullptr;
    return NewSingleBlockScan(contents_);
  }
  uint64_t num_entries() const override { return reader_->num_entries(); }
  size_t MemoryUsage() const override { return reader_->MemoryUsage(); }
  double ApproximatePosition(const Slice& user_key) const override { return reader_->ApproximatePosition(user_key); }
  Status Validate() const override { return reader_->Validate(); }

 private:
  std::unique_ptr<BlockReader> reader_;
  const Slice contents_;
};

// Forwards `base`'s blocks, charging each a random read (the jump to it)
// and its bytes to the read bandwidth: a merge reads every byte of it.
class NvmTimedBlockScan final : public BlockScan {
 public:
  NvmTimedBlockScan(std::unique_ptr<BlockScan> base, const NvmTiming* timing)
      : base_(std::move(base)), timing_(timing) {}
  bool NextBlock(Slice* block) override {
    if (!base_->NextBlock(block)) return false;
    timing_->ChargeRandomRead();
    timing_->ChargeSequentialRead(block->size());
    return true;
  }
  Status status() const override { return base_->status(); }

 private:
  const std::unique_ptr<BlockScan> base_;
  const NvmTiming* const timing_;
};

// Forwards to `base`, charging one random read per positioning and the
// bytes of every entry it steps over to the read bandwidth, `bytes_per_entry`
// each (the block's average), paid in units of kChargeBytes and the rest
// when the iterator is destroyed.
class NvmTimedIterator final : public InternalIterator {
 public:
  NvmTimedIterator(std::unique_ptr<InternalIterator> base, const NvmTiming* timing, uint64_t bytes_per_entry)
      : base_(std::move(base)), timing_(timing), bytes_per_entry_(bytes_per_entry) {}
  ~NvmTimedIterator() override {
    if (owed_bytes_ > 0) timing_->ChargeSequentialRead(owed_bytes_);
  }

  void SeekToFirst() override {
    timing_->ChargeRandomRead();
    base_->SeekToFirst();
    Moved(1);
  }
  void SeekToLast() override {
    timing_->ChargeRandomRead();
    base_->SeekToLast();
    Moved(1);
  }
  void Seek(const Slice& user_key, SequenceNumber sequence) override {
    timing_->ChargeRandomRead();
    base_->Seek(user_key, sequence);
    Moved(1);
  }
  void Next() override {
    base_->Next();
    Moved(1);
  }
  void Prev() override {
    base_->Prev();
    Moved(1);
  }
  Status status() const override { return base_->status(); }
  uint32_t PeekRun(const Slice* limit_key, uint64_t limit_tag, uint32_t max_entries, EntryRun* run) override {
    return base_->PeekRun(limit_key, limit_tag, max_entries, run);
  }
  // Entries read through a window are charged when SkipRun passes them.
  bool OpenWindow(BlockWindow* window) override { return base_->OpenWindow(window); }
  void SkipRun(uint32_t n) override {
    base_->SkipRun(n);
    Moved(n);
  }

 private:
  static constexpr uint64_t kChargeBytes = 4096;

  // After a move by `entries` (counting the entry landed on; past the end
  // there is none to count).
  void Moved(uint64_t entries) {
    valid_ = base_->Valid();
    if (valid_) {
      SetEntryFrom(*base_);
    } else {
      --entries;
    }
    owed_bytes_ += entries * bytes_per_entry_;
    if (owed_bytes_ >= kChargeBytes) {
      timing_->ChargeSequentialRead(owed_bytes_);
      owed_bytes_ = 0;
    }
  }

  std::unique_ptr<InternalIterator> base_;
  const NvmTiming* const timing_;
  const uint64_t bytes_per_entry_;
  uint64_t owed_bytes_ = 0;
};

class NvmTimedTable final : public Table {
 public:
  NvmTimedTable(std::unique_ptr<Table> base, const NvmTiming* timing, uint64_t table_bytes)
      : base_(std::move(base)),
        timing_(timing),
        bytes_per_entry_(base_->num_entries() > 0 ? (table_bytes + base_->num_entries() - 1) / base_->num_entries()
                                                  : 0) {}

  Status Get(const ReadOptions& options, const Slice& user_key, SequenceNumber snapshot, ValueType* type,
             std::string* value, SequenceNumber* sequence) const override {
    timing_->ChargeRandomRead();
    return base_->Get(options, user_key, snapshot, type, value, sequence);
  }
  std::unique_ptr<InternalIterator> NewIterator(const ReadOptions& options) const override {
    return std::make_unique<NvmTimedIterator>(base_->NewIterator(options), timing_, bytes_per_entry_);
  }
  std::unique_ptr<InternalIterator> NewScanIterator(SampledPhase* decode) const override {
    return std::make_unique<NvmTimedIterator>(base_->NewScanIterator(decode), timing_, bytes_per_entry_);
  }
  std::unique_ptr<BlockScan> NewBlockScan(SampledPhase* decode) const override {
    auto scan = base_->NewBlockScan(decode);
    return scan == nullptr ? nullptr : std::make_unique<NvmTimedBlockScan>(std::move(scan), timing_);
  }
  uint64_t num_entries() const override { return base_->num_entries(); }
  size_t MemoryUsage() const override { return base_->MemoryUsage(); }
  double ApproximatePosition(const Slice& user_key) const override { return base_->ApproximatePosition(user_key); }
  Status Validate() const override { return base_->Validate(); }

 private:
  const std::unique_ptr<Table> base_;
  const NvmTiming* const timing_;
  const uint64_t bytes_per_entry_;
};

}  // namespace

std::unique_ptr<Table> NewPmemTable(std::unique_ptr<BlockReader> reader, const Slice& contents) {
  return std::make_unique<PmemTable>(std::move(reader), contents);
}

std::unique_ptr<Table> NewNvmTimedTable(std::unique_ptr<Table> base, const NvmTiming* timing, uint64_t table_bytes) {
  return std::make_unique<NvmTimedTable>(std::move(base), timing, table_bytes);
}

}  // namespace jigsaw::pmem
