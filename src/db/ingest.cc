// Bulk ingest: TableFileWriter and DB::IngestExternalFile
// (docs/design/026-bulk-ingest.md).
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "compaction/merge.h"
#include "compaction/output_sink.h"
#include "db/db_impl.h"
#include "jigsaw/table_file_writer.h"
#include "ssd/table.h"
#include "version/filename.h"

namespace jigsaw {

// ---------------------------------------------------------------------------
// TableFileWriter

struct TableFileWriter::Rep {
  Options options;
  FileSystem* fs = nullptr;
  std::string path;
  std::unique_ptr<WritableFile> file;
  std::unique_ptr<ssd::TableBuilder> builder;
  std::string smallest, last;
  uint64_t entries = 0;

  void Drop() {
    builder.reset();
    if (file != nullptr) (void)file->Close();
    file.reset();
    entries = 0;
  }
  Status Add(const Slice& key, ValueType type, const Slice& value) {
    if (builder == nullptr) return Status::InvalidArgument("TableFileWriter", "no file is open");
    if (key.size() > kMaxKeySize || value.size() > kMaxValueSize) {
      return Status::InvalidArgument("TableFileWriter", "key or value over the size limit (docs/format.md)");
    }
    if (entries > 0 && options.comparator->Compare(key, last) <= 0) {
      return Status::InvalidArgument("TableFileWriter", "keys must be added in strictly increasing order");
    }
    Status s = builder->Add(key, 0, type, value);
    if (!s.ok()) return s;
    if (entries == 0) smallest = key.ToString();
    last.assign(key.data(), key.size());
    ++entries;
    return s;
  }
};

TableFileWriter::TableFileWriter(const Options& options) : rep_(std::make_unique<Rep>()) {
  rep_->options = options;
  rep_->fs = options.file_system != nullptr ? options.file_system : FileSystem::Default();
}

TableFileWriter::~TableFileWriter() { rep_->Drop(); }

Status TableFileWriter::Open(const std::string& path) {
  rep_->Drop();
  // A table file written front to back: buffered (256 KiB writes), as the
  // engine writes its own, not a write(2) per block.
  Status s = rep_->fs->NewTableFile(path, /*async_io=*/false, &rep_->file);
  if (!s.ok()) return s;
  BlockBuilderOptions build;
  build.comparator = rep_->options.comparator;
  build.bloom_bits_per_key = rep_->options.bloom_bits_per_key;
  rep_->builder =
      std::make_unique<ssd::TableBuilder>(build, rep_->options.ssd_block_size, rep_->file.get(), BlockFormat::kKeySet);
  rep_->builder->set_compression(rep_->options.compression);
  rep_->path = path;
  return Status::OK();
}

Status TableFileWriter::Put(const Slice& key, const Slice& value) { return rep_->Add(key, ValueType::kValue, value); }

Status TableFileWriter::Delete(const Slice& key) { return rep_->Add(key, ValueType::kDeletion, Slice()); }

Status TableFileWriter::Finish(ExternalFileInfo* info) {
  if (rep_->builder == nullptr) return Status::InvalidArgument("TableFileWriter", "no file is open");
  if (rep_->entries == 0) return Status::InvalidArgument(rep_->path, "holds no entries");
  ssd::TableInfo table;
  Status s = rep_->builder->Finish(&table);
  if (s.ok()) s = rep_->file->Sync();
  const Status closed = rep_->file->Close();
  if (s.ok()) s = closed;
  rep_->file.reset();
  rep_->builder.reset();
  if (s.ok() && info != nullptr) {
    info->path = rep_->path;
    info->smallest_key = rep_->smallest;
    info->largest_key = rep_->last;
    info->entries = rep_->entries;
    s = rep_->fs->GetFileSize(rep_->path, &info->file_size);
  }
  rep_->entries = 0;
  return s;
}

// ---------------------------------------------------------------------------
// IngestExternalFile

namespace {

// Forwards another iterator's entries with every sequence number replaced
// by one: an ingested file's entries (all sequence 0) taking the ingest's.
class ResequencedIterator final : public InternalIterator {
 public:
  ResequencedIterator(std::unique_ptr<InternalIterator> source, SequenceNumber sequence)
      : source_(std::move(source)), sequence_(sequence) {}
  void SeekToFirst() override { Settle([&] { source_->SeekToFirst(); }); }
  void SeekToLast() override { Settle([&] { source_->SeekToLast(); }); }
  void Seek(const Slice& key, SequenceNumber sequence) override { Settle([&] { source_->Seek(key, sequence); }); }
  void Next() override { Settle([&] { source_->Next(); }); }
  void Prev() override { Settle([&] { source_->Prev(); }); }
  Status status() const override { return source_->status(); }

