// RepairDB: salvage a damaged database into a new one that opens
// (include/jigsaw/db.h; docs/durability.md, "Repair").
//
// Every table and log the damaged database still has is read piece by
// piece -- an SSD table block by block, a pmem block or a table image whole
// or block by block, a WAL segment or log file record by record, skipping
// damage -- and what can be read is merged in internal-key order; the newest
// surviving version of each key that no range deletion covers is written
// into a new database, which then replaces the old one. The old files are
// kept beside it.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "db/db_identity.h"
#include "db/wal.h"
#include "db/write_batch_internal.h"
#include "db/memtable.h"
#include "jigsaw/db.h"
#include "pmem/pool.h"
#include "ssd/block_cache.h"
#include "ssd/table.h"
#include "table/merging_iterator.h"
#include "table/range_tombstones.h"
#include "util/coding.h"
#include "util/guarded_read.h"
#include "util/memory_file.h"
#include "version/filename.h"
#include "version/manifest.h"

namespace jigsaw {

namespace {

constexpr const char* kRepairedMarker = "REPAIRED";

// The entries of a table's readable blocks, in order, for a forward pass
// (SeekToFirst, Next): a block that cannot be read or fails its checksum is
// skipped and reported. Other moves are not supported.
class SalvagingTableIterator final : public InternalIterator {
 public:
  SalvagingTableIterator(std::shared_ptr<ssd::SsdTable> table, std::string what, RepairReport* report)
      : table_(std::move(table)), what_(std::move(what)), report_(report) {}

  void SeekToFirst() override {
    next_block_ = 0;
    OpenNextReadableBlock();
  }
  void Next() override {
    block_iter_->Next();
    Settle();
  }
  void SeekToLast() override { Unsupported(); }
  void Seek(const Slice&, SequenceNumber) override { Unsupported(); }
  void Prev() override { Unsupported(); }
  Status status() const override { return status_; }

 private:
  void Unsupported() {
    valid_ = false;
    status_ = Status::NotSupported("a salvaging iterator only steps forward");
  }
  // On the current block's entry, or on the next readable block's first.
  void Settle() {
    if (block_iter_->Valid()) {
      SetEntryFrom(*block_iter_);
      valid_ = true;
      return;
    }
    if (!block_iter_->status().ok()) Lose(current_block_, block_iter_->status(), /*partly=*/true);
    OpenNextReadableBlock();
  }
  void OpenNextReadableBlock() {
    valid_ = false;
    block_iter_.reset();
    block_.reset();
    while (next_block_ < table_->num_blocks()) {
      current_block_ = next_block_++;
      ssd::CachedBlockRef block;
      Status s = table_->ReadBlock(current_block_, /*verify=*/true, &block);
      if (!s.ok()) {
        Lose(current_block_, s, /*partly=*/false);
        continue;
      }
      block_ = std::move(block);
      block_iter_ = block_->reader->NewIterator();
      block_iter_->SeekToFirst();
      if (block_iter_->Valid()) {
        SetEntryFrom(*block_iter_);
        valid_ = true;
        return;
      }
      if (!block_iter_->status().ok()) Lose(current_block_, block_iter_->status(), /*partly=*/false);
    }
  }
  void Lose(uint32_t block, const Status& why, bool partly) {
    ++report_->blocks_lost;
    report_->losses.push_back(what_ + ", block " + std::to_string(block) + (partly ? " (from a damaged entry on)" : "") +
                              ": " + why.ToString());
  }

  const std::shared_ptr<ssd::SsdTable> table_;
  const std::string what_;
  RepairReport* const report_;
  uint32_t next_block_ = 0;
  uint32_t current_block_ = 0;
  ssd::CachedBlockRef block_;
  std::unique_ptr<InternalIterator> block_iter_;
  Status status_;
};

// An iterator over a pmem KeySet block in place (probed readable first),
// keeping what it reads from alive.
class OwningIterator final : public InternalIterator {
 public:
  OwningIterator(std::shared_ptr<void> owner, std::unique_ptr<InternalIterator> base)
      : owner_(std::move(owner)), base_(std::move(base)) {}
  void SeekToFirst() override { Forward([&] { base_->SeekToFirst(); }); }
  void SeekToLast() override { Forward([&] { base_->SeekToLast(); }); }
  void Seek(const Slice& k, SequenceNumber s) override { Forward([&] { base_->Seek(k, s); }); }
  void Next() override { Forward([&] { base_->Next(); }); }
  void Prev() override { Forward([&] { base_->Prev(); }); }
  Status status() const override { return base_->status(); }

