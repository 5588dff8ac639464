// Batched reads (ssd/io_engine.h): io_uring and pread return the same bytes;
// the automatic choice follows the filesystem; an io_uring read that never
// completes is given up.
#include "ssd/io_engine.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>

#include "tests/support/db_test_util.h"

namespace jigsaw::ssd {
namespace {

void CheckEngine(IoEngine* engine, const std::string& dir) {
  const std::string path = dir + "/data";
  std::string contents(1 << 20, '\0');
  std::mt19937_64 rng(9);
  for (char& c : contents) c = static_cast<char>(rng());
  std::ofstream(path, std::ios::binary) << contents;
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  std::vector<std::string> buffers(200);
  std::vector<ReadRequest> requests(200);
  for (size_t i = 0; i < requests.size(); ++i) {
    buffers[i].assign(1 + rng() % 20000, 'x');
    requests[i].fd = fd;
    requests[i].offset = rng() % contents.size();
    requests[i].size = buffers[i].size();
    requests[i].dest = buffers[i].data();
  }
  requests.back().offset = contents.size() - 10;  // a short read at the end of the file
  engine->ReadBatch(&requests);
  for (size_t i = 0; i < requests.size(); ++i) {
    const ReadRequest& r = requests[i];
    ASSERT_TRUE(r.status.ok()) << r.status.ToString();
    const size_t expected = std::min<size_t>(r.size, contents.size() - r.offset);
    ASSERT_EQ(r.done, expected) << engine->name() << " request " << i;
    ASSERT_EQ(std::string(r.dest, r.done), contents.substr(r.offset, r.done)) << engine->name() << " request " << i;
  }
  // A bad descriptor is an error, not a crash.
  std::vector<ReadRequest> bad(1);
  char byte;
  bad[0].fd = 1 << 20;
  bad[0].size = 1;
  bad[0].dest = &byte;
  engine->ReadBatch(&bad);
  EXPECT_TRUE(bad[0].status.IsIOError());
  ::close(fd);
}

TEST(IoEngineTest, PreadReadsBatches) {
  test::ScratchDir dir;
  CheckEngine(NewPreadEngine().get(), dir.path());
}

TEST(IoEngineTest, UringReadsBatchesLikePread) {
  test::ScratchDir dir;
  std::string why;
  auto engine = NewUringEngine(16, &why);  // a queue shallower than the batch
  if (engine == nullptr) GTEST_SKIP() << "io_uring unavailable here: " << why;
  CheckEngine(engine.get(), dir.path());
}

// A read from a pipe nobody writes to never completes: after the bound the
// batch returns, that read failed (not abandoned when the kernel takes the
// cancel), the other reads done, the stall counted once, and the engine
// reads with pread from then on.
TEST(IoEngineTest, UringGivesUpAReadThatNeverCompletes) {
  test::ScratchDir dir;
  std::string why;
  auto engine = NewUringEngine(16, &why, std::chrono::milliseconds(50));
  if (engine == nullptr) GTEST_SKIP() << "io_uring unavailable here: " << why;
  const std::string path = dir.path() + "/data";
  const std::string contents(100000, 'c');
  std::ofstream(path, std::ios::binary) << contents;
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  int pipe_fds[2];
  ASSERT_EQ(::pipe2(pipe_fds, O_CLOEXEC), 0);  // empty, its write end open: a read waits
  const uint64_t stalls = UringStalls().reads;
  std::vector<ReadRequest> requests(3);
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].fd = i == 1 ? pipe_fds[0] : fd;
    requests[i].offset = i == 1 ? 0 : 1000 * i;
    requests[i].size = 4096;
    requests[i].dest = new char[4096];
  }
  engine->ReadBatch(&requests);
  EXPECT_EQ(UringStalls().reads, stalls + 1);
  for (size_t i : {0, 2}) {
    ASSERT_TRUE(requests[i].status.ok()) << requests[i].status.ToString();
    EXPECT_EQ(std::string(requests[i].dest, requests[i].done), contents.substr(requests[i].offset, 4096));
  }
  EXPECT_TRUE(requests[1].status.IsIOError()) << requests[1].status.ToString();
  for (ReadRequest& r : requests) {
    if (!r.abandoned) delete[] r.dest;  // an abandoned one the kernel may still write: leaked
  }
  CheckEngine(engine.get(), dir.path());  // pread now
  EXPECT_EQ(UringStalls().reads, stalls + 1);
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  ::close(fd);
}

TEST(IoEngineTest, AutomaticChoiceFollowsTheFilesystem) {
  test::ScratchDir shm;  // tmpfs
  std::string description;
  auto engine = ChooseIoEngine(SsdIo::kAuto, shm.path(), &description);
  EXPECT_STREQ(engine->name(), "pread") << description;
  EXPECT_NE(description.find("tmpfs"), std::string::npos) << description;
  engine = ChooseIoEngine(SsdIo::kPread, ".", &description);
  EXPECT_STREQ(engine->name(), "pread");
  std::string why;
  const bool uring_works = NewUringEngine(4, &why) != nullptr;
  engine = ChooseIoEngine(SsdIo::kUring, shm.path(), &description);
  EXPECT_STREQ(engine->name(), uring_works ? "io_uring" : "pread") << description;
}

}  // namespace
}  // namespace jigsaw::ssd
