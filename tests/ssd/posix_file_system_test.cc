// The POSIX FileSystem (ssd/posix_file_system.cc). Table files: buffered
// appends written through io_uring or pwrite reach the file complete and in
// order, a failed write is an error, never a crash, and an io_uring write
// that never completes is given up and written again with pwrite. Log
// files: appends copied into a shared mapping are in the file when Append
// returns (a killed process keeps them), zeros follow them until Close
// truncates the file, and a full device fails an Append whole.
#include "ssd/posix_file_system.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "jigsaw/file_system.h"
#include "ssd/io_engine.h"
#include "tests/support/db_test_util.h"
#include "tests/support/full_pipe.h"

namespace jigsaw {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

// Limits the size of files this process writes (RLIMIT_FSIZE; writes past
// it fail with EFBIG, SIGXFSZ ignored) until destroyed.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    if (::getrlimit(RLIMIT_FSIZE, &old_limit_) != 0) return;
    old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = old_limit_;
    limit.rlim_cur = bytes;
    ok_ = ::setrlimit(RLIMIT_FSIZE, &limit) == 0;
  }
  ~FileSizeLimit() {
    if (ok_) ::setrlimit(RLIMIT_FSIZE, &old_limit_);
    if (old_handler_ != SIG_ERR) std::signal(SIGXFSZ, old_handler_);
  }
  bool ok() const { return ok_; }

 private:
  struct rlimit old_limit_ {};
  void (*old_handler_)(int) = SIG_ERR;
  bool ok_ = false;
};

// Appends of random sizes (empty, small, larger than a buffer), with a
// writeback hint in the middle. Returns what was appended.
std::string AppendRandom(WritableFile* file, uint64_t seed, size_t total) {
  std::mt19937_64 rng(seed);
  std::string expected;
  while (expected.size() < total) {
    const size_t n = rng() % 7 == 0 ? 0 : (rng() % 4 == 0 ? 300000 + rng() % 300000 : rng() % 20000);
    std::string chunk(n, '\0');
    for (char& c : chunk) c = static_cast<char>(rng());
    EXPECT_TRUE(file->Append(chunk).ok());
    expected += chunk;
    EXPECT_EQ(file->Size(), expected.size());
    if (rng() % 25 == 0) {
      EXPECT_TRUE(file->StartWriteback().ok());
    }
  }
  return expected;
}

// Before Close the file is whole steps long: the appends, then zeros.
TEST(PosixLogFileTest, AppendsAreInTheFileBeforeCloseAndCloseTruncates) {
  test::ScratchDir dir;
  const std::string path = dir.path() + "/000007.log";
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(FileSystem::Default()->NewLogFile(path, &file).ok());
  const std::string expected = AppendRandom(file.get(), 7, 3 << 20);
  const std::string before_close = ReadAll(path);
  ASSERT_GE(before_close.size(), expected.size());
  EXPECT_EQ(before_close.size() % (1 << 20), 0u);
  EXPECT_TRUE(before_close.compare(0, expected.size(), expected) == 0);
  EXPECT_EQ(before_close.find_first_not_of('\0', expected.size()), std::string::npos);
  ASSERT_TRUE(file->Sync().ok());
  ASSERT_TRUE(file->Close().ok());
  EXPECT_TRUE(ReadAll(path) == expected);
  EXPECT_FALSE(file->Append("more").ok());
}

