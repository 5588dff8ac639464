// The durability tracker's pieces (compaction/durability_tracker.h): how the
// outputs of pending compactions are made durable -- one file-system-wide
// sync where the file system has one, file by file otherwise -- and that
// what they wrote survives a power failure either way. Their use by the
// engine (shadows, recovery, batched rounds) is ssd_tier_test's.
#include "compaction/durability_tracker.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/db_test_util.h"
#include "tests/support/fault_injection_fs.h"
#include "version/version_set.h"

namespace jigsaw {
namespace {

struct Fixture {
  test::ScratchDir dir;
  test::FaultInjectionFileSystem fs;
  Options options;
  VersionSet versions;
  std::unique_ptr<TableStore> store;
  std::vector<std::unique_ptr<WritableFile>> files;

  Fixture() {
    options.file_system = &fs;
    store = std::make_unique<TableStore>(options, dir.path(), &versions);
    std::string io;
    store->ChooseIo(&io);
  }
  // Writes `n` table files of 10 KiB each, writeback started, not synced.
  void WriteFiles(int n) {
    for (int i = 0; i < n; ++i) {
      std::unique_ptr<WritableFile> file;
      ASSERT_TRUE(store->NewTableFile(100 + i, &file).ok());
      ASSERT_TRUE(file->Append(std::string(10 << 10, static_cast<char>('a' + i))).ok());
      ASSERT_TRUE(file->StartWriteback().ok());
      files.push_back(std::move(file));
    }
  }
  // After a power failure: how many of the files are there whole.
  int WholeFilesAfterPowerFailure() {
    for (auto& f : files) (void)f->Close();
    fs.DropUnsyncedData();
    int whole = 0;
    for (size_t i = 0; i < files.size(); ++i) {
      std::error_code ec;
      whole += std::filesystem::file_size(store->TablePath(100 + i), ec) == (10u << 10) && !ec;
    }
    return whole;
  }
};

TEST(DurabilityTrackerTest, OutputsAreMadeDurableWithOneFileSystemSync) {
  Fixture f;
  f.WriteFiles(5);
  const int syncs_before = f.fs.syncs();
  ASSERT_TRUE(SyncOutputFiles(f.store.get(), f.files).ok());
  EXPECT_EQ(f.fs.syncs() - syncs_before, 1);
  EXPECT_EQ(f.store->sync_stats()->syncs.load(), 1u);
  EXPECT_EQ(f.store->sync_stats()->bytes.load(), 5u * (10 << 10));
  EXPECT_EQ(f.WholeFilesAfterPowerFailure(), 5);
}

TEST(DurabilityTrackerTest, WithoutAFileSystemSyncEachFileAndTheDirectoryAreSynced) {
  Fixture f;
  f.fs.SetWholeSyncSupported(false);
  f.WriteFiles(5);
  const int syncs_before = f.fs.syncs();
  ASSERT_TRUE(SyncOutputFiles(f.store.get(), f.files).ok());
  EXPECT_EQ(f.fs.syncs() - syncs_before, 6);  // five files, one directory
  EXPECT_EQ(f.WholeFilesAfterPowerFailure(), 5);
}

TEST(DurabilityTrackerTest, ASyncFailureIsReturnedAndNothingIsDurable) {
  for (bool whole : {true, false}) {
    Fixture f;
    f.fs.SetWholeSyncSupported(whole);
    f.WriteFiles(3);
    f.fs.SetSyncNoSpace(true);
    EXPECT_TRUE(SyncOutputFiles(f.store.get(), f.files).IsNoSpace()) << whole;
    f.fs.SetSyncNoSpace(false);
    f.fs.SetActive(false);
    EXPECT_TRUE(SyncOutputFiles(f.store.get(), f.files).IsIOError()) << whole;
    f.fs.SetActive(true);
    EXPECT_EQ(f.WholeFilesAfterPowerFailure(), 0) << whole;
  }
}

}  // namespace
}  // namespace jigsaw
