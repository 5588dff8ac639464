// Identity, locking and bad files (src/db_identity.h, docs/durability.md
// "Identity and locking"): a database is never opened, created or destroyed
// as another one, a lock conflict is never reported as damage, and no file
// shape or kill during creation makes Open die or leaves a database that
// cannot be opened.
#include <fcntl.h>
#include <libpmemobj.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "jigsaw/db.h"
#include "jigsaw/file_system.h"
#include "tests/support/db_test_util.h"
#include "tests/support/forwarding_fs.h"
#include "version/manifest.h"

namespace jigsaw {
namespace {

using test::ScratchDir;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
}

std::set<std::string> Listing(const std::string& dir) {
  std::set<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) names.insert(entry.path().filename());
  return names;
}

// Small options in `mode` with the pool at `pool` (pool modes).
Options ModeOptions(StorageMode mode, const std::string& pool) {
  Options options = test::SmallOptions();
  options.storage_mode = mode;
  if (mode != StorageMode::kDisk) options.pmem_path = pool;
  if (mode == StorageMode::kHybrid) options.pmem_budget = 2 << 20;
  return options;
}

std::string Key(int i) { return "key" + std::to_string(100000 + i); }
std::string Value(int i) { return std::string(100, static_cast<char>('a' + i % 26)) + std::to_string(i); }

// Writes `n` keys, compacts (so that hybrid and disk mode have SSD tables)
// and closes.
void Populate(const Options& options, const std::string& dir, int n) {
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, dir, &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  for (int i = 0; i < n; ++i) ASSERT_TRUE(db->Put(WriteOptions(), Key(i), Value(i)).ok());
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
}

// Opens without create_if_missing and expects every key of Populate.
void ExpectIntact(Options options, const std::string& dir, int n) {
  options.create_if_missing = false;
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, dir, &db);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(db->VerifyIntegrity().ok());
  for (int i = 0; i < n; ++i) {
    std::string value;
    s = db->Get(ReadOptions(), Key(i), &value);
    ASSERT_TRUE(s.ok()) << Key(i) << ": " << s.ToString();
    ASSERT_EQ(value, Value(i));
  }
}

const char* Name(StorageMode mode) {
  return mode == StorageMode::kPmem ? "kPmem" : mode == StorageMode::kHybrid ? "kHybrid" : "kDisk";
}

class IdentityTest : public ::testing::TestWithParam<StorageMode> {
 protected:
  std::string db_path() const { return dir_.path() + "/db"; }
  std::string pool_path() const { return dir_.path() + "/db.pool"; }
  Options ModeOptions() const { return jigsaw::ModeOptions(GetParam(), pool_path()); }

  ScratchDir dir_;
};

TEST_P(IdentityTest, AnotherStorageModeIsRefusedAndDestroysNothing) {
  constexpr int kKeys = 3000;
  Populate(ModeOptions(), db_path(), kKeys);
  const std::set<std::string> before = Listing(db_path());
  // pmem-only and hybrid databases may be reopened in each other's mode;
  // a disk-only database is disk-only for good.
  std::vector<StorageMode> others;
  if (GetParam() == StorageMode::kDisk) {
    others = {StorageMode::kPmem, StorageMode::kHybrid};
  } else {
    others = {StorageMode::kDisk};
  }
  for (StorageMode other : others) {
    for (int attempt = 0; attempt < 2; ++attempt) {  // the second open used to sweep the real tables
      Options options = jigsaw::ModeOptions(other, pool_path());
      std::unique_ptr<DB> db;
      Status s = DB::Open(options, db_path(), &db);
      ASSERT_TRUE(s.IsInvalidArgument()) << Name(other) << ": " << s.ToString();
      EXPECT_NE(s.ToString().find("storage_mode"), std::string::npos) << s.ToString();
      EXPECT_NE(s.ToString().find(Name(other)), std::string::npos) << s.ToString();
    }
  }
  EXPECT_EQ(Listing(db_path()), before);
  ExpectIntact(ModeOptions(), db_path(), kKeys);
}