 private:
  template <typename Move>
  void Settle(Move move) {
    move();
    valid_ = source_->Valid();
    if (!valid_) return;
    SetEntryFrom(*source_);
    tag_ = PackTag(sequence_, TagType(tag_));
  }
  std::unique_ptr<InternalIterator> source_;
  const SequenceNumber sequence_;
};

// Every entry of an ingested table has sequence 0 and a known type, and
// every block's checksum holds (a scan verifies them).
Status CheckIngestedEntries(const TableMeta& table, const std::string& source) {
  std::unique_ptr<InternalIterator> it = table.table->NewScanIterator(nullptr);
  uint64_t entries = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++entries) {
    if (TagSequence(it->tag()) != 0 || static_cast<uint8_t>(TagType(it->tag())) > kMaxValueTypeByte) {
      return Status::InvalidArgument(source, "holds an entry that is not a TableFileWriter's (sequence " +
                                                 std::to_string(TagSequence(it->tag())) + ")");
    }
  }
  Status s = it->status();
  if (s.ok() && entries != table.entries) s = Status::Corruption(source, "holds fewer entries than its index says");
  return s;
}

}  // namespace

Status DBImpl::BringInIngestedFiles(const std::vector<std::string>& files, const IngestExternalFileOptions& options,
                                    std::vector<TableRef>* tables) {
  FileSystem* const fs = tables_->fs();
  VersionSet* const versions = versions_.get();  // file numbers are taken without mutex_
  Status s;
  for (size_t i = 0; i < files.size() && s.ok(); ++i) {
    const std::string& source = files[i];
    const uint64_t number = versions->NewFileNumber();
    const std::string path = TableFileName(name_, number);
    s = options.move_files ? fs->LinkFile(source, path) : Status::NotSupported("copy");
    if (!s.ok()) {
      std::unique_ptr<RandomAccessFile> file;
      s = fs->NewRandomAccessFile(source, &file);
      if (s.ok()) s = CopyFile(fs, file.get(), source, path);
    } else {
      s = fs->SyncFile(path);
    }
    TableRef table;
    if (s.ok()) {
      s = tables_->OpenSsd(number, &table);
      if (!s.ok()) s = Status::Corruption(source, "is not a table file: " + s.ToString());
    }
    if (s.ok()) s = CheckIngestedEntries(*table, source);
    if (table != nullptr) tables->push_back(table);
    if (!s.ok()) {
      if (table != nullptr) table->obsolete = true;  // its file goes with it
      else (void)fs->RemoveFile(path);
    }
  }
  if (s.ok()) s = fs->SyncDir(name_);
  if (s.ok()) {
    std::sort(tables->begin(), tables->end(),
              [&](const TableRef& a, const TableRef& b) { return ucmp_->Compare(a->smallest, b->smallest) < 0; });
    for (size_t i = 1; i < tables->size() && s.ok(); ++i) {
      if (ucmp_->Compare((*tables)[i - 1]->largest, (*tables)[i]->smallest) >= 0) {
        s = Status::InvalidArgument("IngestExternalFile", "the files' key ranges overlap");
      }
    }
  }
  if (!s.ok()) {
    for (TableRef& t : *tables) t->obsolete = true;
    tables->clear();
  }
  return s;
}

