// DB::CreateCheckpoint: an online, consistent copy of a database as a new
// disk-mode database (include/jigsaw/db.h; docs/design/023-checkpoints.md).
//
// The copy is of one read view -- the memtables and version readers see,
// and the sequence they read at -- pinned for the whole call, so that no
// table it names is deleted or freed underneath it. Nothing takes the DB
// mutex for longer than GetReadView does.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "compaction/output_sink.h"
#include "db/db_identity.h"
#include "db/db_impl.h"
#include "format/keyset_block.h"
#include "table/merging_iterator.h"
#include "version/filename.h"
#include "version/manifest.h"
#include "version/table_store.h"
#include "version/version_set.h"
#include "util/guarded_read.h"

namespace jigsaw {

namespace {

// Removes the checkpoint directory being built at `dir` -- or left by a
// crashed call -- and its files. OK if it does not exist; InvalidArgument,
// removing nothing, if it holds anything a checkpoint does not write (it
// is someone else's directory).
Status RemoveCheckpointDir(FileSystem* fs, const std::string& dir) {
  if (!fs->FileExists(dir)) return Status::OK();
  std::vector<std::string> names;
  Status s = fs->GetChildren(dir, &names);
  if (!s.ok()) return s;
  for (const std::string& name : names) {
    if (!IsDatabaseFileName(name) || name == "LOCK" || name == "LOG" || name == "LOG.old") {
      return Status::InvalidArgument(dir, "exists and holds " + name + ", which no checkpoint writes: not removed");
    }
  }
  for (const std::string& name : names) {
    if (s.ok()) s = fs->RemoveFile(dir + "/" + name);
  }
  if (s.ok()) s = fs->RemoveDir(dir);
  return s;
}

// The checkpoint being built in its temporary directory: a table store of
// its own (disk mode, its own file numbers) and the manifest entries of the
// tables written so far, level by level in the source's order.
class CheckpointWriter {
 public:
  CheckpointWriter(const Options& source_options, std::string dir)
      : options_(DiskOptions(source_options)), dir_(std::move(dir)), store_(options_, dir_, &versions_) {
    std::string io;
    store_.ChooseIo(&io);
  }

  FileSystem* fs() { return store_.fs(); }

  // An SSD table file of the source: hard-linked under a new number, or
  // copied from the table's open file where the file system cannot link
  // it, or where its name is gone (a writer in another process compacted
  // it away under a read-only open).
  Status AddSsdFile(const std::string& path, const TableMeta& table, int level) {
    const uint64_t number = versions_.NewFileNumber();
    const std::string target = TableFileName(dir_, number);
    Status s = fs()->LinkFile(path, target);
    uint64_t linked_size = 0;
    if (s.ok() && (!fs()->GetFileSize(target, &linked_size).ok() || linked_size != table.size)) {
      s = Status::Corruption(path, "is not the table file it was");  // the name was reused: copy the open file
    }
    if (s.ok()) {
      s = fs()->SyncFile(target);  // the source may not have synced it yet
    } else if (table.table->file() == nullptr) {
      return Status::IOError(path, "cannot be linked and has no open file to copy: " + s.ToString());
    } else {
      (void)fs()->RemoveFile(target);
      s = CopyFile(fs(), table.table->file(), path, target);
    }
    if (!s.ok()) return s;
    entries_.push_back({0, table.size, number, level, Residence::kSsd, PmemLayout::kKeySetBlock});
    return Status::OK();
  }

  // A pmem table of the source, as a table file: its bytes where they are
  // one (a table image, or -- into KeySet tables -- a KeySet block whose
  // outline a table can serve in place), else its entries rebuilt in the
  // checkpoint's block format.
  Status AddPmemTable(const TableMeta& table, const Slice& bytes, const Comparator* ucmp, int level) {
    SsdTableSink sink(&store_, /*sync_each=*/true, nullptr);
    Status s;
    keyset::BlockOutline outline;
    if (table.pmem_layout == PmemLayout::kTableImage) {
      s = sink.AddTableImage(bytes);
    } else if (store_.ssd_block_format() == BlockFormat::kKeySet &&
               keyset::ReadOutline(bytes.data(), bytes.size(), ucmp, &outline).ok() && outline.piece_reads) {
      s = sink.AddWholeBlock(bytes, table.smallest, table.largest);
    } else {
      std::unique_ptr<InternalIterator> it = table.table->NewIterator(ReadOptions());
      for (it->SeekToFirst(); s.ok() && it->Valid(); it->Next()) s = sink.Add(*it);
      if (s.ok()) s = it->status();
      if (s.ok()) s = sink.Finish();
    }
    return Keep(&sink, s, level);
  }

  // The memtables' entries up to `sequence`, as one L0 table (nothing if
  // they hold none).
  Status AddMemTables(const std::vector<std::shared_ptr<MemTable>>& mems, SequenceNumber sequence,
                      const Comparator* ucmp) {
    std::vector<std::unique_ptr<InternalIterator>> children;
    for (const auto& mem : mems) children.push_back(mem->NewIterator(sequence));
    std::unique_ptr<InternalIterator> it = NewMergingIterator(ucmp, std::move(children));
    SsdTableSink sink(&store_, /*sync_each=*/true, nullptr);
    Status s;
    for (it->SeekToFirst(); s.ok() && it->Valid(); it->Next()) s = sink.Add(*it);
    if (s.ok()) s = it->status();
    if (s.ok()) s = sink.Finish();
    return Keep(&sink, s, 0);
  }

