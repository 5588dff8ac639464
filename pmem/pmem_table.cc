#include "pmem/pmem_table.h"

#include <atomic>
#include <string>
#include <utility>

#include "format/keyset_block.h"
#include "table/iterator_wrappers.h"
#include "util/guarded_read.h"

namespace jigsaw::pmem {

namespace {

// A read of pool memory the kernel could not supply: a media error (a
// poisoned line of persistent memory), or a pool file cut short beneath
// its mapping.
Status ReadFault(uint64_t number) {
  return Status::Corruption("block " + std::to_string(number),
                            "read fault in pool memory (a media error, or a pool file cut short)");
}

// Positioned on nothing, with `status`.
class FailedIterator final : public InternalIterator {
 public:
  explicit FailedIterator(Status status) : status_(std::move(status)) {}
  void SeekToFirst() override {}
  void SeekToLast() override {}
  void Seek(const Slice&, SequenceNumber) override {}
  void Next() override {}
  void Prev() override {}
  Status status() const override { return status_; }

 private:
  const Status status_;
};

class FailedBlockScan final : public BlockScan {
 public:
  explicit FailedBlockScan(Status status) : status_(std::move(status)) {}
  bool NextBlock(Slice*) override { return false; }
  Status status() const override { return status_; }

 private:
  const Status status_;
};

// Whether a block has been read whole without a fault: once it has, readers
// stepping through it in place (InternalIterator::OpenWindow) read it
// unguarded.
class ProbedOnce {
 public:
  explicit ProbedOnce(const Slice& contents) : contents_(contents) {}
  // True if the block was or is now read whole without a fault (one pass
  // over it, the first time).
  bool Readable() const {
    if (state_.load(std::memory_order_acquire) == kReadable) return true;
    if (!ProbeReadable(contents_.data(), contents_.size())) return false;  // tried again next time
    state_.store(kReadable, std::memory_order_release);
    return true;
  }

 private:
  static constexpr uint8_t kUnknown = 0, kReadable = 1;
  const Slice contents_;
  mutable std::atomic<uint8_t> state_{kUnknown};
};

// Forwards a pmem block's iterator with every move guarded: the move, and
// a probe of the key and value it lands on, which its reader reads after
// it, unguarded. A fault leaves it !Valid() with a Corruption status for
// good. It opens windows (InternalIterator::OpenWindow), whose entries its
// reader reads in place and unguarded, only on a block read whole without
// a fault (`probed`).
class GuardedIterator final : public InternalIterator {
 public:
  GuardedIterator(std::unique_ptr<InternalIterator> base, const ProbedOnce* probed, uint64_t number)
      : base_(std::move(base)), probed_(probed), number_(number) {}

  void SeekToFirst() override {
    Move([](InternalIterator* it) { it->SeekToFirst(); });
  }
  void SeekToLast() override {
    Move([](InternalIterator* it) { it->SeekToLast(); });
  }
  void Seek(const Slice& user_key, SequenceNumber sequence) override {
    Move([&](InternalIterator* it) { it->Seek(user_key, sequence); });
  }
  void Next() override {
    Move([](InternalIterator* it) { it->Next(); });
  }
  void Prev() override {
    Move([](InternalIterator* it) { it->Prev(); });
  }
  Status status() const override { return faulted_ ? ReadFault(number_) : base_->status(); }
  bool OpenWindow(BlockWindow* window) override { return probed_->Readable() && base_->OpenWindow(window); }
  void SkipRun(uint32_t n) override {
    Move([n](InternalIterator* it) { it->SkipRun(n); });
  }

 private:
  template <typename Op>
  void Move(Op&& move) {
    valid_ = false;
    if (faulted_) return;
    InternalIterator* const base = base_.get();
    if (!GuardedRead([&] {
          move(base);
          if (!base->Valid()) return;
          ProbeLines(base->user_key().data(), base->user_key().size());
          ProbeLines(base->value().data(), base->value().size());
        })) {
      faulted_ = true;
      return;
    }
    valid_ = base->Valid();
    if (valid_) SetEntryFrom(*base);
  }

