// VersionSet (version/version_set.h) over a FileManifestStore in a scratch
// directory: file numbers are unique and increasing, from any thread; a
// commit installs the edited version only when the manifest store took it;
// a VersionSet loaded from the same store gets the committed levels and
// counters.
#include "version/version_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "tests/support/db_test_util.h"
#include "tests/support/fault_injection_fs.h"
#include "tests/support/forwarding_fs.h"

namespace jigsaw {
namespace {

const Comparator* const kBytewise = BytewiseComparator();

TableRef MakeTable(uint64_t number, const std::string& smallest, const std::string& largest, uint64_t size,
                   Residence residence = Residence::kSsd) {
  auto t = std::make_shared<TableMeta>();
  t->number = number;
  t->smallest = smallest;
  t->largest = largest;
  t->size = size;
  t->residence = residence;
  return t;
}

std::vector<uint64_t> Numbers(const std::vector<TableRef>& tables) {
  std::vector<uint64_t> numbers;
  for (const TableRef& t : tables) numbers.push_back(t->number);
  return numbers;
}

// (level, number, size, residence) of every table, as a Commit records them.
using Entry = std::tuple<int, uint64_t, uint64_t, Residence>;

std::vector<Entry> Entries(const Version& v) {
  std::vector<Entry> entries;
  for (int level = 0; level < kNumLevels; ++level) {
    for (const TableRef& t : v.levels[level]) entries.emplace_back(level, t->number, t->size, t->residence);
  }
  return entries;
}

std::vector<Entry> Entries(const ManifestState& state) {
  std::vector<Entry> entries;
  for (const auto& b : state.blocks) entries.emplace_back(b.level, b.number, b.size, b.residence);
  return entries;
}

// A VersionSet on a FileManifestStore in `dir` over `fs`; *exists tells
// whether a manifest was there.
std::unique_ptr<VersionSet> LoadVersionSet(FileSystem* fs, const std::string& dir, SyncStats* stats,
                                           ManifestState* state, bool* exists) {
  auto versions = std::make_unique<VersionSet>();
  Status s = versions->Load(std::make_unique<FileManifestStore>(fs, dir, kBytewise, stats), state, exists);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return versions;
}

Status CommitEdit(VersionSet* versions, const VersionEdit& edit) {
  return versions->Commit(ApplyEdit(*versions->current(), edit, kBytewise), {}, {}, {}, {}, false);
}

// A file system whose renames or directory syncs fail while told to.
class FailingFileSystem final : public test::ForwardingFileSystem {
 public:
  std::atomic<bool> fail_rename{false};
  std::atomic<bool> fail_sync_dir{false};