 private:
  template <typename Move>
  void Forward(Move move) {
    move();
    valid_ = base_->Valid();
    if (valid_) SetEntryFrom(*base_);
  }
  const std::shared_ptr<void> owner_;
  const std::unique_ptr<InternalIterator> base_;
};

// What a repair reads from the damaged database.
class Salvage {
 public:
  Salvage(const Options& options, std::string name, FileSystem* fs, RepairReport* report)
      : options_(options), name_(std::move(name)), fs_(fs), report_(report),
        cache_(std::make_unique<ssd::BlockCache>(0)),
        logs_(std::make_shared<MemTable>(options.comparator)) {}

  // Reads the manifest (the live set) if it can, then every table and log:
  // the live ones, or, without a manifest, every one found.
  void Gather() {
    const bool pool_mode = options_.storage_mode != StorageMode::kDisk;
    if (pool_mode) OpenPool();
    ManifestState state;
    bool exists = false;
    Status s;
    if (pool_mode) {
      if (pool_ != nullptr) {
        PoolManifestStore store(pool_.get(), nullptr);
        s = store.Load(&state, &exists);
      } else {
        s = Status::Corruption("the pool could not be opened");
      }
    } else {
      FileManifestStore store(fs_, name_, options_.comparator, nullptr);
      s = store.Load(&state, &exists);
    }
    report_->manifest_read = s.ok() && exists;
    if (!report_->manifest_read) {
      report_->losses.push_back("manifest: " + (s.ok() ? std::string("none") : s.ToString()) +
                                "; every table and log found is read (deleted data may reappear)");
    }
    if (report_->manifest_read) {
      tombstones_ = state.range_tombstones;
      std::vector<ManifestState::BlockEntry> tables = state.blocks;
      for (const auto& pending : state.pending) tables.insert(tables.end(), pending.shadows.begin(), pending.shadows.end());
      for (const auto& t : tables) {
        if (t.residence == Residence::kSsd) {
          AddSsdTable(t.number);
        } else {
          AddPmemTable(t.offset, t.size, t.pmem_layout == PmemLayout::kTableImage ? 1 : 0, t.number);
        }
      }
      for (const WalSegmentMeta& w : state.wal_segments) AddLog(w);
    } else {
      AddEverythingFound();
    }
  }

  // The merged sources: the newest version of each key first.
  std::unique_ptr<InternalIterator> NewIterator() {
    sources_.push_back(logs_->NewIterator());
    std::shared_ptr<const RangeTombstoneSet> tombstones =
        tombstones_.empty() ? nullptr : std::make_shared<RangeTombstoneSet>(options_.comparator, tombstones_);
    all_tombstones_ = MergeRangeTombstones(options_.comparator, tombstones, logs_->range_tombstones());
    std::unique_ptr<InternalIterator> merged = NewMergingIterator(options_.comparator, std::move(sources_));
    if (all_tombstones_ == nullptr) return merged;
    return NewRangeDeletionFilter(std::move(merged), all_tombstones_.get(), kMaxSequenceNumber);
  }

  // Closes the pool (its file may then be renamed).
  void Release() {
    sources_.clear();
    pool_.reset();
  }

 private:
  void OpenPool() {
    pmem::PoolOptions pool_options;
    pool_options.path = PoolPathFor(options_, name_);
    pool_options.comparator_name = options_.comparator->Name();
    pool_options.emulation = options_.pmem_emulation;
    Status s = pmem::Pool::Open(pool_options, &pool_);
    if (!s.ok()) {
      pool_.reset();
      report_->losses.push_back("pool " + pool_options.path + ": " + s.ToString() + "; nothing in it is read");
    }
  }

  void AddSsdTable(uint64_t number) {
    const std::string path = TableFileName(name_, number);
    std::unique_ptr<RandomAccessFile> file;
    Status s = fs_->NewRandomAccessFile(path, &file);
    if (s.ok()) AddTableFile(std::move(file), number, "SSD table " + path);
    else LoseTable("SSD table " + path, s);
  }

  void AddTableFile(std::unique_ptr<RandomAccessFile> file, uint64_t number, const std::string& what) {
    ssd::SsdTableOptions table_options;
    table_options.comparator = options_.comparator;
    table_options.cache = cache_.get();
    table_options.verify_checksums = true;
    std::unique_ptr<ssd::SsdTable> table;
    Status s = ssd::SsdTable::Open(table_options, std::move(file), number, what, &table);
    if (!s.ok()) {
      LoseTable(what, s);
      return;
    }
    ++report_->tables_read;
    sources_.push_back(
        std::make_unique<SalvagingTableIterator>(std::shared_ptr<ssd::SsdTable>(std::move(table)), what, report_));
  }

