// The power-failure simulator (emulation/power_failure.h) and its harness
// run against the real engine.
#include "emulation/power_failure.h"

#include <fcntl.h>
#include <libpmem.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "emulation/power_failure_harness.h"
#include "tests/db_test_util.h"

namespace jigsaw::emulation {
namespace {

constexpr size_t kFileSize = 64 << 10;

// A zeroed file mapped shared, as a pool would be.
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) : path_(path) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    EXPECT_GE(fd_, 0);
    EXPECT_EQ(0, ::ftruncate(fd_, kFileSize));
    base_ = static_cast<char*>(::mmap(nullptr, kFileSize, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0));
    EXPECT_NE(base_, MAP_FAILED);
  }
  ~MappedFile() {
    ::munmap(base_, kFileSize);
    ::close(fd_);
  }
  char* base() { return base_; }

 private:
  std::string path_;
  int fd_ = -1;
  char* base_ = nullptr;
};

class SimulatorTest : public ::testing::Test {
 protected:
  void TearDown() override { sim_.Disarm(); }
  test::ScratchDir dir_;
  PowerFailureSimulator& sim_ = PowerFailureSimulator::Instance();
};

TEST_F(SimulatorTest, OnlyFlushedAndDrainedLinesBecomeDurable) {
  const std::string path = dir_.path() + "/file";
  MappedFile file(path);
  uint64_t label = 7;
  ASSERT_TRUE(sim_.Arm(path, [&label] { return label; }).ok());
  char* p = file.base();

  std::memset(p, 'a', 64);  // stored, never flushed
  std::memset(p + 128, 'b', 64);
  pmem_flush(p + 128, 64);  // flushed, not yet drained
  EXPECT_EQ(sim_.persist_points(), 0u);
  label = 8;
  pmem_drain();
  ASSERT_EQ(sim_.persist_points(), 1u);
  EXPECT_EQ(sim_.label_at(0), 7u);
  EXPECT_EQ(sim_.label_at(1), 8u);

  std::memset(p + 256, 'c', 64);
  pmem_flush(p + 256, 64);
  std::memset(p + 256, 'd', 64);  // after the flush: not in the flushed line
  pmem_drain();
  pmem_memcpy_persist(p + 512, "persisted", 9);
  sim_.Disarm();

  PowerFailureSimulator::ImageCursor cursor(sim_);
  EXPECT_EQ(cursor.image()[128], 0);  // point 0: the file as armed
  cursor.AdvanceTo(1);
  EXPECT_EQ(cursor.image()[0], 0);
  EXPECT_EQ(cursor.image()[128], 'b');
  EXPECT_EQ(cursor.image()[191], 'b');
  EXPECT_EQ(cursor.image()[256], 0);
  cursor.AdvanceTo(3);
  EXPECT_EQ(cursor.image()[0], 0);
  EXPECT_EQ(cursor.image()[256], 'c');
  EXPECT_EQ(std::string(cursor.image().data() + 512, 9), "persisted");
}

TEST_F(SimulatorTest, MsyncPersistsAndPrivateMappingsAreIgnored) {
  const std::string path = dir_.path() + "/file";
  MappedFile file(path);
  ASSERT_TRUE(sim_.Arm(path, nullptr).ok());
  std::memset(file.base() + 4096, 'm', 100);
  pmem_msync(file.base() + 4096, 100);

  const int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0);
  auto* priv = static_cast<char*>(::mmap(nullptr, kFileSize, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0));
  ASSERT_NE(priv, MAP_FAILED);
  std::memset(priv, 'p', 64);
  pmem_persist(priv, 64);
  ::munmap(priv, kFileSize);
  ::close(fd);
  sim_.Disarm();

  ASSERT_EQ(sim_.persist_points(), 2u);
  PowerFailureSimulator::ImageCursor cursor(sim_);
  cursor.AdvanceTo(2);
  EXPECT_EQ(cursor.image()[4096 + 99], 'm');
  EXPECT_EQ(cursor.image()[0], 0);
  EXPECT_EQ(sim_.lines_at(2), 0u);
}

TEST_F(SimulatorTest, ReorderingAppliesSubsetsOfTheNextPoint) {
  const std::string path = dir_.path() + "/file";
  MappedFile file(path);
  ASSERT_TRUE(sim_.Arm(path, nullptr).ok());
  for (int line = 0; line < 64; ++line) {
    file.base()[line * 64] = 'x';
    pmem_flush(file.base() + line * 64, 1);
  }
  pmem_drain();
  sim_.Disarm();
  ASSERT_EQ(sim_.lines_at(1), 64u);
  PowerFailureSimulator::ImageCursor cursor(sim_);
  std::mt19937_64 rng(3);
  const std::vector<char> partial = cursor.ImageWithPartialNextPoint(&rng);
  int durable = 0;
  for (int line = 0; line < 64; ++line) durable += partial[line * 64] == 'x';
  EXPECT_GT(durable, 0);
  EXPECT_LT(durable, 64);
}

TEST_F(SimulatorTest, ArmRejectsAMissingFile) {
  EXPECT_TRUE(sim_.Arm(dir_.path() + "/missing", nullptr).IsIOError());
  EXPECT_FALSE(sim_.armed());
}

PowerFailureWorkload SmallWorkload() {
  PowerFailureWorkload w;
  w.options = test::TinyPoolOptions();
  w.batches = 900;
  w.batches_before_arming = 200;
  w.max_checks = 300;
  return w;
}

// Every power failure of a workload with flushes, compactions and a
// recovery leaves a database with every acknowledged sync write.
TEST(PowerFailureHarnessTest, EngineSurvivesPowerFailureAtPersistPoints) {
  test::ScratchDir dir;
  PowerFailureReport report;
  const PowerFailureWorkload workload = SmallWorkload();
  const Status s = RunPowerFailureHarness(dir.path(), workload, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::printf("persist points %zu, checks %zu\n", report.persist_points, report.checks);
  EXPECT_GT(report.persist_points, 100u);
  EXPECT_GT(report.checks, 200u);
  for (const std::string& f : report.failures) ADD_FAILURE() << f;
  EXPECT_EQ(report.failed_checks, 0u);
}

// A small workload checked at every single persist point.
TEST(PowerFailureHarnessTest, EveryPersistPointOfASmallWorkload) {
  test::ScratchDir dir;
  PowerFailureWorkload workload = SmallWorkload();
  workload.batches = 120;
  workload.batches_before_arming = 20;
  workload.max_checks = 0;  // no limit
  workload.seed = 2;
  PowerFailureReport report;
  const Status s = RunPowerFailureHarness(dir.path(), workload, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_GE(report.checks, report.persist_points + 1);
  for (const std::string& f : report.failures) ADD_FAILURE() << f;
  EXPECT_EQ(report.failed_checks, 0u);
}

}  // namespace
}  // namespace jigsaw::emulation