  const std::unique_ptr<InternalIterator> base_;
  const ProbedOnce* const probed_;
  const uint64_t number_;
  bool faulted_ = false;
};

class PmemTable final : public Table {
 public:
  PmemTable(std::unique_ptr<BlockReader> reader, const Slice& contents, uint64_t number, bool guard_reads)
      : reader_(std::move(reader)), contents_(contents), number_(number), guard_reads_(guard_reads),
        probed_(contents) {}

  // ReadOptions::verify_checksums has nothing to add: see NewPmemTable.
  Status Get(const ReadOptions&, const Slice& user_key, SequenceNumber snapshot, ValueType* type,
             std::string* value, SequenceNumber* sequence) const override {
    // A fault abandons the read: nothing in it owns memory but `value`,
    // whose assign leaves it as it was until the copy is done.
    BlockLookup result;
    Status s;
    auto read = [&] {
      s = reader_->Get(user_key, snapshot, &result);
      if (s.ok() && result.type == ValueType::kValue) value->assign(result.value.data(), result.value.size());
    };
    if (!guard_reads_) {
      read();
    } else if (!GuardedRead(read)) {
      return ReadFault(number_);
    }
    if (!s.ok()) return s;
    *type = result.type;
    *sequence = result.sequence;
    return Status::OK();
  }
  void PrefetchForGet(uint64_t key_hash) const override { reader_->PrefetchForGet(key_hash); }
  std::unique_ptr<InternalIterator> NewIterator(const ReadOptions&) const override {
    if (!guard_reads_) return reader_->NewIterator();
    return std::make_unique<GuardedIterator>(reader_->NewIterator(), &probed_, number_);
  }
  // Flushes, compactions, migrations and copies read the block in place,
  // unguarded, entry runs and whole blocks at a time: the block is probed
  // whole first, and one that faults is a failed scan.
  std::unique_ptr<InternalIterator> NewScanIterator(SampledPhase* decode) const override {
    if (!Readable()) return std::make_unique<FailedIterator>(ReadFault(number_));
    auto it = reader_->NewIterator();
    return decode != nullptr ? NewTimedIterator(std::move(it), decode) : std::move(it);
  }
  // Blocks of the current entry layout only: the entry cursor reads no
  // other.
  std::unique_ptr<BlockScan> NewBlockScan(SampledPhase*) const override {
    if (!keyset::HasEntryLayout(contents_)) return nullptr;
    if (!Readable()) return std::make_unique<FailedBlockScan>(ReadFault(number_));
    return NewSingleBlockScan(contents_);
  }
  uint64_t num_entries() const override { return reader_->num_entries(); }
  size_t MemoryUsage() const override { return reader_->MemoryUsage(); }
  double ApproximatePosition(const Slice& user_key) const override {
    double position = 0.5;
    return GuardedRead([&] { position = reader_->ApproximatePosition(user_key); }) ? position : 0.5;
  }
  Status Validate() const override {
    Status s;
    return GuardedRead([&] { s = reader_->Validate(); }) ? s : ReadFault(number_);
  }

 private:
  bool Readable() const {
    return GuardedRead([&] { ProbeLines(contents_.data(), contents_.size()); });
  }

  std::unique_ptr<BlockReader> reader_;
  const Slice contents_;
  const uint64_t number_;
  const bool guard_reads_;
  const ProbedOnce probed_;
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

std::unique_ptr<Table> NewPmemTable(std::unique_ptr<BlockReader> reader, const Slice& contents, uint64_t number,
                                    bool guard_reads) {
  return std::make_unique<PmemTable>(std::move(reader), contents, number, guard_reads);
}

std::unique_ptr<Table> NewNvmTimedTable(std::unique_ptr<Table> base, const NvmTiming* timing, uint64_t table_bytes) {
  return std::make_unique<NvmTimedTable>(std::move(base), timing, table_bytes);
}

}  // namespace jigsaw::pmem