// A reused log file: renamed, written again from its start; the 8 bytes
// after the last append read as zeros, the old file's bytes may follow;
// Close truncates to what was appended.
TEST(PosixLogFileTest, AReusedFileIsWrittenFromItsStartWithZerosAfterTheAppends) {
  test::ScratchDir dir;
  const std::string old_path = dir.path() + "/000007.log";
  const std::string path = dir.path() + "/000009.log";
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(FileSystem::Default()->NewLogFile(old_path, &file).ok());
  const std::string old_bytes(3 << 20, 'o');
  ASSERT_TRUE(file->Append(old_bytes).ok());
  ASSERT_TRUE(file->Close().ok());

  ASSERT_TRUE(FileSystem::Default()->ReuseLogFile(old_path, path, &file).ok());
  EXPECT_FALSE(std::filesystem::exists(old_path));
  std::string expected;
  for (uint64_t target : {uint64_t{100}, uint64_t{65536 - 8}, uint64_t{(1 << 20) + 3}, uint64_t{(4 << 20) + 17}}) {
    std::string more;
    std::mt19937_64 rng(target);
    while (expected.size() + more.size() < target) more += static_cast<char>('a' + rng() % 26);
    ASSERT_TRUE(file->Append(more).ok());
    expected += more;
    const std::string now = ReadAll(path);
    ASSERT_GE(now.size(), expected.size() + 8);
    EXPECT_TRUE(now.compare(0, expected.size(), expected) == 0) << target;
    EXPECT_EQ(now.compare(expected.size(), 8, std::string(8, '\0')), 0) << target;
    // After that: zeros, or the old bytes where the old file had them.
    for (size_t i = expected.size() + 8; i < now.size(); ++i) {
      ASSERT_TRUE(now[i] == '\0' || (now[i] == 'o' && i < old_bytes.size())) << target << " at " << i;
    }
  }
  ASSERT_TRUE(file->Close().ok());
  EXPECT_TRUE(ReadAll(path) == expected);

  // Nothing to reuse: an error, and nothing created.
  const std::string other = dir.path() + "/000011.log";
  EXPECT_FALSE(FileSystem::Default()->ReuseLogFile(dir.path() + "/missing.log", other, &file).ok());
  EXPECT_FALSE(std::filesystem::exists(other));
}

// A process killed right after its appends returned (no Sync, no Close, no
// destructor) leaves them in the file.
TEST(PosixLogFileTest, AppendsSurviveAKilledProcess) {
  test::ScratchDir dir;
  const std::string path = dir.path() + "/000008.log";
  std::string expected;
  std::mt19937_64 rng(8);
  while (expected.size() < (1 << 20) + 12345) expected += static_cast<char>('a' + rng() % 26);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::unique_ptr<WritableFile> file;
    if (!FileSystem::Default()->NewLogFile(path, &file).ok()) ::_exit(3);
    for (size_t i = 0; i < expected.size(); i += 1000) {
      if (!file->Append(Slice(expected.data() + i, std::min<size_t>(1000, expected.size() - i))).ok()) ::_exit(4);
    }
    ::kill(::getpid(), SIGKILL);
    ::_exit(5);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  const std::string contents = ReadAll(path);
  ASSERT_GE(contents.size(), expected.size());
  EXPECT_TRUE(contents.compare(0, expected.size(), expected) == 0);
  EXPECT_EQ(contents.find_first_not_of('\0', expected.size()), std::string::npos);
}

// Past the file-size limit (EFBIG, as a full device is ENOSPC) the Append
// fails before it copies anything: the file keeps the appends before it.
TEST(PosixLogFileTest, AnAppendThatFindsNoSpaceFailsWhole) {
  test::ScratchDir dir;
  const std::string path = dir.path() + "/000009.log";
  const FileSizeLimit limit(1 << 20);
  ASSERT_TRUE(limit.ok());
  std::unique_ptr<WritableFile> file;
  Status s = FileSystem::Default()->NewLogFile(path, &file);
  ASSERT_TRUE(s.ok());
  const std::string chunk(100000, 'z');
  int appended = 0;
  for (; appended < 40; ++appended) {
    s = file->Append(chunk);
    if (!s.ok()) break;
  }
  Status closed = file->Close();
  EXPECT_EQ(appended, 10);
  EXPECT_TRUE(s.IsIOError() || s.IsNoSpace()) << s.ToString();
  EXPECT_NE(s.ToString().find(path), std::string::npos) << s.ToString();
  EXPECT_EQ(file->Size(), 1000000u);
  EXPECT_TRUE(closed.ok()) << closed.ToString();
  EXPECT_EQ(ReadAll(path), std::string(1000000, 'z'));
}

class PosixTableFileTest : public ::testing::TestWithParam<bool> {};  // io_uring or pwrite

TEST_P(PosixTableFileTest, EveryByteReachesTheFileInOrder) {
  test::ScratchDir dir;
  const std::string path = dir.path() + "/table";
  FileSystem* fs = FileSystem::Default();
  for (uint64_t round = 0; round < 3; ++round) {
    std::unique_ptr<WritableFile> file;
    ASSERT_TRUE(fs->NewTableFile(path, GetParam(), &file).ok());
    const std::string expected = AppendRandom(file.get(), round, (round + 1) << 20);
    ASSERT_TRUE(file->Sync().ok());
    ASSERT_TRUE(file->Close().ok());
    EXPECT_TRUE(ReadAll(path) == expected) << "round " << round;
  }
}

