#include "compaction/output_sink.h"

#include <algorithm>

#include "format/bloom.h"
#include "pmem/pool_sizing.h"

namespace jigsaw {

namespace {

// Runs `work` timed in `phase` (sampled, or exactly), or untimed when not
// profiling.
template <typename Work>
auto Sampled(OutputPhases* phases, SampledPhase OutputPhases::*phase, Work&& work) -> decltype(work()) {
  return phases == nullptr ? work() : (phases->*phase).Run(work);
}
template <typename Work>
auto Exact(OutputPhases* phases, SampledPhase OutputPhases::*phase, Work&& work) -> decltype(work()) {
  return phases == nullptr ? work() : (phases->*phase).RunExact(work);
}

}  // namespace

// ---------------------------------------------------------------------------
// PmemSink

PmemSink::PmemSink(TableStore* store, bool may_use_standby, OutputPhases* phases)
    : store_(store),
      may_use_standby_(may_use_standby),
      phases_(phases),
      // An output of exactly table_size would spill 16 header bytes into
      // one more chunk (pmem/pool_sizing.h).
      chunk_limit_(OutputBlockChunks(store->options().TableSize()) * kPoolChunk - kPoolChunkHeader) {}

Status PmemSink::AddToPool(const char* data, size_t size, PmemLayout layout) {
  pmem::Reservation reservation;
  Status s = store_->space()->Reserve(pmem::ObjectType::kBlock, size, /*zero=*/false, &reservation, may_use_standby_);
  if (!s.ok()) return s;
  // A copy of finished bytes, not an encoding.
  Exact(phases_, &OutputPhases::write, [&] {
    pmem::Region* region = store_->pool()->region();
    region->MemcpyNoDrain(reservation.data, data, size);
    region->Drain();
  });
  TableRef table;
  s = store_->OpenPmem(store_->NewTableNumber(), layout, reservation.offset, size, /*verify_checksum=*/false, &table);
  reservations_.push_back(std::move(reservation));
  if (!s.ok()) return s;
  outputs_.push_back(std::move(table));
  return Status::OK();
}

void PmemSink::DropOutputs() {
  outputs_.clear();
  for (pmem::Reservation& r : reservations_) store_->pool()->Cancel(&r);
  reservations_.clear();
}

std::unique_ptr<PmemSink> NewPmemSink(TableStore* store, bool may_use_standby, OutputPhases* phases) {
  if (store->pmem_table_format() == BlockFormat::kClassic) {
    return std::make_unique<PmemTableImageSink>(store, may_use_standby, phases);
  }
  return std::make_unique<PmemBlockSink>(store, may_use_standby, phases);
}

// ---------------------------------------------------------------------------
// PmemBlockSink

PmemBlockSink::PmemBlockSink(TableStore* store, bool may_use_standby, OutputPhases* phases)
    : PmemSink(store, may_use_standby, phases), build_options_(store->block_builder_options()) {}

PmemBlockSink::~PmemBlockSink() = default;

Status PmemBlockSink::CloseIfFull(size_t key_size, size_t value_size, bool* closed) {
  *closed = false;
  if (builder_ == nullptr) return Status::OK();
  const size_t size = builder_->CurrentSize();
  if (size < store_->options().TableSize() &&
      size + MaxEntryFootprint(BlockFormat::kKeySet, key_size, value_size) <= chunk_limit_) {
    return Status::OK();
  }
  *closed = true;
  return FinishBlock();
}

void PmemBlockSink::StartBlock(size_t min_capacity) {
  const size_t capacity = std::max<size_t>(2 * store_->options().TableSize(), min_capacity);
  if (buffer_.size() * 8 < capacity) buffer_.assign(capacity / 8 + 1, 0);
  builder_ = keyset::NewBuilder(build_options_, reinterpret_cast<char*>(buffer_.data()), capacity);
}

Status PmemBlockSink::Add(const InternalIterator& entry) {
  const size_t footprint =
      MaxEntryFootprint(BlockFormat::kKeySet, entry.user_key().size(), entry.value().size()) + 4096;
  if (builder_ == nullptr) StartBlock(footprint);
  auto add = [&] {
    return entry.carries_key_hash()
               ? builder_->AddWithHash(entry.user_key(), entry.sequence(), entry.type(), entry.value(),
                                       entry.key_hash())
               : builder_->Add(entry.user_key(), entry.sequence(), entry.type(), entry.value());
  };
  Status s = Sampled(phases_, &OutputPhases::encode, add);
  if (s.IsNoSpace()) {  // one key's versions overflowed the buffer
    // An empty block (AppendRun opened it for a run whose first entry it
    // could not take) is only replaced by a larger one: no empty output.
    if (builder_->num_entries() > 0) {
      s = FinishBlock();
    } else {
      builder_.reset();
      s = Status::OK();
    }
    if (s.ok()) {
      StartBlock(footprint);
      s = add();
    }
  }
  return s;
}

Status PmemBlockSink::AppendRun(const EntryRun& run, uint32_t* taken) {
  *taken = 0;
  if (!TakesRuns()) return Status::OK();
  if (builder_ == nullptr) StartBlock(store_->options().TableSize());
  const uint64_t limit = std::min<uint64_t>(store_->options().TableSize(), chunk_limit_);
  // Sampled: a merge of alternating inputs appends runs of one entry.
  *taken = Sampled(phases_, &OutputPhases::encode, [&] { return builder_->AppendRun(run, limit); });
  return Status::OK();
}

Status PmemBlockSink::FinishBlock() {
  size_t size = 0;
  Status s = Exact(phases_, &OutputPhases::encode, [&] { return builder_->Finish(&size); });
  builder_.reset();
  if (!s.ok()) return s;
  return AddToPool(reinterpret_cast<const char*>(buffer_.data()), size, PmemLayout::kKeySetBlock);
}

Status PmemBlockSink::Finish() {
  if (builder_ == nullptr || builder_->num_entries() == 0) return Status::OK();
  return FinishBlock();
}

void PmemBlockSink::Abandon() {
  builder_.reset();
  DropOutputs();
}

// ---------------------------------------------------------------------------
// PmemTableImageSink

PmemTableImageSink::PmemTableImageSink(TableStore* store, bool may_use_standby, OutputPhases* phases)
    : PmemSink(store, may_use_standby, phases) {}

PmemTableImageSink::~PmemTableImageSink() = default;

Status PmemTableImageSink::CloseIfFull(size_t key_size, size_t value_size, bool* closed) {
  *closed = false;
  if (builder_ == nullptr) return Status::OK();
  const uint64_t size = builder_->EstimatedSize();
  // What one more entry can add once the image is finished: the entry, the
  // index entry of a new inner block holding it (two keys, padding), and
  // the table filter's growth with the filter written at the end (a bound:
  // every entry counted as a key).
  const uint64_t filter_bytes =
      uint64_t{bloom::ChooseGeometry(builder_->num_entries() + 1, store_->options().bloom_bits_per_key).lines} *
      bloom::kLineBytes;
  const uint64_t growth = MaxEntryFootprint(BlockFormat::kClassic, key_size, value_size) + 24 + 2 * key_size + 16;
  if (size < store_->options().TableSize() && size + filter_bytes + growth <= chunk_limit_) return Status::OK();
  *closed = true;
  return FinishImage();
}

Status PmemTableImageSink::Add(const InternalIterator& entry) {
  if (builder_ == nullptr) {
    image_.clear();
    builder_ = std::make_unique<ssd::TableBuilder>(store_->block_builder_options(), store_->options().ssd_block_size,
                                                   &file_, BlockFormat::kClassic);
  }
  ++entries_;
  return Sampled(phases_, &OutputPhases::encode, [&] {
    return entry.carries_key_hash()
               ? builder_->Add(entry.user_key(), entry.sequence(), entry.type(), entry.value(), entry.key_hash())
               : builder_->Add(entry.user_key(), entry.sequence(), entry.type(), entry.value());
  });
}

Status PmemTableImageSink::FinishImage() {
  ssd::TableInfo info;
  Status s = Exact(phases_, &OutputPhases::encode, [&] { return builder_->Finish(&info); });
  builder_.reset();
  if (!s.ok()) return s;
  return AddToPool(image_.data(), image_.size(), PmemLayout::kTableImage);
}

Status PmemTableImageSink::Finish() {
  if (builder_ == nullptr || builder_->num_entries() == 0) return Status::OK();
  return FinishImage();
}

void PmemTableImageSink::Abandon() {
  builder_.reset();
  DropOutputs();
  entries_ = 0;
}

// ---------------------------------------------------------------------------
// SsdTableSink

SsdTableSink::SsdTableSink(TableStore* store, bool sync_each, OutputPhases* phases)
    : store_(store), sync_each_(sync_each), phases_(phases) {}

SsdTableSink::~SsdTableSink() = default;

Status SsdTableSink::CloseIfFull(size_t /*key_size*/, size_t /*value_size*/, bool* closed) {
  *closed = builder_ != nullptr && builder_->EstimatedSize() >= store_->options().TableSize();
  return *closed ? FinishTable() : Status::OK();
}

Status SsdTableSink::StartTable() {
  number_ = store_->NewTableNumber();
  Status s = store_->NewTableFile(number_, &file_);
  if (!s.ok()) return s;
  builder_ = std::make_unique<ssd::TableBuilder>(store_->block_builder_options(), store_->options().ssd_block_size,
                                                 file_.get(), store_->ssd_block_format());
  builder_->set_compression(store_->options().compression);
  if (phases_ != nullptr) builder_->set_profile(&phases_->encode);
  return Status::OK();
}

Status SsdTableSink::Add(const InternalIterator& entry) {
  if (builder_ == nullptr) {
    Status s = StartTable();
    if (!s.ok()) return s;
  }
  ++entries_;
  return entry.carries_key_hash()
             ? builder_->Add(entry.user_key(), entry.sequence(), entry.type(), entry.value(), entry.key_hash())
             : builder_->Add(entry.user_key(), entry.sequence(), entry.type(), entry.value());
}

bool SsdTableSink::TakesRuns() const {
  return BuilderTakesRuns(store_->ssd_block_format(), store_->block_builder_options());
}

Status SsdTableSink::AppendRun(const EntryRun& run, uint32_t* taken) {
  *taken = 0;
  if (builder_ == nullptr) {
    Status s = StartTable();
    if (!s.ok()) return s;
  }
  Status s = builder_->AppendRun(run, store_->options().TableSize(), taken);
  entries_ += *taken;
  return s;
}

Status SsdTableSink::FinishTable() {
  ssd::TableInfo info;
  Status s = builder_->Finish(&info);
  if (phases_ != nullptr) phases_->table_write_ns += builder_->write_nanos();
  builder_.reset();
  return EndTable(s, info.file_size);
}

Status SsdTableSink::EndTable(Status s, uint64_t file_size) {
  if (s.ok()) {
    s = Exact(phases_, &OutputPhases::sync, [&] { return sync_each_ ? file_->Sync() : file_->StartWriteback(); });
  }
  if (s.ok() && sync_each_) store_->sync_stats()->Add(1, file_size);
  files_.push_back(std::move(file_));
  if (!s.ok()) return s;
  TableRef table;
  s = store_->OpenSsd(number_, &table);
  if (!s.ok()) return s;
  outputs_.push_back(std::move(table));
  return Status::OK();
}

Status SsdTableSink::Finish() { return builder_ == nullptr ? Status::OK() : FinishTable(); }

Status SsdTableSink::AddWholeBlock(const Slice& block, const Slice& smallest, const Slice& largest) {
  Status s = Finish();
  if (s.ok()) s = StartTable();
  if (!s.ok()) return s;
  s = builder_->AddWholeBlock(block, smallest, largest);
  if (!s.ok()) return s;
  entries_ += builder_->num_entries();
  return FinishTable();
}

Status SsdTableSink::AddTableImage(const Slice& image) {
  Status s = Finish();
  if (!s.ok()) return s;
  number_ = store_->NewTableNumber();
  s = store_->NewTableFile(number_, &file_);
  if (!s.ok()) return s;
  s = Exact(phases_, &OutputPhases::write, [&] { return file_->Append(image); });
  s = EndTable(s, image.size());
  if (s.ok()) entries_ += outputs_.back()->entries;
  return s;
}

void SsdTableSink::Abandon() {
  if (builder_ != nullptr) {  // an unfinished table
    if (phases_ != nullptr) phases_->table_write_ns += builder_->write_nanos();
    builder_.reset();
    (void)file_->Close();
    store_->RemoveTableFile(number_);
    file_.reset();
  }
  for (TableRef& t : outputs_) t->obsolete = true;  // the disposer deletes the file
  outputs_.clear();
  for (auto& f : files_) (void)f->Close();
  files_.clear();
  entries_ = 0;
}

}  // namespace jigsaw