bool DBImpl::MemTablesOverlap(const std::vector<TableRef>& tables) const {
  std::vector<const MemTable*> mems{mem_.get()};
  for (const Immutable& imm : imm_) mems.push_back(imm.mem.get());
  for (const MemTable* mem : mems) {
    if (std::shared_ptr<const RangeTombstoneSet> set = mem->range_tombstones()) {
      for (const TableRef& t : tables) {
        if (set->Overlaps(t->smallest, t->largest, kMaxSequenceNumber)) return true;
      }
    }
    if (mem->num_entries() == 0) continue;
    std::unique_ptr<InternalIterator> it = mem->NewIterator();
    for (const TableRef& t : tables) {
      it->Seek(t->smallest);
      if (it->Valid() && ucmp_->Compare(it->user_key(), t->largest) <= 0) return true;
    }
  }
  return false;
}

int DBImpl::IngestLevel(const Version& version, const std::vector<TableRef>& tables) const {
  for (int level = kNumLevels - 1; level >= 1; --level) {
    bool free = true;
    for (const TableRef& t : tables) {
      free = free && version.Overlapping(ucmp_, level, t->smallest, t->largest).empty();
    }
    if (free) return level;
  }
  return 0;
}

Status DBImpl::IngestAtFrontOfQueue(std::vector<TableRef>* tables, CompactionOutputs* out, int* level_out) {
  // Keys in a memtable are found before any table's: a memtable holding
  // keys in the files' range goes to L0 first.
  if (MemTablesOverlap(*tables)) {
    Status s = !mem_->empty() ? SwitchMemTable(0, /*may_use_standby=*/true) : Status::OK();
    if (!s.ok()) return s;
    flush_failed_ = false;
    bg_cv_.Signal();
    while (!imm_.empty() && bg_error_.ok() && !flush_failed_) done_cv_.WaitFor(std::chrono::milliseconds(100));
    if (!bg_error_.ok()) return bg_error_;
    if (!imm_.empty()) return PoolFullStatus("IngestExternalFile cannot flush the memtable");
  }
  const SequenceNumber sequence = versions_->last_sequence() + 1;
  // As they are (sequence 0, below every version of every key) only where
  // nothing could see a version of their keys: no table holds one, no
  // range tombstone covers one (it would delete them), and no snapshot
  // could see the files' keys appear before its time.
  std::shared_ptr<const Version> base = versions_->current();
  bool rewrite = !snapshots_.empty();
  for (const TableRef& t : *tables) {
    rewrite = rewrite || (base->range_tombstones != nullptr &&
                          base->range_tombstones->Overlaps(t->smallest, t->largest, kMaxSequenceNumber));
  }
  for (int level = 0; level < kNumLevels && !rewrite; ++level) {
    for (const TableRef& t : *tables) {
      rewrite = rewrite || !base->Overlapping(ucmp_, level, t->smallest, t->largest).empty();
    }
  }
  const int level = rewrite ? 0 : kNumLevels - 1;
  uint64_t bytes = 0;
  for (const TableRef& t : *tables) bytes += t->size;
  const bool to_ssd = disk_mode() || (options_.storage_mode == StorageMode::kHybrid && level > 0 &&
                                      OutputToSsd(*base, level, bytes));
  *level_out = level;
  if (to_ssd && !rewrite) {
    out->outputs = *tables;  // the files themselves
    return Status::OK();
  }
  // Copied into the level's tier through the merge loop, whose sink takes
  // a KeySet table's runs as bytes; with the ingest's sequence number,
  // entry by entry.
  MergeRules rules;
  rules.ucmp = ucmp_;
  rules.smallest_snapshot = sequence;
  rules.base = nullptr;  // every deletion stays
  rules.output_level = level;
  mutex_.Unlock();  // writers still wait behind this ingest at the front of the queue
  Status s;
  for (const TableRef& t : *tables) {
    // As they are: KeySet blocks read in place, their entries handed to
    // the sink as runs of bytes. Rewritten: entry by entry.
    auto merge = [&](OutputSink* sink) {
      uint64_t entries = 0;
      if (!rewrite) {
        Compaction one;
        one.inputs[0] = {t};
        return MergeCompaction(one, 1, nullptr, nullptr, rules, sink, {}, nullptr, &entries, nullptr);
      }
      ResequencedIterator input(t->table->NewScanIterator(nullptr), sequence);
      return MergeInto(&input, rules, sink, {}, &entries);
    };
    if (to_ssd) {
      SsdTableSink sink(tables_.get(), /*sync_each=*/true, nullptr);
      s = merge(&sink);
      if (!s.ok()) sink.Abandon();
      for (auto& f : sink.files()) out->files.push_back(std::move(f));
      for (TableRef& o : sink.outputs()) out->outputs.push_back(std::move(o));
    } else {
      std::unique_ptr<PmemSink> sink = NewPmemSink(tables_.get(), /*may_use_standby=*/false, nullptr);
      s = merge(sink.get());
      if (!s.ok()) sink->Abandon();
      for (auto& r : sink->reservations()) out->reservations.push_back(std::move(r));
      for (TableRef& o : sink->outputs()) out->outputs.push_back(std::move(o));
    }
    if (!s.ok()) break;
  }
  if (s.ok() && to_ssd) s = tables_->fs()->SyncDir(name_);
  mutex_.Lock();
  if (!s.ok()) {
    out->Abandon(pool());
    return s;
  }
  for (TableRef& t : *tables) t->obsolete = true;  // copied
  return Status::OK();
}