  Status RenameFile(const std::string& from, const std::string& to) override {
    if (fail_rename) return Status::IOError(from, "rename failed (injected)");
    return ForwardingFileSystem::RenameFile(from, to);
  }
  Status SyncDir(const std::string& dir) override {
    if (fail_sync_dir) return Status::IOError(dir, "directory sync failed (injected)");
    return ForwardingFileSystem::SyncDir(dir);
  }
};

TEST(VersionSetTest, FileNumbersStartAtOneAndIncreaseByOne) {
  VersionSet versions;
  EXPECT_EQ(versions.next_file_number(), 1u);
  EXPECT_EQ(versions.NewFileNumber(), 1u);
  EXPECT_EQ(versions.NewFileNumber(), 2u);
  EXPECT_EQ(versions.NewFileNumber(), 3u);
  EXPECT_EQ(versions.next_file_number(), 4u);
}

// Numbers taken from several threads at once are all distinct, increase
// within each thread, and together are exactly 1..N with none skipped.
TEST(VersionSetTest, FileNumbersAreUniqueAcrossThreads) {
  VersionSet versions;
  constexpr int kThreads = 4;
  constexpr size_t kPerThread = 20000;
  std::vector<std::vector<uint64_t>> taken(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&versions, &mine = taken[i]] {
      mine.reserve(kPerThread);
      for (size_t n = 0; n < kPerThread; ++n) mine.push_back(versions.NewFileNumber());
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<uint64_t> all;
  for (const auto& mine : taken) {
    EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
    EXPECT_EQ(std::adjacent_find(mine.begin(), mine.end()), mine.end());
    all.insert(all.end(), mine.begin(), mine.end());
  }
  std::sort(all.begin(), all.end());
  ASSERT_EQ(all.size(), kThreads * kPerThread);
  for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], i + 1) << "at " << i;
  EXPECT_EQ(versions.next_file_number(), all.size() + 1);
}

TEST(VersionSetTest, SequenceAndCompactPointersAreHeldAsSet) {
  VersionSet versions;
  EXPECT_EQ(versions.last_sequence(), 0u);
  versions.SetLastSequence(987654321);
  EXPECT_EQ(versions.last_sequence(), 987654321u);

  for (int level = 0; level < kNumLevels; ++level) EXPECT_TRUE(versions.compact_pointers()[level].empty());
  versions.compact_pointers()[3] = "m";
  versions.compact_pointers()[kNumLevels - 1] = "z";
  EXPECT_EQ(versions.compact_pointers()[3], "m");
  EXPECT_EQ(versions.compact_pointers()[kNumLevels - 1], "z");
  EXPECT_TRUE(versions.compact_pointers()[2].empty());
}

// Loading from a directory with no manifest: a new database, counters at
// their start, an empty current version, no pool object.
TEST(VersionSetTest, LoadOfANewDatabaseKeepsTheStartingCounters) {
  test::ScratchDir dir;
  SyncStats stats;
  ManifestState state;
  bool exists = true;
  auto versions = LoadVersionSet(FileSystem::Default(), dir.path(), &stats, &state, &exists);
  EXPECT_FALSE(exists);
  EXPECT_EQ(versions->next_file_number(), 1u);
  EXPECT_EQ(versions->last_sequence(), 0u);
  EXPECT_TRUE(Entries(*versions->current()).empty());
  EXPECT_EQ(versions->manifest_pool_object(), 0u);
}

// Each commit installs the version its edit makes: L0 newest first, deeper
// levels sorted by key, removed tables gone from whatever level held them
// (a trivial move: removed at one level, the same table added one below).
// A version taken before a commit stays as it was.
TEST(VersionSetTest, CommitInstallsTheEditedVersion) {
  test::ScratchDir dir;
  SyncStats stats;
  ManifestState state;
  bool exists = true;
  auto versions = LoadVersionSet(FileSystem::Default(), dir.path(), &stats, &state, &exists);
  ASSERT_FALSE(exists);

  const TableRef l0_old = MakeTable(versions->NewFileNumber(), "a", "z", 10);  // 1
  const TableRef l0_new = MakeTable(versions->NewFileNumber(), "b", "y", 10);  // 2
  const TableRef right = MakeTable(versions->NewFileNumber(), "m", "p", 20);   // 3
  const TableRef left = MakeTable(versions->NewFileNumber(), "a", "c", 30);    // 4
  VersionEdit first;
  first.Add(0, l0_old);
  first.Add(1, right);
  first.Add(1, left);
  ASSERT_TRUE(CommitEdit(versions.get(), first).ok());
  const std::shared_ptr<const Version> after_first = versions->current();
  EXPECT_EQ(Numbers(after_first->levels[0]), (std::vector<uint64_t>{1}));
  EXPECT_EQ(Numbers(after_first->levels[1]), (std::vector<uint64_t>{4, 3}));

  VersionEdit second;  // a flush, and L1's table 4 moved down to L2
  second.Add(0, l0_new);
  second.Remove({left});
  second.Add(2, left);
  ASSERT_TRUE(CommitEdit(versions.get(), second).ok());
  const Version& now = *versions->current();
  EXPECT_EQ(Numbers(now.levels[0]), (std::vector<uint64_t>{2, 1}));
  EXPECT_EQ(Numbers(now.levels[1]), (std::vector<uint64_t>{3}));
  EXPECT_EQ(Numbers(now.levels[2]), (std::vector<uint64_t>{4}));
  EXPECT_EQ(now.levels[2][0], left);  // the same table, not a copy

  // The version installed by the first commit is unchanged.
  EXPECT_EQ(Numbers(after_first->levels[0]), (std::vector<uint64_t>{1}));
  EXPECT_EQ(Numbers(after_first->levels[1]), (std::vector<uint64_t>{4, 3}));
  EXPECT_TRUE(after_first->levels[2].empty());

  VersionEdit third;  // L0 compacted into one L1 table
  const TableRef merged = MakeTable(versions->NewFileNumber(), "a", "z", 15, Residence::kPmem);  // 5
  third.Remove(now.levels[0]);
  third.Remove(now.levels[1]);
  third.Add(1, merged);
  ASSERT_TRUE(CommitEdit(versions.get(), third).ok());
  EXPECT_EQ(Entries(*versions->current()),
            (std::vector<Entry>{{1, 5, 15, Residence::kPmem}, {2, 4, 30, Residence::kSsd}}));
}

// A VersionSet loaded from the store after commits gets what the last one
// recorded: every table at its level, the file number counter and the
// sequence as they were at that commit, and the commit's generation.
TEST(VersionSetTest, ALoadedVersionSetSeesTheCommittedLevelsAndCounters) {
  test::ScratchDir dir;
  SyncStats stats;
  std::vector<Entry> committed;
  {
    ManifestState state;
    bool exists = true;
    auto versions = LoadVersionSet(FileSystem::Default(), dir.path(), &stats, &state, &exists);
    ASSERT_FALSE(exists);
    VersionEdit edit;
    edit.Add(0, MakeTable(versions->NewFileNumber(), "k", "q", 100, Residence::kPmem));
    edit.Add(3, MakeTable(versions->NewFileNumber(), "d", "f", 200));
    edit.Add(3, MakeTable(versions->NewFileNumber(), "a", "b", 300));
    edit.Add(6, MakeTable(versions->NewFileNumber(), "a", "z", 400));
    versions->SetLastSequence(500);
    ASSERT_TRUE(CommitEdit(versions.get(), edit).ok());

    VersionEdit more;
    more.Add(0, MakeTable(versions->NewFileNumber(), "a", "c", 50, Residence::kPmem));  // 5
    versions->SetLastSequence(777);
    ASSERT_TRUE(CommitEdit(versions.get(), more).ok());
    committed = Entries(*versions->current());
    EXPECT_EQ(versions->next_file_number(), 6u);

    // Taken after the last commit: not recorded until the next one.
    EXPECT_EQ(versions->NewFileNumber(), 6u);
    versions->SetLastSequence(900);
  }
  ASSERT_EQ(committed.size(), 5u);

  ManifestState state;
  bool exists = false;
  auto loaded = LoadVersionSet(FileSystem::Default(), dir.path(), &stats, &state, &exists);
  ASSERT_TRUE(exists);
  EXPECT_EQ(Entries(state), committed);
  EXPECT_EQ(state.generation, 2u);
  EXPECT_EQ(loaded->next_file_number(), 6u);
  EXPECT_EQ(loaded->last_sequence(), 777u);
  EXPECT_EQ(loaded->NewFileNumber(), 6u);  // continues after every recorded table

  // A commit of the loaded set follows the loaded generation.
  ASSERT_TRUE(loaded->Commit(std::make_shared<Version>(), {}, {}, {}, {}, false).ok());
  auto reloaded = LoadVersionSet(FileSystem::Default(), dir.path(), &stats, &state, &exists);
  EXPECT_EQ(state.generation, 3u);
  EXPECT_TRUE(state.blocks.empty());
  EXPECT_EQ(reloaded->next_file_number(), 7u);
}

// A commit whose manifest cannot be made durable (the new manifest's sync
// fails with NoSpace) returns the error and changes nothing: the current
// version is the same object, and the store still holds the old manifest.
// The failed attempt uses up no generation.
TEST(VersionSetTest, AFailedCommitLeavesTheCurrentVersionUnchanged) {
  test::ScratchDir dir;
  SyncStats stats;
  test::FaultInjectionFileSystem fs;
  ManifestState state;
  bool exists = true;
  auto versions = LoadVersionSet(&fs, dir.path(), &stats, &state, &exists);
  VersionEdit first;
  first.Add(1, MakeTable(versions->NewFileNumber(), "a", "c", 10));
  ASSERT_TRUE(CommitEdit(versions.get(), first).ok());
  const std::shared_ptr<const Version> before = versions->current();

  fs.SetSyncNoSpace(true);
  VersionEdit second;
  second.Remove(before->levels[1]);
  second.Add(2, MakeTable(versions->NewFileNumber(), "a", "c", 10));
  Status s = CommitEdit(versions.get(), second);
  EXPECT_TRUE(s.IsNoSpace()) << s.ToString();
  EXPECT_EQ(versions->current(), before);
  EXPECT_EQ(Numbers(versions->current()->levels[1]), (std::vector<uint64_t>{1}));
  EXPECT_TRUE(versions->current()->levels[2].empty());
  EXPECT_TRUE(versions->TakeLateError().ok());
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/MANIFEST.tmp"));
  fs.SetSyncNoSpace(false);

  ManifestState on_disk;
  auto reader = LoadVersionSet(FileSystem::Default(), dir.path(), &stats, &on_disk, &exists);
  ASSERT_TRUE(exists);
  EXPECT_EQ(on_disk.generation, 1u);
  EXPECT_EQ(Entries(on_disk), (std::vector<Entry>{{1, 1, 10, Residence::kSsd}}));

  // The same edit commits once the device recovers.
  ASSERT_TRUE(CommitEdit(versions.get(), second).ok());
  EXPECT_EQ(Numbers(versions->current()->levels[2]), (std::vector<uint64_t>{2}));
  reader = LoadVersionSet(FileSystem::Default(), dir.path(), &stats, &on_disk, &exists);
  EXPECT_EQ(on_disk.generation, 2u);
  EXPECT_EQ(Entries(on_disk), (std::vector<Entry>{{2, 2, 10, Residence::kSsd}}));
}

// A commit whose rename fails never took effect: the error is returned, the
// version stays, and the temporary file is removed.
TEST(VersionSetTest, AFailedRenameLeavesTheCurrentVersionAndNoTemporaryFile) {
  test::ScratchDir dir;
  SyncStats stats;
  FailingFileSystem fs;
  ManifestState state;
  bool exists = true;
  auto versions = LoadVersionSet(&fs, dir.path(), &stats, &state, &exists);
  const std::shared_ptr<const Version> empty = versions->current();
  fs.fail_rename = true;
  VersionEdit edit;
  edit.Add(1, MakeTable(versions->NewFileNumber(), "a", "c", 10));
  Status s = CommitEdit(versions.get(), edit);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_EQ(versions->current(), empty);
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/MANIFEST"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/MANIFEST.tmp"));
}