  // layout: 0 a KeySet block, 1 a table image, -1 unknown (tried in that order).
  void AddPmemTable(uint64_t offset, uint64_t size, int layout, uint64_t number) {
    const std::string what = "pmem block " + std::to_string(number) + " (pool offset " + std::to_string(offset) + ")";
    if (pool_ == nullptr) return;  // reported with the pool
    const char* data = pool_->Direct(offset);
    if (data == nullptr || size > pool_->ObjectSize(offset)) {
      LoseTable(what, Status::Corruption("its size exceeds its pool object"));
      return;
    }
    if (!ProbeReadable(data, size)) {
      LoseTable(what, Status::Corruption("unreadable pool memory at " + DescribeUnreadable(data, size)));
      return;
    }
    const Slice contents(data, size);
    Status s;
    if (layout <= 0) {
      BlockReadOptions read_options;
      read_options.comparator = options_.comparator;
      read_options.verify_checksum = true;
      std::unique_ptr<BlockReader> reader;
      s = BlockReader::Open(BlockFormat::kKeySet, contents, read_options, &reader);
      if (s.ok()) s = reader->Validate();
      if (s.ok()) {
        ++report_->tables_read;
        std::shared_ptr<BlockReader> owner(std::move(reader));
        sources_.push_back(std::make_unique<OwningIterator>(owner, owner->NewIterator()));
        return;
      }
      if (layout == 0) {
        LoseTable(what, s);
        return;
      }
    }
    AddTableFile(std::make_unique<MemoryRandomAccessFile>(contents), number, what);
  }

  void AddLog(const WalSegmentMeta& w) {
    WalReadResult read;
    Status s;
    std::string what;
    auto replay = [&](const Slice& record) {
      WriteBatch batch;
      Status r = WriteBatchInternal::SetContents(&batch, record);
      if (r.ok()) r = WriteBatchInternal::InsertInto(batch, logs_.get());
      if (r.ok()) ++report_->log_records;
      return Status::OK();  // a record that does not decode is lost, not fatal
    };
    if (options_.storage_mode == StorageMode::kDisk) {
      const std::string path = LogFileName(name_, w.number);
      what = "WAL " + path;
      s = ReadWalFile(fs_, path, w.number, WalDamage::kSkip, replay, &read);
    } else {
      if (pool_ == nullptr) return;
      what = "WAL segment " + std::to_string(w.number) + " (pool offset " + std::to_string(w.offset) + ")";
      const char* segment = pool_->Direct(w.offset);
      const uint64_t capacity = std::min(w.capacity, pool_->ObjectSize(w.offset));
      if (!ProbeReadable(segment, capacity)) {
        s = Status::Corruption("unreadable pool memory at " + DescribeUnreadable(segment, capacity));
      } else {
        s = ReadWalSegment(segment, capacity, w.number, WalDamage::kSkip, replay, &read);
      }
    }
    if (!s.ok()) {
      report_->losses.push_back(what + ": " + s.ToString());
      return;
    }
    ++report_->logs_read;
    if (read.damaged) report_->losses.push_back(what + ": " + DescribeWalDamage(read));
  }

  // Without a manifest: every table file and log in the directory, every
  // table and WAL segment object in the pool.
  void AddEverythingFound() {
    std::vector<std::string> children;
    (void)fs_->GetChildren(name_, &children);
    std::sort(children.begin(), children.end());
    std::vector<WalSegmentMeta> logs;
    for (const std::string& child : children) {
      FileType type;
      uint64_t number = 0;
      if (!ParseFileName(child, &type, &number)) continue;
      if (type == FileType::kTable) AddSsdTable(number);
      if (type == FileType::kLog && options_.storage_mode == StorageMode::kDisk) logs.push_back({0, 0, number});
    }
    if (pool_ != nullptr) {
      uint64_t number = 0;
      for (uint64_t offset : pool_->Objects(pmem::ObjectType::kBlock)) {
        AddPmemTable(offset, RecordedSize(pool_->Direct(offset), pool_->ObjectSize(offset)), -1, ++number);
      }
      for (uint64_t offset : pool_->Objects(pmem::ObjectType::kWalSegment)) {
        // The segment's own header names its number.
        const uint64_t capacity = pool_->ObjectSize(offset);
        logs.push_back({offset, capacity, SegmentNumber(pool_->Direct(offset), capacity)});
      }
    }
    std::sort(logs.begin(), logs.end(), [](const WalSegmentMeta& a, const WalSegmentMeta& b) {
      return a.number < b.number;
    });
    for (const WalSegmentMeta& w : logs) AddLog(w);
  }