TEST_P(IdentityTest, AnotherPoolIsRefused) {
  if (GetParam() == StorageMode::kDisk) GTEST_SKIP() << "no pool";
  constexpr int kKeys = 500;
  Populate(ModeOptions(), db_path(), kKeys);
  // A pool path where no pool is: not created, even with create_if_missing.
  Options options = ModeOptions();
  options.pmem_path = dir_.path() + "/elsewhere.pool";
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, db_path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("pmem_path"), std::string::npos) << s.ToString();
  EXPECT_FALSE(std::filesystem::exists(options.pmem_path));
  // Another database's pool.
  const std::string other_dir = dir_.path() + "/other";
  Options other = ModeOptions();
  other.pmem_path = dir_.path() + "/other.pool";
  Populate(other, other_dir, 10);
  s = DB::Open(other, db_path(), &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("pool of database"), std::string::npos) << s.ToString();
  // This database's pool from a directory that is not its own.
  s = DB::Open(ModeOptions(), dir_.path() + "/third", &db);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/third"));
  ExpectIntact(other, other_dir, 10);
  ExpectIntact(ModeOptions(), db_path(), kKeys);
  // A moved pool is still this database's: its id says so.
  const std::string moved = dir_.path() + "/moved.pool";
  std::filesystem::rename(pool_path(), moved);
  options = ModeOptions();
  options.pmem_path = moved;
  ExpectIntact(options, db_path(), kKeys);
  std::ifstream identity(db_path() + "/IDENTITY");
  const std::string text((std::istreambuf_iterator<char>(identity)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("pool_path: " + moved), std::string::npos) << text;
}

TEST_P(IdentityTest, SecondOpenIsInUseNotCorruption) {
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(ModeOptions(), db_path(), &db).ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "k", "v").ok());
  std::unique_ptr<DB> second;
  Status s = DB::Open(ModeOptions(), db_path(), &second);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find("in use by process " + std::to_string(getpid())), std::string::npos) << s.ToString();
  // Another process sees the same.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::unique_ptr<DB> other;
    Status c = DB::Open(ModeOptions(), db_path(), &other);
    _exit(c.IsIOError() && c.ToString().find("in use by process") != std::string::npos ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  db.reset();
  ASSERT_TRUE(DB::Open(ModeOptions(), db_path(), &second).ok());
}

TEST_P(IdentityTest, DestroyDBRefusesADatabaseInUse) {
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(ModeOptions(), db_path(), &db).ok());
  ASSERT_TRUE(db->Put(WriteOptions(), "before", "1").ok());
  Status s = DestroyDB(db_path(), ModeOptions());
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(DestroyDB(db_path(), ModeOptions()).IsIOError() ? 0 : 1);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  WriteOptions sync;
  sync.sync = true;
  ASSERT_TRUE(db->Put(sync, "after", "2").ok());
  db.reset();
  std::unique_ptr<DB> reopened;
  Options options = ModeOptions();
  options.create_if_missing = false;
  ASSERT_TRUE(DB::Open(options, db_path(), &reopened).ok());
  std::string value;
  EXPECT_TRUE(reopened->Get(ReadOptions(), "before", &value).ok());
  EXPECT_TRUE(reopened->Get(ReadOptions(), "after", &value).ok());
  reopened.reset();
  ASSERT_TRUE(DestroyDB(db_path(), ModeOptions()).ok());
  EXPECT_FALSE(std::filesystem::exists(db_path()));
  EXPECT_FALSE(std::filesystem::exists(pool_path()));
}

TEST_P(IdentityTest, DestroyDBLeavesAnotherDatabasesPool) {
  if (GetParam() == StorageMode::kDisk) GTEST_SKIP() << "no pool";
  Populate(ModeOptions(), db_path(), 100);
  // Another directory named with this database's pool.
  std::filesystem::create_directories(dir_.path() + "/stranger");
  EXPECT_TRUE(DestroyDB(dir_.path() + "/stranger", ModeOptions()).IsInvalidArgument());
  EXPECT_TRUE(DestroyDB(dir_.path() + "/missing", ModeOptions()).IsInvalidArgument());
  ExpectIntact(ModeOptions(), db_path(), 100);
}

