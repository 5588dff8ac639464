// Guarded reads of mappings (util/guarded_read.h): a SIGBUS from a mapped page
// the kernel cannot supply abandons the guarded read and nothing else; every
// other SIGBUS goes where it went before the guard.
#include "util/guarded_read.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/support/db_test_util.h"

namespace jigsaw {
namespace {

constexpr size_t kPage = 4096;
// What SumPages reads from a file of two pages of 'm'.
constexpr uint64_t kFullSum = uint64_t{2 * kPage / 64} * 'm';

// A file of two pages mapped read-only; Truncate() takes the pages away
// behind the mapping, as an I/O error or another process would.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
    EXPECT_GE(fd_, 0);
    std::string bytes(2 * kPage, 'm');
    EXPECT_EQ(::pwrite(fd_, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
    void* map = ::mmap(nullptr, 2 * kPage, PROT_READ, MAP_SHARED, fd_, 0);
    EXPECT_NE(map, MAP_FAILED);
    data_ = static_cast<const char*>(map);
  }
  ~MappedFile() {
    ::munmap(const_cast<char*>(data_), 2 * kPage);
    ::close(fd_);
  }
  void Truncate() { EXPECT_EQ(::ftruncate(fd_, 0), 0); }
  const char* data() const { return data_; }

 private:
  const std::string path_;
  int fd_ = -1;
  const char* data_ = nullptr;
};

// Reads every byte of the mapping through a volatile pointer (so the
// compiler keeps the loads) and returns their sum.
uint64_t SumPages(const char* data) {
  const volatile char* p = data;
  uint64_t sum = 0;
  for (size_t i = 0; i < 2 * kPage; i += 64) sum += static_cast<unsigned char>(p[i]);
  return sum;
}

TEST(MappedReadTest, AReadOfPagesThatExistCompletes) {
  test::ScratchDir dir;
  MappedFile file(dir.path() + "/f");
  uint64_t sum = 0;
  EXPECT_TRUE(GuardedRead([&] { sum = SumPages(file.data()); }));
  EXPECT_EQ(sum, kFullSum);
}

TEST(MappedReadTest, AFaultAbandonsTheReadAndTheThreadGoesOn) {
  JIGSAW_SKIP_FAULTS_UNDER_TSAN();
  test::ScratchDir dir;
  MappedFile file(dir.path() + "/f");
  file.Truncate();
  int steps = 0;
  uint64_t sum = 0;
  for (int round = 0; round < 3; ++round) {  // the handler stays armed
    EXPECT_FALSE(GuardedRead([&] {
      ++steps;
      sum = SumPages(file.data());
      ++steps;  // never reached
    }));
  }
  EXPECT_EQ(steps, 3);
  EXPECT_EQ(sum, 0u);  // the assignment never completed

  MappedFile fresh(dir.path() + "/g");
  EXPECT_TRUE(GuardedRead([&] { sum = SumPages(fresh.data()); }));
  EXPECT_EQ(sum, kFullSum);
}

TEST(MappedReadTest, AnInnerFaultAbandonsOnlyTheInnerRead) {
  JIGSAW_SKIP_FAULTS_UNDER_TSAN();
  test::ScratchDir dir;
  MappedFile good(dir.path() + "/good");
  MappedFile bad(dir.path() + "/bad");
  bad.Truncate();
  bool inner = true;
  uint64_t sum = 0;
  const bool outer = GuardedRead([&] {
    inner = GuardedRead([&] { sum = SumPages(bad.data()); });
    sum = SumPages(good.data());
  });
  EXPECT_TRUE(outer);
  EXPECT_FALSE(inner);
  EXPECT_EQ(sum, kFullSum);
  // And the outer read is guarded again after the inner one ended.
  EXPECT_FALSE(GuardedRead([&] {
    EXPECT_TRUE(GuardedRead([&] { sum = SumPages(good.data()); }));
    sum = SumPages(bad.data());
  }));
}

TEST(MappedReadTest, ThreadsFaultIndependently) {
  JIGSAW_SKIP_FAULTS_UNDER_TSAN();
  test::ScratchDir dir;
  MappedFile good(dir.path() + "/good");
  MappedFile bad(dir.path() + "/bad");
  bad.Truncate();
  std::atomic<int> faults{0}, completed{0};
  auto reader = [&](const char* data) {
    for (int i = 0; i < 200; ++i) {
      uint64_t sum = 0;
      if (GuardedRead([&] { sum = SumPages(data); })) {
        EXPECT_EQ(sum, kFullSum);
        completed.fetch_add(1);
      } else {
        faults.fetch_add(1);
      }
    }
  };
  std::thread a(reader, bad.data()), b(reader, good.data());
  a.join();
  b.join();
  EXPECT_EQ(faults.load(), 200);
  EXPECT_EQ(completed.load(), 200);
}

// The death tests run in a freshly executed copy of this binary, so the
// guard is installed there only when the test body does it.
class MappedReadDeathTest : public ::testing::Test {
 protected:
  MappedReadDeathTest() { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// A death test's statement runs in a child process that never returns to
// destroy its ScratchDir: the child removes the directory once its file is
// open and mapped (the mapping keeps the file).
void LeaveNoDirectory(const test::ScratchDir& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir.path(), ec);
}

volatile sig_atomic_t guarded_read_returned = 0;
void ExitOnSigbus(int) { _exit(guarded_read_returned ? 42 : 43); }

TEST_F(MappedReadDeathTest, ASigbusOutsideAGuardedReadReachesTheHandlerFoundBefore) {
  JIGSAW_SKIP_FAULTS_UNDER_TSAN();
  test::ScratchDir dir;
  const std::string path = dir.path() + "/f";
  EXPECT_EXIT(
      {
        MappedFile file(path);
        LeaveNoDirectory(dir);
        file.Truncate();
        std::signal(SIGBUS, ExitOnSigbus);  // the application's own handler
        if (GuardedRead([&] { SumPages(file.data()); })) _exit(1);  // must fault
        guarded_read_returned = 1;
        SumPages(file.data());  // unguarded: the application's handler
        _exit(2);
      },
      ::testing::ExitedWithCode(42), "");
}

TEST_F(MappedReadDeathTest, ASigbusOutsideAGuardedReadStillEndsTheProcess) {
  JIGSAW_SKIP_FAULTS_UNDER_TSAN();
  test::ScratchDir dir;
  const std::string path = dir.path() + "/f";
  EXPECT_DEATH(
      {
        MappedFile file(path);
        LeaveNoDirectory(dir);
        file.Truncate();
        if (GuardedRead([&] { SumPages(file.data()); })) _exit(0);
        std::fprintf(stderr, "the guarded read returned\n");
        SumPages(file.data());
        _exit(0);  // not reached: the default action ends the process
      },
      "the guarded read returned");
}

// A SIGBUS sent to the process (kill, raise) is not a read fault: it is not
// swallowed by a guarded read, and without a handler of the application it
// still ends the process.
TEST_F(MappedReadDeathTest, ASentSigbusStillEndsTheProcess) {
  JIGSAW_SKIP_FAULTS_UNDER_TSAN();
  test::ScratchDir dir;
  const std::string path = dir.path() + "/f";
  // (Dies by the signal; under ASan, whose handler the guard found, by its
  // report.)
  EXPECT_DEATH(
      {
        MappedFile file(path);
        LeaveNoDirectory(dir);
        if (!GuardedRead([&] { SumPages(file.data()); })) _exit(0);  // installs the guard
        GuardedRead([] { std::raise(SIGBUS); });
        _exit(0);  // not reached
      },
      "");
}

// An application that ignores SIGBUS keeps ignoring sent ones.
TEST_F(MappedReadDeathTest, ASentSigbusTheApplicationIgnoresIsIgnored) {
  JIGSAW_SKIP_FAULTS_UNDER_TSAN();
  test::ScratchDir dir;
  const std::string path = dir.path() + "/f";
  EXPECT_EXIT(
      {
        std::signal(SIGBUS, SIG_IGN);
        MappedFile file(path);
        LeaveNoDirectory(dir);
        if (!GuardedRead([&] { SumPages(file.data()); })) _exit(1);
        std::raise(SIGBUS);
        std::raise(SIGBUS);  // and again: nothing was reset to the default
        _exit(7);
      },
      ::testing::ExitedWithCode(7), "");
}

}  // namespace
}  // namespace jigsaw