  // The bytes of a pool object that hold its table, which the manifest
  // would say: a KeySet block's block_size (docs/format.md, the header's u64
  // at 16), or a table image's end (docs/ssd_format.md: its 48-byte footer
  // starts with "JGSWSST1"); the whole object if neither is found.
  static uint64_t RecordedSize(const char* object, uint64_t capacity) {
    if (capacity < 128 || !ProbeReadable(object, capacity)) return capacity;
    const uint64_t block_size = DecodeFixed64(object + 16);
    if (block_size >= 128 && block_size <= capacity) return block_size;
    for (uint64_t at = capacity / 8 * 8; at >= 56; at -= 8) {
      if (std::memcmp(object + at - 48, "JGSWSST1", 8) == 0) return at;
    }
    return capacity;
  }

  // docs/wal.md: the header's u64 at 16. 0 if it cannot be read.
  static uint64_t SegmentNumber(const char* segment, uint64_t capacity) {
    uint64_t number = 0;
    if (capacity >= kWalHeaderSize && ProbeReadable(segment, kWalHeaderSize)) number = DecodeFixed64(segment + 16);
    return number;
  }

  void LoseTable(const std::string& what, const Status& why) {
    ++report_->tables_lost;
    report_->losses.push_back(what + ": " + why.ToString());
  }