TEST_P(PosixTableFileTest, DestroyingAnUnclosedFileWritesWhatWasAppended) {
  test::ScratchDir dir;
  const std::string path = dir.path() + "/table";
  std::string expected;
  {
    std::unique_ptr<WritableFile> file;
    ASSERT_TRUE(FileSystem::Default()->NewTableFile(path, GetParam(), &file).ok());
    expected = AppendRandom(file.get(), 7, 1 << 20);
  }
  EXPECT_TRUE(ReadAll(path) == expected);
}

// A write past the file-size limit fails (EFBIG): the error comes back from
// an Append, Sync or Close, not a crash, and the file keeps what fit.
TEST_P(PosixTableFileTest, AFailedWriteIsReturnedByALaterCall) {
  test::ScratchDir dir;
  const std::string path = dir.path() + "/table";
  const FileSizeLimit limit(1 << 20);
  ASSERT_TRUE(limit.ok());
  std::unique_ptr<WritableFile> file;
  Status s = FileSystem::Default()->NewTableFile(path, GetParam(), &file);
  ASSERT_TRUE(s.ok());
  const std::string chunk(100000, 'z');
  for (int i = 0; i < 40 && s.ok(); ++i) s = file->Append(chunk);
  if (s.ok()) s = file->Sync();
  Status closed = file->Close();
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(s.IsIOError() || s.IsNoSpace()) << s.ToString();
  EXPECT_NE(s.ToString().find(path), std::string::npos) << s.ToString();
  EXPECT_FALSE(closed.ok());  // the error sticks
  EXPECT_EQ(std::filesystem::file_size(path), uint64_t{1} << 20);
}

INSTANTIATE_TEST_SUITE_P(Writes, PosixTableFileTest, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "IoUring" : "Pwrite"; });

// A stalled ring: the file system's rings write to a full pipe nobody
// reads, so no table write through io_uring ever completes.
class StalledRingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (ssd::NewUringEngine(4, &why) == nullptr) GTEST_SKIP() << "io_uring unavailable here: " << why;
    ssd::PosixFileSystemOptions options;
    options.uring_wait_bound = std::chrono::milliseconds(50);
    options.ring_target_for_test = [this](const std::string&) {
      ++rings_;
      return pipe_.write_fd();
    };
    fs_ = ssd::NewPosixFileSystem(std::move(options));
  }

  test::FullPipe pipe_;  // outlives the file system
  std::atomic<int> rings_{0};
  std::unique_ptr<FileSystem> fs_;
  test::ScratchDir dir_;
};

// The file gets every byte (through pwrite), the stall is counted once, and
// the file system's next table file sets up no ring (it would stall too).
TEST_F(StalledRingTest, AWriteThatNeverCompletesIsWrittenAgainWithPwrite) {
  const std::string path = dir_.path() + "/table";
  const uint64_t stalls = ssd::UringStalls().table_writes;
  for (uint64_t round = 0; round < 2; ++round) {
    std::unique_ptr<WritableFile> file;
    ASSERT_TRUE(fs_->NewTableFile(path, /*async_io=*/true, &file).ok());
    const std::string expected = AppendRandom(file.get(), round, 2 << 20);
    Status s = file->Sync();
    ASSERT_TRUE(s.ok()) << s.ToString();
    s = file->Close();
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(ReadAll(path) == expected) << "round " << round;
    EXPECT_EQ(ssd::UringStalls().table_writes, stalls + 1) << "round " << round;
  }
  EXPECT_EQ(rings_.load(), 1);
}

// A file smaller than a buffer writes it through the ring only when drained
// (here by the destructor): that wait is bounded too.
TEST_F(StalledRingTest, DestroyingAFileWhoseLastWriteStallsWritesWhatWasAppended) {
  const std::string path = dir_.path() + "/table";
  const uint64_t stalls = ssd::UringStalls().table_writes;
  {
    std::unique_ptr<WritableFile> file;
    ASSERT_TRUE(fs_->NewTableFile(path, /*async_io=*/true, &file).ok());
    ASSERT_TRUE(file->Append(std::string(1000, 'a')).ok());
  }
  EXPECT_EQ(ReadAll(path), std::string(1000, 'a'));
  EXPECT_EQ(ssd::UringStalls().table_writes, stalls + 1);
}

}  // namespace
}  // namespace jigsaw