Status DBImpl::IngestExternalFile(const std::vector<std::string>& files, const IngestExternalFileOptions& options) {
  if (read_only_) return Status::NotSupported(name_, "is open read-only (DB::OpenForReadOnly)");
  if (files.empty()) return Status::InvalidArgument("IngestExternalFile", "no files");
  std::vector<TableRef> tables;
  Status s = BringInIngestedFiles(files, options, &tables);
  if (!s.ok()) return s;
  MutexLock lock(&mutex_);
  // At the front of the write queue, as a memtable switch is: no write
  // takes a sequence number until the ingest has its own.
  s = AloneInWriteQueue([&]() REQUIRES(mutex_) { return IngestAlone(&tables); });
  if (s.ok() && options.move_files) {
    for (const std::string& f : files) (void)tables_->fs()->RemoveFile(f);
  }
  return s;
}

Status DBImpl::IngestAlone(std::vector<TableRef>* tables) {
  CompactionOutputs out;
  int level = 0;
  Status s = bg_error_.ok() ? IngestAtFrontOfQueue(tables, &out, &level) : bg_error_;
  if (s.ok()) {
    CommitSlot slot(this);
    const SequenceNumber sequence = versions_->last_sequence() + 1;
    // Compactions may have written tables into the chosen level meanwhile.
    std::shared_ptr<const Version> current = versions_->current();
    if (level > 0) level = IngestLevel(*current, out.outputs);
    VersionEdit edit;
    for (const TableRef& t : out.outputs) edit.Add(level, t);
    std::vector<pmem::Reservation*> publish;
    for (auto& r : out.reservations) publish.push_back(&r);
    versions_->SetLastSequence(sequence);
    s = Commit(ApplyEdit(*current, edit, ucmp_), nullptr, publish, {}, /*may_use_standby=*/false,
               CommitIo::kHoldMutex);
    if (s.ok()) {
      out.reservations.clear();
      for (auto& f : out.files) (void)f->Close();
      out.files.clear();
      PublishWriteGroup(sequence, published_log_end_);
      Log(info_log_, "Ingested %zu file(s): %zu table(s) at L%d, sequence %llu", tables->size(),
          out.outputs.size(), level, static_cast<unsigned long long>(sequence));
    } else {
      versions_->SetLastSequence(sequence - 1);
      out.Abandon(pool());
    }
  } else {
    for (TableRef& t : *tables) t->obsolete = true;
  }
  return s;
}

}  // namespace jigsaw