// A kill at any instant of a new database's first Open leaves a directory
// (and pool) that the next Open opens or creates.
TEST_P(IdentityTest, KillDuringCreationNeverLeavesAnUnopenableDatabase) {
  auto child_open = [&](const std::string& db, const std::string& pool) {
    Options options = jigsaw::ModeOptions(GetParam(), pool);
    std::unique_ptr<DB> opened;
    Status s = DB::Open(options, db, &opened);
    _exit(s.ok() ? 0 : 1);
  };
  // How long a creation takes here, to spread the kills over it.
  auto started = std::chrono::steady_clock::now();
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) child_open(dir_.path() + "/timing", dir_.path() + "/timing.pool");
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const auto creation = std::chrono::steady_clock::now() - started;
  const int64_t span_us = std::max<int64_t>(
      2000, 2 * std::chrono::duration_cast<std::chrono::microseconds>(creation).count());
  std::mt19937_64 rng(42);
  for (int round = 0; round < 24; ++round) {
    const std::string db = dir_.path() + "/kill" + std::to_string(round);
    const std::string pool = db + ".pool";
    child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) child_open(db, pool);
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % static_cast<uint64_t>(span_us)));
    kill(child, SIGKILL);
    ASSERT_EQ(waitpid(child, &status, 0), child);
    // Without create_if_missing: opened, or "does not exist" -- never a
    // damaged database.
    Options options = jigsaw::ModeOptions(GetParam(), pool);
    options.create_if_missing = false;
    std::unique_ptr<DB> opened;
    Status s = DB::Open(options, db, &opened);
    EXPECT_TRUE(s.ok() || s.IsInvalidArgument()) << "round " << round << ": " << s.ToString();
    opened.reset();
    options.create_if_missing = true;
    s = DB::Open(options, db, &opened);
    ASSERT_TRUE(s.ok()) << "round " << round << ": " << s.ToString();
    ASSERT_TRUE(opened->Put(WriteOptions(), "k", "v").ok());
  }
}

// A file system whose device is full: every append fails with NoSpace.
class FullDiskFileSystem final : public test::ForwardingFileSystem {
 public:
  Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) override {
    std::unique_ptr<WritableFile> base_file;
    Status s = base_->NewWritableFile(path, &base_file);
    if (s.ok()) *file = std::make_unique<FullFile>(std::move(base_file));
    return s;
  }

 private:
  class FullFile final : public test::ForwardingWritableFile {
   public:
    using ForwardingWritableFile::ForwardingWritableFile;
    Status Append(const Slice&) override { return Status::NoSpace("test: the device is full"); }
  };
};

// A failed open removes what it created -- directories, lock and identity
// files, a new pool -- and nothing else.
TEST_P(IdentityTest, FailedCreationLeavesNothingBehind) {
  FullDiskFileSystem fs;  // the identity file cannot be written
  Options options = ModeOptions();
  options.file_system = &fs;
  const std::string nested = dir_.path() + "/a/b/db";
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, nested, &db);
  EXPECT_TRUE(s.IsNoSpace()) << s.ToString();
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + "/a"));
  EXPECT_FALSE(std::filesystem::exists(pool_path()));
  // An existing directory with a user's file: the file and the directory stay.
  std::filesystem::create_directories(db_path());
  WriteFile(db_path() + "/notes.txt", "mine");
  s = DB::Open(options, db_path(), &db);
  EXPECT_TRUE(s.IsNoSpace()) << s.ToString();
  EXPECT_EQ(Listing(db_path()), std::set<std::string>{"notes.txt"});
  EXPECT_FALSE(std::filesystem::exists(pool_path()));
}

INSTANTIATE_TEST_SUITE_P(Modes, IdentityTest,
                         ::testing::Values(StorageMode::kPmem, StorageMode::kHybrid, StorageMode::kDisk),
                         test::ModeName);

