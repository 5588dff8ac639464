#include "db/flush.h"

#include "compaction/output_sink.h"
#include "util/persist_bug.h"
#include "format/keyset_block.h"

namespace jigsaw {

uint64_t KeySetBlockSizeBound(const MemTable& mem, const BlockBuilderOptions& options) {
  uint64_t size = 0;
  if (keyset::BlockSizeBound(options, mem.num_entries(), mem.value_bytes(), mem.sizing_entry_bytes(), &size)) {
    return size;
  }
  // No bound in O(1): exactly, from a pass over the entries.
  keyset::BlockSizer sizer(options);
  auto it = mem.NewIterator();
  for (it->SeekToFirst(); it->Valid(); it->Next()) sizer.Add(it->user_key().size(), it->value().size());
  return sizer.size();
}

Status BuildMemTableBlock(const MemTable& mem, BlockFormat format, const BlockBuilderOptions& options, char* dest,
                          size_t capacity, size_t* block_size, SampledPhase* encode) {
  // The builder's calls timed in `encode` (sampled per batch or entry;
  // finishing exactly), the memtable's walk left out: both formats share it.
  auto sampled = [&](auto&& work) { return encode != nullptr ? encode->Run(work) : work(); };
  auto exact = [&](auto&& work) { return encode != nullptr ? encode->RunExact(work) : work(); };
  std::unique_ptr<keyset::PlacedBuilder> placed;
  if (format == BlockFormat::kKeySet) placed = keyset::NewPlacedBuilder(options, dest, capacity, mem.value_bytes());
  if (placed != nullptr) {
    // By copy: the memtable's value log is the block's value buffer, copied
    // whole; each entry's index is its value's offset in the log.
    Status s;
    mem.ForEachEntryBatch(
        [&](const MemTable::FlushEntry* entries, size_t n) {
          if (s.ok()) s = sampled([&] { return placed->AddPlacedRun(entries, n); });
        },
        /*reads_values=*/false);
    if (!s.ok()) return s;
    return exact([&] {
      TimePart(WorkPart::kCopy, [&] { mem.CopyValuesTo(placed->value_buffer()); });
      return placed->Finish(block_size);
    });
  }
  // Entry by entry, each value read where it lies in the log.
  std::unique_ptr<BlockBuilder> builder = NewBlockBuilder(format, options, dest, capacity);
  Status s;
  mem.ForEachEntry(
      [&](const MemTable::FlushEntry& e) {
        if (s.ok()) {
          s = sampled([&] {
            return builder->AddWithHash(e.key, TagSequence(e.tag), TagType(e.tag), Slice(e.value, e.value_size),
                                        e.key_hash);
          });
        }
      },
      /*reads_values=*/true);
  return s.ok() ? exact([&] { return builder->Finish(block_size); }) : s;
}

Status FlushToPmemBlock(TableStore* store, const MemTable& mem, TableRef* table, pmem::Reservation* reservation,
                        PhaseProfile* profile) {
  const uint64_t start_ns = profile != nullptr ? SteadyNanos() : 0;
  // Reserve a bound of the block's size from the memtable's counters (no
  // walk), then build the block in place: keys and values are copied, index
  // fields become value offsets and sizes, links are recomputed.
  const BlockBuilderOptions build_options = store->block_builder_options();
  const uint64_t size = KeySetBlockSizeBound(mem, build_options);
  const uint64_t number = store->NewTableNumber();
  Status s = store->space()->Reserve(pmem::ObjectType::kBlock, size, /*zero=*/false, reservation,
                                     /*may_use_standby=*/true);
  if (!s.ok()) return s;
  size_t block_size = 0;
  SampledPhase encode;
  s = BuildMemTableBlock(mem, BlockFormat::kKeySet, build_options, reservation->data, size, &block_size,
                         profile != nullptr ? &encode : nullptr);
  const uint64_t write_start_ns = profile != nullptr ? SteadyNanos() : 0;
  if (s.ok()) {
    if (!JIGSAW_PERSIST_BUG(kDropFlushBlockPersist)) store->pool()->region()->Persist(reservation->data, block_size);
    s = store->OpenPmem(number, PmemLayout::kKeySetBlock, reservation->offset, block_size, /*verify_checksum=*/false,
                        table);
  }
  if (!s.ok()) {
    store->pool()->Cancel(reservation);
    return s;
  }
  if (profile != nullptr) {
    const uint64_t end_ns = SteadyNanos();
    profile->level = -1;
    profile->to_ssd = false;
    profile->encode_ns = encode.EstimatedNanos();
    profile->encode_copy_ns = encode.EstimatedPartNanos(WorkPart::kCopy);
    profile->encode_filter_checksum_ns = encode.EstimatedPartNanos(WorkPart::kFilterChecksum);
    profile->instrumentation_ns += encode.InstrumentationNanos();
    profile->write_ns = end_ns - write_start_ns;
    profile->bytes_in = mem.ApproximateMemoryUsage();
    profile->entries = mem.num_entries();
    profile->bytes_out = block_size;
    profile->Finish(end_ns - start_ns);
  }
  return s;
}

namespace {

// Hands every entry of `mem` (the memtable's walk, several stretches at
// once) to `sink` as its current entry.
Status AddMemTable(const MemTable& mem, OutputSink* sink) {
  SingleEntry entry;
  Status s;
  mem.ForEachEntry(
      [&](const MemTable::FlushEntry& e) {
        if (!s.ok()) return;
        entry.Set(e.key, e.tag, Slice(e.value, e.value_size), &e.key_hash);
        s = sink->Add(entry);
      },
      /*reads_values=*/true);
  return s;
}

}  // namespace

Status FlushToPmemTableImage(TableStore* store, const MemTable& mem, TableRef* table, pmem::Reservation* reservation,
                             PhaseProfile* profile) {
  OutputPhases phases;  // before the sink that points at it
  // From the standby if the pool is full: a flush is what frees WAL segments.
  PmemTableImageSink sink(store, /*may_use_standby=*/true, profile != nullptr ? &phases : nullptr);
  const uint64_t start_ns = profile != nullptr ? SteadyNanos() : 0;
  Status s = AddMemTable(mem, &sink);
  if (s.ok()) s = sink.Finish();
  if (!s.ok()) {
    sink.Abandon();
    return s;
  }
  // The copy was drained (persisted) by the sink.
  *table = sink.outputs().front();
  *reservation = std::move(sink.reservations().front());
  if (profile != nullptr) {
    profile->level = -1;
    profile->to_ssd = false;
    phases.AddTo(profile);
    profile->bytes_in = mem.ApproximateMemoryUsage();
    profile->entries = sink.entries_added();
    profile->bytes_out = (*table)->size;
    profile->Finish(SteadyNanos() - start_ns);
  }
  return Status::OK();
}

Status FlushToSsdTable(TableStore* store, const MemTable& mem, TableRef* table, PhaseProfile* profile) {
  OutputPhases phases;  // before the sink that points at it
  SsdTableSink sink(store, /*sync_each=*/true, profile != nullptr ? &phases : nullptr);
  const uint64_t start_ns = profile != nullptr ? SteadyNanos() : 0;
  Status s = AddMemTable(mem, &sink);
  if (s.ok()) s = sink.Finish();
  uint64_t dir_sync_ns = profile != nullptr ? SteadyNanos() : 0;
  if (s.ok()) s = sink.files().back()->Close();
  if (s.ok()) s = store->fs()->SyncDir(store->dbname());
  store->sync_stats()->Add(1, 0);  // the directory
  if (!s.ok()) {
    sink.Abandon();
    return s;
  }
  *table = sink.outputs().front();
  if (profile != nullptr) {
    dir_sync_ns = SteadyNanos() - dir_sync_ns;
    profile->level = -1;
    profile->to_ssd = true;
    phases.AddTo(profile);
    profile->sync_ns += dir_sync_ns;
    profile->bytes_in = mem.ApproximateMemoryUsage();
    profile->entries = sink.entries_added();
    profile->bytes_out = (*table)->size;
    profile->Finish(SteadyNanos() - start_ns);
  }
  return Status::OK();
}

}  // namespace jigsaw