// Once the new manifest is renamed into place it is the database, even if
// the directory sync after it fails: the commit succeeds and installs the
// version, and the sync's error is reported once, later.
TEST(VersionSetTest, ACommitWhoseDirectorySyncFailsStandsAndReportsALateError) {
  test::ScratchDir dir;
  SyncStats stats;
  FailingFileSystem fs;
  ManifestState state;
  bool exists = true;
  auto versions = LoadVersionSet(&fs, dir.path(), &stats, &state, &exists);
  fs.fail_sync_dir = true;
  VersionEdit edit;
  edit.Add(1, MakeTable(versions->NewFileNumber(), "a", "c", 10));
  ASSERT_TRUE(CommitEdit(versions.get(), edit).ok());
  EXPECT_EQ(Numbers(versions->current()->levels[1]), (std::vector<uint64_t>{1}));
  fs.fail_sync_dir = false;
  EXPECT_TRUE(versions->TakeLateError().IsIOError());
  EXPECT_TRUE(versions->TakeLateError().ok());  // reported once

  ManifestState on_disk;
  auto reader = LoadVersionSet(FileSystem::Default(), dir.path(), &stats, &on_disk, &exists);
  ASSERT_TRUE(exists);
  EXPECT_EQ(Entries(on_disk), (std::vector<Entry>{{1, 1, 10, Residence::kSsd}}));
}

}  // namespace
}  // namespace jigsaw
