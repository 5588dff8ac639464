#include "db/flush.h"

#include "compaction/output_sink.h"
#include "util/persist_bug.h"
#include "format/keyset_block.h"
#include "format/keyset_v2.h"

namespace jigsaw {

uint64_t KeySetBlockSizeBound(const MemTable& mem, const BlockBuilderOptions& options) {
  if (options.keyset_version == keyset::v2::kFormatVersion) {
    return keyset::v2::BlockSizeFor(mem.num_entries(), mem.value_bytes(),
                                    keyset::v2::KeySetBytesBound(mem.num_entries(), mem.height_one_entry_bytes()),
                                    options);
  }
  // Older versions: exactly, from a pass over the entries.
  const uint32_t version = options.keyset_version;
  auto it = mem.NewIterator();
  uint64_t entries = 0;
  uint64_t keyset_bytes = keyset::HeadNodeSize(version);
  uint64_t value_bytes = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    keyset_bytes += keyset::BulkEntrySize(version, entries, it->user_key().size());
    value_bytes += it->value().size();
    ++entries;
  }
  return keyset::BlockSizeFor(entries, value_bytes, keyset_bytes, options);
}

Status BuildMemTableBlock(const MemTable& mem, BlockFormat format, const BlockBuilderOptions& options, char* dest,
                          size_t capacity, size_t* block_size) {
  if (format == BlockFormat::kKeySet && options.keyset_version == keyset::v2::kFormatVersion) {
    // By copy: the memtable's value log is the block's value buffer, copied
    // whole; each entry's index is its value's offset in the log.
    auto builder = keyset::v2::Builder::WithPlacedValues(options, dest, capacity, mem.value_bytes());
    Status s;
    mem.ForEachEntryBatch(
        [&](const MemTable::FlushEntry* entries, size_t n) {
          if (s.ok()) s = builder->AddPlacedRun(entries, n);
        },
        /*reads_values=*/false);
    if (!s.ok()) return s;
    mem.CopyValuesTo(builder->value_buffer());
    return builder->Finish(block_size);
  }
  // Entry by entry, each value read where it lies in the log.
  std::unique_ptr<BlockBuilder> builder = NewBlockBuilder(format, options, dest, capacity);
  Status s;
  mem.ForEachEntry(
      [&](const MemTable::FlushEntry& e) {
        if (s.ok()) {
          s = builder->AddWithHash(e.key, TagSequence(e.tag), TagType(e.tag), Slice(e.value, e.value_size),
                                   e.key_hash);
        }
      },
      /*reads_values=*/true);
  return s.ok() ? builder->Finish(block_size) : s;
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
  const uint64_t encode_start_ns = profile != nullptr ? SteadyNanos() : 0;
  size_t block_size = 0;
  s = BuildMemTableBlock(mem, BlockFormat::kKeySet, build_options, reservation->data, size, &block_size);
  const uint64_t write_start_ns = profile != nullptr ? SteadyNanos() : 0;
  if (s.ok()) {
    if (!JIGSAW_PERSIST_BUG(kDropFlushBlockPersist)) store->pool()->region()->Persist(reservation->data, block_size);
    s = store->OpenPmem(number, reservation->offset, block_size, /*verify_checksum=*/false, table);
  }
  if (!s.ok()) {
    store->pool()->Cancel(reservation);
    return s;
  }
  if (profile != nullptr) {
    const uint64_t end_ns = SteadyNanos();
    profile->level = -1;
    profile->to_ssd = false;
    profile->encode_ns = write_start_ns - encode_start_ns;
    profile->write_ns = end_ns - write_start_ns;
    profile->bytes_in = mem.ApproximateMemoryUsage();
    profile->entries = mem.num_entries();
    profile->bytes_out = block_size;
    profile->Finish(end_ns - start_ns);
  }
  return s;
}

Status FlushToSsdTable(TableStore* store, const MemTable& mem, TableRef* table, PhaseProfile* profile) {
  OutputPhases phases;  // before the sink that points at it
  SsdTableSink sink(store, /*sync_each=*/true, profile != nullptr ? &phases : nullptr);
  const uint64_t start_ns = profile != nullptr ? SteadyNanos() : 0;
  // The memtable's walk (several stretches at once), each entry handed to
  // the sink as its current entry.
  SingleEntry entry;
  Status s;
  mem.ForEachEntry(
      [&](const MemTable::FlushEntry& e) {
        if (!s.ok()) return;
        entry.Set(e.key, e.tag, Slice(e.value, e.value_size), &e.key_hash);
        s = sink.Add(entry);
      },
      /*reads_values=*/true);
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