  const Options& options_;
  const std::string name_;
  FileSystem* const fs_;
  RepairReport* const report_;
  std::unique_ptr<ssd::BlockCache> cache_;
  std::unique_ptr<pmem::Pool> pool_;
  std::shared_ptr<MemTable> logs_;
  std::vector<std::unique_ptr<InternalIterator>> sources_;
  std::vector<RangeTombstone> tombstones_;
  std::shared_ptr<const RangeTombstoneSet> all_tombstones_;
};

// Writes the newest version of each key of `merged` that is a value into
// `dest` (durable once `dest` is closed: docs/durability.md).
Status WriteNewest(InternalIterator* merged, const Comparator* ucmp, DB* dest, RepairReport* report) {
  WriteBatch batch;
  size_t bytes = 0;
  std::string last_key;
  bool have_last = false;
  Status s;
  for (merged->SeekToFirst(); merged->Valid(); merged->Next()) {
    if (have_last && ucmp->Compare(merged->user_key(), last_key) == 0) continue;  // an older version
    last_key.assign(merged->user_key().data(), merged->user_key().size());
    have_last = true;
    if (merged->type() != ValueType::kValue) continue;
    batch.Put(merged->user_key(), merged->value());
    ++report->entries_kept;
    bytes += merged->user_key().size() + merged->value().size();
    if (bytes >= (size_t{1} << 20)) {
      s = dest->Write(WriteOptions(), &batch);
      if (!s.ok()) return s;
      batch.Clear();
      bytes = 0;
    }
  }
  s = merged->status();
  if (!s.ok() || batch.Count() == 0) return s;
  return dest->Write(WriteOptions(), &batch);
}

// A name beside `path` that does not exist yet: path + suffix, then
// path + suffix + ".1", ".2", ...
std::string FreeName(FileSystem* fs, const std::string& path, const std::string& suffix) {
  std::string candidate = path + suffix;
  for (int i = 1; fs->FileExists(candidate); ++i) candidate = path + suffix + "." + std::to_string(i);
  return candidate;
}

// True if the options name a pool outside the database's directory (a
// pool inside it moves with the directory).
bool SeparatePool(const Options& options, const std::string& name) {
  if (options.storage_mode == StorageMode::kDisk || options.pmem_path.empty()) return false;
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::absolute(name, ec).lexically_normal();
  const std::filesystem::path pool = std::filesystem::absolute(options.pmem_path, ec).lexically_normal();
  return pool.parent_path() != dir;
}

std::string Parent(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Puts the repaired database (built at <name>.repair, its pool, when the
// options name one outside the directory, at <pool>.repair) in place of the
// damaged one, which is kept at <name>.lost (and <pool>.lost). Each step is
// a rename; run again after a crash, it finishes what is left.
Status SwapIn(FileSystem* fs, const std::string& name, const Options& options, std::string* kept) {
  const std::string repaired = name + ".repair";
  Status s;
  if (SeparatePool(options, name)) {
    const std::string pool = options.pmem_path;
    if (fs->FileExists(pool + ".repair")) {
      if (fs->FileExists(pool)) s = fs->RenameFile(pool, FreeName(fs, pool, ".lost"));
      if (s.ok()) s = fs->RenameFile(pool + ".repair", pool);
      if (s.ok()) s = fs->SyncDir(Parent(pool));
      if (!s.ok()) return s;
    }
  }
  if (fs->FileExists(name)) {
    *kept = FreeName(fs, name, ".lost");
    s = fs->RenameFile(name, *kept);
  }
  if (s.ok()) s = fs->RenameFile(repaired, name);
  if (s.ok()) s = fs->SyncDir(Parent(name));
  if (s.ok()) s = fs->RemoveFile(name + "/" + kRepairedMarker);
  return s;
}

}  // namespace

std::string RepairReport::ToString() const {
  std::string out = "kept " + std::to_string(entries_kept) + " key(s); read " + std::to_string(tables_read) +
                    " table(s) and " + std::to_string(logs_read) + " log(s) (" + std::to_string(log_records) +
                    " record(s)); lost " + std::to_string(tables_lost) + " table(s) and " +
                    std::to_string(blocks_lost) + " block(s)" +
                    (manifest_read ? "" : "; the manifest could not be read") + "\n";
  for (const std::string& loss : losses) out += "lost: " + loss + "\n";
  if (!kept_at.empty()) out += "the damaged database is kept at " + kept_at + "\n";
  return out;
}

Status RepairDB(const std::string& name, const Options& options, RepairReport* report) {
  RepairReport local;
  if (report == nullptr) report = &local;
  *report = RepairReport();
  if (name.empty()) return Status::InvalidArgument("RepairDB: the database name is empty");
  FileSystem* fs = options.file_system != nullptr ? options.file_system : FileSystem::Default();
  const std::string repaired = name + ".repair";
  const bool pool_mode = options.storage_mode != StorageMode::kDisk;
  std::error_code ec;
  if (pool_mode && !options.pmem_path.empty() && std::filesystem::is_character_file(options.pmem_path, ec)) {
    return Status::NotSupported("RepairDB", "a device-DAX pool cannot be rebuilt beside itself: copy the "
                                            "database out with CopyDB");
  }
  // A repair a crash interrupted after its new database was whole: finish it.
  if (fs->FileExists(repaired + "/" + kRepairedMarker)) {
    report->resumed = true;
    return SwapIn(fs, name, options, &report->kept_at);
  }
  if (!fs->FileExists(name)) return Status::NotFound(name, "no such database directory");
  // The leftovers of a repair interrupted before its new database was whole.
  if (fs->FileExists(repaired)) {
    Options leftover = options;
    leftover.pmem_path = SeparatePool(options, name) ? options.pmem_path + ".repair" : "";
    Status s = DestroyDB(repaired, leftover);
    if (s.ok()) (void)fs->RemoveDir(repaired);
    if (!s.ok() || fs->FileExists(repaired)) {
      return Status::InvalidArgument(repaired, "is in the way of the repair and could not be removed: " + s.ToString());
    }
  }
  // The same lock as DB::Open: a database in use is not repaired.
  std::unique_ptr<FileLock> lock;
  Status s = fs->LockFile(name + "/LOCK", &lock);
  if (!s.ok()) return s;

  Salvage salvage(options, name, fs, report);
  salvage.Gather();

  Options dest_options = options;
  dest_options.create_if_missing = true;
  dest_options.error_if_exists = true;
  // A pool in the directory is made in the new one and moves with it.
  dest_options.pmem_path = SeparatePool(options, name) ? options.pmem_path + ".repair" : "";
  std::unique_ptr<DB> dest;
  s = DB::Open(dest_options, repaired, &dest);
  if (!s.ok()) return s;
  {
    std::unique_ptr<InternalIterator> merged = salvage.NewIterator();
    s = WriteNewest(merged.get(), options.comparator, dest.get(), report);
  }
  dest.reset();
  salvage.Release();
  if (s.ok()) {
    std::unique_ptr<WritableFile> marker;
    s = fs->NewWritableFile(repaired + "/" + kRepairedMarker, &marker);
    if (s.ok()) s = marker->Sync();
    if (s.ok()) s = marker->Close();
    if (s.ok()) s = fs->SyncDir(repaired);
  }
  if (!s.ok()) {
    (void)DestroyDB(repaired, dest_options);
    (void)fs->RemoveDir(repaired);
    return s;
  }
  lock.reset();
  return SwapIn(fs, name, options, &report->kept_at);
}

}  // namespace jigsaw