  // The manifest of every table added and of the range tombstones up to
  // `sequence` (of `tombstones`, may be null), at `sequence`, and an
  // identity of its own (a new database id); then the directory synced.
  Status Finish(SequenceNumber sequence, const RangeTombstoneSet* tombstones) {
    ManifestState state;
    state.generation = 1;
    state.last_sequence = sequence;
    state.next_number = versions_.next_file_number();
    state.blocks = entries_;
    if (tombstones != nullptr) {
      for (const RangeTombstone& t : tombstones->tombstones()) {
        if (t.sequence <= sequence) state.range_tombstones.push_back(t);
      }
    }
    FileManifestStore manifest(fs(), dir_, options_.comparator, store_.sync_stats());
    Status s = manifest.Commit(state, {}, {}, false);
    if (s.ok()) s = manifest.TakeLateError();  // its directory sync
    if (!s.ok()) return s;
    DatabaseIdentity identity;
    identity.database_id = pmem::NewDatabaseId();
    s = WriteIdentity(fs(), dir_, identity);
    if (s.ok()) s = fs()->SyncDir(dir_);
    return s;
  }

 private:
  static Options DiskOptions(const Options& source) {
    Options options = source;
    options.storage_mode = StorageMode::kDisk;
    options.block_cache_capacity = size_t{1} << 20;  // its outputs are opened, never read
    return options;
  }

  // Takes the sink's outputs as tables of `level` (`s`: how writing them
  // went); on error removes them.
  Status Keep(SsdTableSink* sink, Status s, int level) {
    if (!s.ok()) {
      sink->Abandon();
      return s;
    }
    for (const TableRef& t : sink->outputs()) {
      entries_.push_back({t->offset, t->size, t->number, level, Residence::kSsd, PmemLayout::kKeySetBlock});
    }
    for (auto& file : sink->files()) {
      if (s.ok()) s = file->Close();
    }
    return s;
  }

  const Options options_;
  const std::string dir_;
  VersionSet versions_;
  TableStore store_;
  std::vector<ManifestState::BlockEntry> entries_;  // L0 first, each level in the source's order
};

}  // namespace

Status DBImpl::CreateCheckpoint(const std::string& checkpoint_dir, uint64_t* sequence) {
  FileSystem* const fs = tables_->fs();
  std::string dir = checkpoint_dir;
  while (!dir.empty() && dir.back() == '/') dir.pop_back();
  if (dir.empty()) return Status::InvalidArgument("CreateCheckpoint", "the directory name is empty or /");
  std::string parent = std::filesystem::path(dir).parent_path().string();
  if (parent.empty()) parent.push_back('.');  // not = ".": GCC 12 warns falsely (bug 105329)
  MutexLock one_at_a_time(&checkpoint_mutex_);
  if (fs->FileExists(dir)) return Status::InvalidArgument(dir, "exists: a checkpoint makes a new directory");
  const std::string building = dir + std::string(".tmp");
  Status s = RemoveCheckpointDir(fs, building);  // a crashed call's leftover
  if (s.ok()) s = fs->CreateDirIfMissing(building);
  if (!s.ok()) return s;

  // The view pins its memtables and its version's tables until the end,
  // and holds every write up to its sequence.
  const ReadView view = GetCompleteReadView();
  {
    CheckpointWriter writer(options_, building);
    // L0 newest first: the memtables' entries are newer than its tables.
    std::vector<std::shared_ptr<MemTable>> mems{view.state->mem};
    mems.insert(mems.end(), view.state->imm.begin(), view.state->imm.end());
    s = writer.AddMemTables(mems, view.sequence, ucmp_);
    const Version& version = *view.state->version;
    for (int level = 0; s.ok() && level < kNumLevels; ++level) {
      for (const TableRef& t : version.levels[level]) {
        if (t->residence == Residence::kSsd) {
          s = writer.AddSsdFile(tables_->TablePath(t->number), *t, level);
        } else {
          if (pool()->timing() != nullptr) pool()->timing()->ChargeSequentialRead(t->size);
          // The writer reads the block unguarded (util/guarded_read.h).
          const Slice contents = PmemBlockContents(*t);
          s = ProbeReadable(contents.data(), contents.size())
                  ? writer.AddPmemTable(*t, contents, ucmp_, level)
                  : Status::Corruption("block " + std::to_string(t->number),
                                       "unreadable pool memory at " + DescribeUnreadable(contents.data(), contents.size()));
        }
        if (!s.ok()) break;
      }
    }
    if (s.ok()) s = writer.Finish(view.sequence, RangeTombstones(view).get());
  }
  // rename(2) would replace an empty `dir` made meanwhile: checked again.
  if (s.ok() && fs->FileExists(dir)) s = Status::InvalidArgument(dir, "was created while the checkpoint was made");
  if (s.ok()) s = fs->RenameFile(building, dir);
  if (!s.ok()) {
    (void)RemoveCheckpointDir(fs, building);
    return s;
  }
  // Renamed: `dir` is the checkpoint. Should this sync fail, a crash may
  // take the rename back (and leave `dir`.tmp, cleared by the next call).
  s = fs->SyncDir(parent);
  if (!s.ok()) return s;
  if (sequence != nullptr) *sequence = view.sequence;
  Log(info_log_, "Checkpoint at sequence %llu written to %s", static_cast<unsigned long long>(view.sequence),
      dir.c_str());
  return Status::OK();
}

}  // namespace jigsaw