// --- Bad files: every shape gets a Status, never a signal, and is left as it was.

struct Shape {
  std::string name;
  std::string bytes;
};

std::string RandomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string bytes(n, '\0');
  for (char& c : bytes) c = static_cast<char>(rng());
  return bytes;
}

std::vector<Shape> BadFileShapes() {
  return {{"empty", ""},
          {"one byte", "x"},
          {"text", "a user's notes, not a pool\n"},
          {"1 MiB of zeros", std::string(1 << 20, '\0')},
          {"20 MiB of zeros", std::string(20 << 20, '\0')},
          {"16 MiB of random bytes", RandomBytes(16 << 20, 7)},
          {"libpmemobj signature, then random bytes", "PMEMOBJ" + std::string(1, '\0') + RandomBytes(4 << 20, 8)}};
}

class PoolShapeTest : public ::testing::TestWithParam<StorageMode> {};

TEST_P(PoolShapeTest, EveryBadPoolFileIsAStatusAndStaysUntouched) {
  ScratchDir dir;
  std::vector<Shape> shapes = BadFileShapes();
  {
    // A libpmemobj pool of another program (another layout).
    const std::string foreign = dir.path() + "/foreign.pool";
    PMEMobjpool* pop = pmemobj_create(foreign.c_str(), "another-program", 16 << 20, 0600);
    ASSERT_NE(pop, nullptr) << pmemobj_errormsg();
    pmemobj_close(pop);
    shapes.push_back({"another program's pool", ReadFile(foreign)});
    // A JigsawDB pool cut short.
    const std::string real = dir.path() + "/real.pool";
    Populate(ModeOptions(GetParam(), real), dir.path() + "/real", 200);
    const std::string whole = ReadFile(real);
    shapes.push_back({"truncated pool", whole.substr(0, whole.size() / 2)});
    shapes.push_back({"pool cut to 4 KiB", whole.substr(0, 4096)});
  }
  for (const Shape& shape : shapes) {
    for (bool create : {false, true}) {
      SCOPED_TRACE(shape.name + (create ? ", create_if_missing" : ""));
      const std::string db = dir.path() + "/db";
      const std::string pool = dir.path() + "/db.pool";
      WriteFile(pool, shape.bytes);
      Options options = ModeOptions(GetParam(), pool);
      options.create_if_missing = create;
      std::unique_ptr<DB> opened;
      Status s = DB::Open(options, db, &opened);
      EXPECT_FALSE(s.ok());
      EXPECT_TRUE(s.IsCorruption() || s.IsInvalidArgument()) << s.ToString();
      EXPECT_TRUE(ReadFile(pool) == shape.bytes) << "the file was changed";
      EXPECT_FALSE(std::filesystem::exists(db)) << "a failed open left its directory";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(PoolModes, PoolShapeTest, ::testing::Values(StorageMode::kPmem, StorageMode::kHybrid),
                         test::ModeName);

TEST(DiskShapeTest, EveryBadManifestTableOrIdentityIsAStatusAndStaysUntouched) {
  ScratchDir dir;
  const std::string db = dir.path() + "/db";
  const Options options = ModeOptions(StorageMode::kDisk, "");
  Populate(options, db, 3000);
  std::vector<std::string> tables;
  for (const std::string& name : Listing(db)) {
    if (name.size() > 4 && name.substr(name.size() - 4) == ".jst") tables.push_back(db + "/" + name);
  }
  ASSERT_FALSE(tables.empty());
  const std::string manifest = ReadFile(db + "/MANIFEST");
  const std::string identity = ReadFile(db + "/IDENTITY");
  const std::string table = ReadFile(tables.front());
  struct Case {
    std::string path;
    std::string original;
    std::vector<Shape> shapes;
  };
  std::vector<Case> cases = {
      {db + "/MANIFEST", manifest, BadFileShapes()},
      {tables.front(), table, BadFileShapes()},
      {db + "/IDENTITY", identity, BadFileShapes()},
  };
  cases[0].shapes.push_back({"truncated manifest", manifest.substr(0, manifest.size() / 2)});
  cases[1].shapes.push_back({"truncated table", table.substr(0, table.size() / 2)});
  cases[1].shapes.push_back({"table without its last byte", table.substr(0, table.size() - 1)});
  std::string newer = identity;
  newer.replace(newer.find("format_version: 1"), 17, "format_version: 9");
  cases[2].shapes.push_back({"newer identity version", newer});
  for (const Case& c : cases) {
    for (const Shape& shape : c.shapes) {
      for (bool create : {false, true}) {
        SCOPED_TRACE(c.path + ": " + shape.name + (create ? ", create_if_missing" : ""));
        WriteFile(c.path, shape.bytes);
        Options o = options;
        o.create_if_missing = create;
        o.paranoid_checks = true;
        std::unique_ptr<DB> opened;
        Status s = DB::Open(o, db, &opened);
        if (s.ok()) s = opened->VerifyIntegrity();  // a table is read lazily: damage shows when it is checked
        EXPECT_FALSE(s.ok());
        EXPECT_TRUE(s.IsCorruption() || s.IsNotSupported()) << s.ToString();
        opened.reset();
        EXPECT_TRUE(ReadFile(c.path) == shape.bytes) << "the file was changed";
        for (const std::string& t : tables) EXPECT_TRUE(std::filesystem::exists(t)) << t << " was deleted";
      }
    }
    WriteFile(c.path, c.original);
  }
  ExpectIntact(options, db, 3000);
}

// Rewrites the record of the disk-mode database's MANIFEST with `change`
// applied (its CRC recomputed: only damage or a bug makes such a record),
// expects DB::Open to refuse it with Corruption mentioning `expected`,
// adding or removing no file, then puts the original back and expects every
// key of Populate(`keys`).
void ExpectChangedManifestIsCorruption(const Options& options, const std::string& db, int keys,
                                       const std::function<bool(ManifestState*)>& change, const std::string& expected) {
  const std::string original = ReadFile(db + "/MANIFEST");
  constexpr size_t kRecord = 256;  // docs/manifest.md: the record after the file header
  ManifestState state;
  ASSERT_TRUE(DecodeManifest(original.data() + kRecord, original.size() - kRecord, &state).ok());
  if (!change(&state)) {
    ADD_FAILURE() << "the manifest does not have what the change needs";
    return;
  }
  std::string damaged = original;
  ASSERT_EQ(kRecord + ManifestSize(state), damaged.size());
  EncodeManifest(state, damaged.data() + kRecord);
  WriteFile(db + "/MANIFEST", damaged);
  // The database's files; an open rotates the info log (LOG, LOG.old).
  const auto data_files = [&] {
    std::set<std::string> files = Listing(db);
    std::erase_if(files, [](const std::string& name) { return name.starts_with("LOG"); });
    return files;
  };
  const std::set<std::string> files = data_files();
  std::unique_ptr<DB> opened;
  Status s = DB::Open(options, db, &opened);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find(expected), std::string::npos) << s.ToString();
  EXPECT_EQ(data_files(), files) << "a file was removed or added";
  EXPECT_TRUE(ReadFile(db + "/MANIFEST") == damaged) << "the file was changed";
  WriteFile(db + "/MANIFEST", original);
  ExpectIntact(options, db, keys);
}

// A disk-only database's MANIFEST that names a pmem block is Corruption,
// not a call into a pool the database does not have (found by
// tests/fuzz/db_files_fuzzer.cc: a null pointer before).
TEST(DiskShapeTest, AManifestNamingAPmemBlockIsCorruption) {
  ScratchDir dir;
  const std::string db = dir.path() + "/db";
  const Options options = ModeOptions(StorageMode::kDisk, "");
  Populate(options, db, 3000);
  ExpectChangedManifestIsCorruption(
      options, db, 3000,
      [](ManifestState* state) {
        if (state->blocks.empty()) return false;
        state->blocks.front().residence = Residence::kPmem;
        return true;
      },
      "without a pool");
}

// A MANIFEST that puts a table where it overlaps another of its level is
// Corruption before recovery sweeps or frees anything on its word; a merge
// over such a level would write its outputs out of order (found by
// tests/fuzz/db_files_fuzzer.cc: an assertion in the block builder, in a
// debug build).
TEST(DiskShapeTest, AManifestWhoseLevelOverlapsItselfIsCorruptionAndRemovesNothing) {
  ScratchDir dir;
  const std::string db = dir.path() + "/db";
  Options options = ModeOptions(StorageMode::kDisk, "");
  Populate(options, db, 3000);
  // Written again, the keys stay in L0 tables (two memtables' worth, below
  // the trigger; no reads ask for them): over the range of the deepest level.
  options.level0_compaction_trigger = 4;
  options.read_triggered_compactions = false;
  {
    std::unique_ptr<DB> opened;
    ASSERT_TRUE(DB::Open(options, db, &opened).ok());
    for (int i = 0; i < 3000; ++i) ASSERT_TRUE(opened->Put(WriteOptions(), Key(i), Value(i)).ok());
  }
  ExpectChangedManifestIsCorruption(
      options, db, 3000,
      [](ManifestState* state) {
        int deepest = 0;
        ManifestState::BlockEntry* in_l0 = nullptr;
        for (ManifestState::BlockEntry& b : state->blocks) {
          deepest = std::max(deepest, b.level);
          if (b.level == 0) in_l0 = &b;
        }
        if (in_l0 == nullptr || deepest == 0) return false;
        in_l0->level = deepest;  // beside the tables that already cover every key
        return true;
      },
      "overlaps");
}

// A pool on a read-only file system is an IOError: the pool is fine.
TEST(ReadOnlyFileSystemTest, APoolThereIsIOError) {
  ScratchDir dir;
  const std::string mount = dir.path() + "/mnt";
  std::filesystem::create_directories(mount);
  if (::mount("tmpfs", mount.c_str(), "tmpfs", 0, "size=256m") != 0) GTEST_SKIP() << "cannot mount a tmpfs here";
  struct Unmount {
    std::string path;
    ~Unmount() { ::umount2(path.c_str(), MNT_DETACH); }
  } unmount{mount};
  const Options options = ModeOptions(StorageMode::kPmem, mount + "/db.pool");
  Populate(options, mount + "/db", 100);
  ASSERT_EQ(::mount("tmpfs", mount.c_str(), "tmpfs", MS_REMOUNT | MS_RDONLY, "size=256m"), 0);
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, mount + "/db", &db);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.ToString().find("ead-only"), std::string::npos) << s.ToString();
  ASSERT_EQ(::mount("tmpfs", mount.c_str(), "tmpfs", MS_REMOUNT, "size=256m"), 0);
  ExpectIntact(options, mount + "/db", 100);
}

// An empty pmem_path puts the pool in the database directory only where it
// is emulated pmem (tmpfs); on a disk file system it would silently be an
// msync pool, so the open says so instead.
TEST(DefaultPoolPathTest, EmptyPmemPathOnADiskFileSystemIsRefused) {
  const std::filesystem::path base = std::filesystem::temp_directory_path();
  struct statfs fs {};
  ASSERT_EQ(statfs(base.c_str(), &fs), 0);
  if (static_cast<uint64_t>(fs.f_type) == 0x01021994) GTEST_SKIP() << base << " is tmpfs";
  const std::string db = (base / ("jigsaw-default-pool-" + std::to_string(getpid()))).string();
  Options options = test::SmallOptions();
  std::unique_ptr<DB> opened;
  Status s = DB::Open(options, db, &opened);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_NE(s.ToString().find("pmem_path"), std::string::npos) << s.ToString();
  EXPECT_FALSE(std::filesystem::exists(db));
}

}  // namespace
}  // namespace jigsaw
