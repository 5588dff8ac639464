#include "replication/state_machine.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "db/write_batch_internal.h"
#include "replication/snapshot_archive.h"
#include "util/coding.h"
#include "version/filename.h"

namespace jigsaw::replication {

namespace {

constexpr char kReservedPrefixBytes[] = "\0jigsaw.replication/";
constexpr char kAppliedIndexKeyBytes[] = "\0jigsaw.replication/applied-index";
constexpr uint8_t kCommandVersion = 1;
constexpr uint8_t kCommandSync = 1;
constexpr size_t kCommandHeaderSize = 8;

// Refuses a batch that names a reserved key.
class ReservedKeyCheck : public WriteBatch::Handler {
 public:
  void Put(const Slice& key, const Slice&) override { Check(key); }
  void Delete(const Slice& key) override { Check(key); }
  Status DeleteRange(const Slice& begin, const Slice&) override {
    Check(begin);
    return Status::OK();
  }
  bool reserved = false;

 private:
  void Check(const Slice& key) { reserved = reserved || IsReservedKey(key); }
};

Status ReadAppliedIndex(DB* db, uint64_t* index) {
  std::string value;
  Status s = db->Get(ReadOptions(), AppliedIndexKey(), &value);
  if (s.IsNotFound()) {
    *index = 0;
    return Status::OK();
  }
  if (!s.ok()) return s;
  if (value.size() != 8) return Status::Corruption("replica", "applied index record of the wrong size");
  *index = DecodeFixed64(value.data());
  return Status::OK();
}

}  // namespace

const Status kMalformedCommand = Status::Corruption("raft entry", "not a command of this version");

Slice ReservedPrefix() { return Slice(kReservedPrefixBytes, sizeof(kReservedPrefixBytes) - 1); }
Slice AppliedIndexKey() { return Slice(kAppliedIndexKeyBytes, sizeof(kAppliedIndexKeyBytes) - 1); }
bool IsReservedKey(const Slice& key) { return key.starts_with(ReservedPrefix()); }

Status EncodeCommand(const WriteBatch& batch, bool sync, const Comparator* comparator, std::string* command) {
  ReservedKeyCheck check;
  Status s = batch.Iterate(&check);
  if (s.ok() && check.reserved) {
    s = Status::InvalidArgument("replicated write", "names a key reserved for the replication (\\0jigsaw.replication/)");
  }
  if (s.ok()) s = WriteBatchInternal::CheckLimits(batch, comparator);
  if (!s.ok()) return s;
  const Slice contents = WriteBatchInternal::Contents(batch);
  // libraft 0.15's log store reads back only entries whose size is a
  // multiple of 8: the batch is padded with zeros to one.
  const size_t padding = (8 - contents.size() % 8) % 8;
  command->assign(kCommandHeaderSize, '\0');
  (*command)[0] = static_cast<char>(kCommandVersion);
  (*command)[1] = static_cast<char>(sync ? kCommandSync : 0);
  (*command)[2] = static_cast<char>(padding);
  command->append(contents.data(), contents.size());
  command->append(padding, '\0');
  return Status::OK();
}

StateMachine::StateMachine(const Options& options, const std::string& dir)
    : options_(options),
      fs_(options.file_system != nullptr ? options.file_system : FileSystem::Default()),
      dir_(dir) {
  fsm_.version = 2;
  fsm_.data = this;
  fsm_.apply = &StateMachine::ApplyThunk;
  fsm_.snapshot = &StateMachine::SnapshotThunk;
  fsm_.snapshot_finalize = &StateMachine::SnapshotFinalizeThunk;
  fsm_.restore = &StateMachine::RestoreThunk;
  fsm_.snapshot_async = nullptr;
}

StateMachine::~StateMachine() = default;

std::string StateMachine::GenerationDir(uint64_t generation) const {
  std::string dir = dir_;
  dir.append("/db-").append(std::to_string(generation));
  return dir;
}

Options StateMachine::GenerationOptions(uint64_t generation) const {
  Options options = options_;
  if (!options.pmem_path.empty()) {
    options.pmem_path.push_back('.');
    options.pmem_path.append(std::to_string(generation));
  }
  return options;
}

Status StateMachine::OpenGeneration(uint64_t generation, bool create, std::shared_ptr<DB>* db,
                                    std::shared_ptr<std::atomic<bool>>* replaced_flag) {
  Options options = GenerationOptions(generation);
  options.create_if_missing = create;
  std::unique_ptr<DB> opened;
  const std::string dir = GenerationDir(generation);
  Status s = DB::Open(options, dir, &opened);
  if (!s.ok()) return s;
  // A generation a restore replaced is destroyed when its last reader lets
  // go of it.
  auto replaced = std::make_shared<std::atomic<bool>>(false);
  *db = std::shared_ptr<DB>(opened.release(), [replaced, dir, options](DB* d) {
    delete d;
    if (replaced->load()) {
      (void)DestroyDB(dir, options);
      RemoveTree(dir);
    }
  });
  *replaced_flag = replaced;
  return Status::OK();
}

Status StateMachine::Open(const Options& options, const std::string& dir, std::unique_ptr<StateMachine>* machine) {
  std::unique_ptr<StateMachine> m(new StateMachine(options, dir));
  FileSystem* const fs = m->fs_;
  const std::string current_path = dir + "/CURRENT";
  uint64_t generation = 0;
  if (fs->FileExists(current_path)) {
    std::unique_ptr<RandomAccessFile> file;
    Status s = fs->NewRandomAccessFile(current_path, &file);
    char scratch[64];
    Slice got;
    if (s.ok()) s = file->Read(0, sizeof(scratch), scratch, &got);
    if (!s.ok()) return s;
    const std::string text = got.ToString();
    if (text.size() < 5 || text.compare(0, 3, "db-") != 0 || text.back() != '\n') {
      return Status::Corruption(current_path, "does not name a database generation");
    }
    generation = std::strtoull(text.c_str() + 3, nullptr, 10);
    if (generation == 0) return Status::Corruption(current_path, "does not name a database generation");
  } else if (!options.create_if_missing) {
    return Status::NotFound(dir, "holds no replica (create_if_missing is false)");
  }
  Status s = fs->CreateDirIfMissing(dir);
  if (!s.ok()) return s;
  // What a crash left: a snapshot half unpacked or half archived, the
  // generation a restore was building or had replaced.
  RemoveTree(dir + "/incoming");
  RemoveTree(dir + "/snapshot");
  std::vector<std::string> children;
  s = fs->GetChildren(dir, &children);
  if (!s.ok()) return s;
  for (const std::string& child : children) {
    if (child.compare(0, 3, "db-") != 0) continue;
    const uint64_t g = std::strtoull(child.c_str() + 3, nullptr, 10);
    if (g != 0 && g != generation) {
      (void)DestroyDB(m->GenerationDir(g), m->GenerationOptions(g));
      RemoveTree(m->GenerationDir(g));
    }
  }
  const bool fresh = generation == 0;
  if (fresh) generation = 1;
  s = m->OpenGeneration(generation, fresh, &m->db_, &m->replaced_);
  if (s.ok() && fresh) {
    s = ReplaceFileAtomically(fs, dir, "CURRENT", "db-" + std::to_string(generation) + "\n");
  }
  uint64_t applied = 0;
  if (s.ok()) s = ReadAppliedIndex(m->db_.get(), &applied);
  if (!s.ok()) return s;
  m->generation_ = generation;
  m->applied_index_.store(applied, std::memory_order_release);
  *machine = std::move(m);
  return Status::OK();
}

std::shared_ptr<DB> StateMachine::db() const {
  std::lock_guard<std::mutex> lock(mu_);
  return db_;
}

int StateMachine::Apply(const struct raft_buffer* buf, void** result) {
  *result = nullptr;
  const uint64_t index = raft_last_applied(raft_) + 1;
  if (index <= applied_index()) return 0;  // applied before a restart: raft replays from its snapshot
  const Slice command(static_cast<const char*>(buf->base), buf->len);
  WriteBatch batch;
  WriteOptions write;
  bool well_formed = command.size() >= kCommandHeaderSize + WriteBatchInternal::kHeaderSize &&
                     static_cast<uint8_t>(command[0]) == kCommandVersion &&
                     static_cast<uint8_t>(command[2]) < 8;
  if (well_formed) {
    write.sync = (static_cast<uint8_t>(command[1]) & kCommandSync) != 0;
    const size_t padding = static_cast<uint8_t>(command[2]);
    well_formed = WriteBatchInternal::SetContents(
                      &batch, Slice(command.data() + kCommandHeaderSize, command.size() - kCommandHeaderSize - padding))
                      .ok();
  }
  // DB::Write's own first check, with the database's comparator: what it
  // refuses, it refuses on every replica alike. Checked here so that a
  // refusal is told apart from a failure of this replica (which raft
  // retries), at the price of a second pass over the batch.
  if (well_formed) well_formed = WriteBatchInternal::CheckLimits(batch, options_.comparator).ok();
  if (!well_formed) {
    // Every replica reads the same entry the same way: its index is
    // recorded, its contents are not applied, the proposer learns why.
    batch.Clear();
    *result = const_cast<Status*>(&kMalformedCommand);
  }
  char encoded[8];
  EncodeFixed64(encoded, index);
  batch.Put(AppliedIndexKey(), Slice(encoded, sizeof(encoded)));
  std::shared_ptr<DB> db = this->db();
  if (!db->Write(write, &batch).ok()) {
    *result = nullptr;
    return RAFT_IOERR;  // raft applies the entry again later
  }
  applied_index_.store(index, std::memory_order_release);
  return 0;
}

void StateMachine::UseAsyncSnapshots() {
  fsm_.version = 3;
  fsm_.snapshot_async = &StateMachine::SnapshotAsyncThunk;
}

int StateMachine::Snapshot(struct raft_buffer* bufs[], unsigned* n_bufs) {
  *bufs = nullptr;
  *n_bufs = 0;
  // Version 3: all the work is SnapshotAsync's, off the raft thread.
  return fsm_.version >= 3 ? 0 : SnapshotAsync(bufs, n_bufs);
}

// On a libuv worker thread while raft goes on applying entries: the
// checkpoint holds the database at some index A at or past the one raft
// labels the snapshot with, and the archive's header says A (read from the
// checkpoint itself). A replica that installs it skips entries up to A.
int StateMachine::SnapshotAsync(struct raft_buffer* bufs[], unsigned* n_bufs) {
  const std::string dir = dir_ + "/snapshot";
  RemoveTree(dir);
  RemoveTree(dir + ".tmp");
  SnapshotHeader header;
  Status s = db()->CreateCheckpoint(dir, &header.sequence);
  if (s.ok()) {
    Options read = options_;
    read.storage_mode = StorageMode::kDisk;
    read.pmem_path.clear();
    read.create_if_missing = false;
    std::unique_ptr<DB> checkpoint;
    s = DB::OpenForReadOnly(read, dir, &checkpoint);
    if (s.ok()) s = ReadAppliedIndex(checkpoint.get(), &header.applied_index);
  }
  ArchivePlan plan;
  if (s.ok()) s = PlanArchive(fs_, dir, &plan);
  void* base = nullptr;
  if (s.ok()) {
    base = raft_malloc(plan.size);
    if (base == nullptr) s = Status::IOError("snapshot", "out of memory");
  }
  if (s.ok()) s = WriteArchive(fs_, dir, plan, header, static_cast<char*>(base));
  RemoveTree(dir);
  auto* array = s.ok() ? static_cast<struct raft_buffer*>(raft_malloc(sizeof(struct raft_buffer))) : nullptr;
  if (array == nullptr) {
    raft_free(base);
    return s.ok() ? RAFT_NOMEM : RAFT_IOERR;
  }
  array[0].base = base;
  array[0].len = plan.size;
  *bufs = array;
  *n_bufs = 1;
  return 0;
}

int StateMachine::Restore(struct raft_buffer* buf) {
  bool installed = false;
  const Status s = InstallSnapshot(Slice(static_cast<const char*>(buf->base), buf->len), &installed);
  if (!s.ok()) return s.IsCorruption() || s.IsNotSupported() ? RAFT_CORRUPT : RAFT_IOERR;  // raft frees buf
  raft_free(buf->base);  // on success the buffer is ours
  if (installed) restores_.fetch_add(1, std::memory_order_relaxed);
  return 0;
}

// Replaces the database with the archive's, unless it is already at or
// past the archive's index. Crash-safe: CURRENT names the old generation
// until the new one is complete and opened; Open removes the leftovers.
Status StateMachine::InstallSnapshot(const Slice& archive, bool* installed) {
  SnapshotHeader header;
  Status s = ReadArchiveHeader(archive, &header);
  if (!s.ok() || header.applied_index <= applied_index()) return s;
  auto crashed = [&](int step) { return crash_point && crash_point(step); };
  const auto crash = [] { return Status::IOError("replica", "restore stopped by a crash point"); };
  const std::string incoming = dir_ + "/incoming";
  RemoveTree(incoming);
  s = UnpackArchive(fs_, archive, incoming);
  if (!s.ok()) return s;
  if (crashed(1)) return crash();
  const uint64_t generation = generation_ + 1;
  const std::string target = GenerationDir(generation);
  RemoveTree(target);
  if (options_.storage_mode == StorageMode::kDisk) {
    s = fs_->RenameFile(incoming, target);
    if (s.ok()) s = fs_->SyncDir(dir_);
  } else {
    Options checkpoint = options_;
    checkpoint.storage_mode = StorageMode::kDisk;
    checkpoint.pmem_path.clear();
    checkpoint.create_if_missing = false;
    Options to = GenerationOptions(generation);
    to.create_if_missing = true;
    to.error_if_exists = true;
    s = CopyDB(incoming, checkpoint, target, to);
    RemoveTree(incoming);
  }
  if (!s.ok()) return s;
  if (crashed(2)) return crash();
  std::shared_ptr<DB> db;
  std::shared_ptr<std::atomic<bool>> replaced;
  s = OpenGeneration(generation, false, &db, &replaced);
  uint64_t applied = 0;
  if (s.ok()) s = ReadAppliedIndex(db.get(), &applied);
  if (s.ok() && applied != header.applied_index) {
    s = Status::Corruption("snapshot archive", "its database's applied index is " + std::to_string(applied) +
                                                   ", its header says " + std::to_string(header.applied_index));
  }
  if (!s.ok() || crashed(3)) {
    db.reset();
    (void)DestroyDB(target, GenerationOptions(generation));
    RemoveTree(target);
    return s.ok() ? crash() : s;
  }
  s = ReplaceFileAtomically(fs_, dir_, "CURRENT", "db-" + std::to_string(generation) + "\n");
  if (!s.ok()) return s;
  if (crashed(4)) return crash();
  std::shared_ptr<DB> old;
  {
    std::lock_guard<std::mutex> lock(mu_);
    old = std::exchange(db_, std::move(db));
  }
  generation_ = generation;
  applied_index_.store(header.applied_index, std::memory_order_release);
  std::exchange(replaced_, std::move(replaced))->store(true);
  old.reset();
  *installed = true;
  return Status::OK();
}

int StateMachine::ApplyThunk(struct raft_fsm* fsm, const struct raft_buffer* buf, void** result) {
  return static_cast<StateMachine*>(fsm->data)->Apply(buf, result);
}
int StateMachine::SnapshotThunk(struct raft_fsm* fsm, struct raft_buffer* bufs[], unsigned* n_bufs) {
  return static_cast<StateMachine*>(fsm->data)->Snapshot(bufs, n_bufs);
}
int StateMachine::SnapshotAsyncThunk(struct raft_fsm* fsm, struct raft_buffer* bufs[], unsigned* n_bufs) {
  return static_cast<StateMachine*>(fsm->data)->SnapshotAsync(bufs, n_bufs);
}
int StateMachine::SnapshotFinalizeThunk(struct raft_fsm*, struct raft_buffer* bufs[], unsigned* n_bufs) {
  for (unsigned i = 0; i < *n_bufs; ++i) raft_free((*bufs)[i].base);
  if (*bufs != nullptr) raft_free(*bufs);
  *bufs = nullptr;
  *n_bufs = 0;
  return 0;
}
int StateMachine::RestoreThunk(struct raft_fsm* fsm, struct raft_buffer* buf) {
  return static_cast<StateMachine*>(fsm->data)->Restore(buf);
}

}  // namespace jigsaw::replication
