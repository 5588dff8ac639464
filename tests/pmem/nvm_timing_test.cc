// The NVM timing model (pmem/nvm_timing.h) and its options.
#include "pmem/nvm_timing.h"

#include <chrono>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "jigsaw/db.h"
#include "tests/support/db_test_util.h"

namespace jigsaw::pmem {
namespace {

using Clock = std::chrono::steady_clock;

double ElapsedNs(Clock::time_point start) {
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count();
}

// Counts what reaches the base region.
class CountingRegion final : public pmem::Region {
 public:
  bool is_pmem() const override { return true; }
  void Flush(const void*, size_t len) override { flushed += len; }
  void Drain() override { ++drains; }
  void MemcpyNoDrain(void* dest, const void* src, size_t len) override {
    std::memcpy(dest, src, len);
    flushed += len;
  }
  size_t flushed = 0;
  int drains = 0;
};

TEST(NvmTimingTest, ModelIsOffByDefaultAndOptaneIsOn) {
  EXPECT_FALSE(Options().nvm_timing.enabled());
  const NvmTimingModel optane = NvmTimingModel::Optane();
  EXPECT_TRUE(optane.enabled());
  EXPECT_EQ(optane.random_read_ns, 205);
  EXPECT_EQ(optane.write_bandwidth_bytes_per_sec, 2.2e9);
  EXPECT_EQ(optane.read_bandwidth_bytes_per_sec, 6.6e9);
  EXPECT_TRUE(ValidateTimingModel(optane).ok());
  NvmTimingModel reads_only;
  reads_only.read_bandwidth_bytes_per_sec = 1e9;
  EXPECT_TRUE(reads_only.enabled());
}

TEST(NvmTimingTest, NegativeOrNonFiniteValuesAreInvalidArgumentNamingTheField) {
  NvmTimingModel m;
  m.persist_line_ns = -1;
  Status s = ValidateTimingModel(m);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("nvm_timing.persist_line_ns"), std::string::npos);
  m = NvmTimingModel();
  m.write_bandwidth_bytes_per_sec = std::nan("");
  s = ValidateTimingModel(m);
  EXPECT_NE(s.ToString().find("nvm_timing.write_bandwidth_bytes_per_sec"), std::string::npos);
  m = NvmTimingModel();
  m.read_bandwidth_bytes_per_sec = -1e9;
  EXPECT_NE(ValidateTimingModel(m).ToString().find("nvm_timing.read_bandwidth_bytes_per_sec"), std::string::npos);
  m = NvmTimingModel();
  m.random_read_ns = -0.5;
  EXPECT_NE(ValidateTimingModel(m).ToString().find("nvm_timing.random_read_ns"), std::string::npos);

  // DB::Open refuses it before touching anything.
  test::ScratchDir dir;
  Options options = test::SmallOptions();
  options.nvm_timing.write_unit_ns = -3;
  std::unique_ptr<DB> db;
  s = DB::Open(options, dir.path() + "/db", &db);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("nvm_timing.write_unit_ns"), std::string::npos);
  options = test::SmallOptions();
  options.pmem_emulation = static_cast<PmemEmulation>(7);
  s = DB::Open(options, dir.path() + "/db", &db);
  EXPECT_TRUE(s.IsInvalidArgument());
  EXPECT_NE(s.ToString().find("pmem_emulation"), std::string::npos);
}

// The model never returns before its modelled time (lower bounds only: a
// busy-wait may take longer on a loaded machine, never less).
TEST(NvmTimingTest, RandomReadsWaitAtLeastTheirLatency) {
  NvmTimingModel m;
  m.random_read_ns = 2000;
  NvmTiming timing(m);
  const auto start = Clock::now();
  for (int i = 0; i < 100; ++i) timing.ChargeRandomRead();
  EXPECT_GE(ElapsedNs(start), 100 * 2000.0);
}

TEST(NvmTimingTest, CountsTheRandomReadsCharged) {
  NvmTimingModel m;
  m.random_read_ns = 1;
  NvmTiming timing(m);
  EXPECT_EQ(timing.random_reads_charged(), 0u);
  for (int i = 0; i < 5; ++i) timing.ChargeRandomRead();
  EXPECT_EQ(timing.random_reads_charged(), 5u);
}

TEST(NvmTimingTest, PersistsPayPerLineAndPerUnitWhenDrained) {
  NvmTimingModel m;
  m.persist_line_ns = 1000;
  m.write_unit_ns = 3000;
  NvmTiming timing(m);
  auto base = std::make_unique<CountingRegion>();
  CountingRegion* counts = base.get();
  TimingRegion region(std::move(base), &timing);
  alignas(256) static char buffer[4096];
  // 512 aligned bytes: 8 lines, 2 units = 14 us.
  region.Flush(buffer, 512);
  auto start = Clock::now();
  region.Drain();
  EXPECT_GE(ElapsedNs(start), 8 * 1000.0 + 2 * 3000.0);
  EXPECT_EQ(counts->flushed, 512u);
  EXPECT_EQ(counts->drains, 1);
  // 80 bytes from offset 250 are 3 lines in 2 units.
  start = Clock::now();
  region.Persist(buffer + 250, 80);
  EXPECT_GE(ElapsedNs(start), 3 * 1000.0 + 2 * 3000.0);
  char src[300] = {};
  start = Clock::now();
  region.MemcpyNoDrain(buffer + 1024, src, sizeof(src));
  region.Drain();
  EXPECT_GE(ElapsedNs(start), 5 * 1000.0 + 2 * 3000.0);
}

TEST(NvmTimingTest, BandwidthCapSerialisesWriteUnits) {
  NvmTimingModel m;
  m.write_bandwidth_bytes_per_sec = 256e6;  // one 256-byte unit per microsecond
  NvmTiming timing(m);
  static std::vector<char> buffer(1 << 20);
  const auto start = Clock::now();
  for (int i = 0; i < 4; ++i) timing.ChargePersist(buffer.data() + i * (256 << 10), 256 << 10);
  // 4 x 1024 units at 1 us each.
  EXPECT_GE(ElapsedNs(start), 4096 * 1000.0);
}

TEST(NvmTimingTest, ReadBandwidthCapSerialisesReadsAndCountsTheirBytes) {
  NvmTimingModel m;
  m.read_bandwidth_bytes_per_sec = 1e9;  // one byte per nanosecond
  NvmTiming timing(m);
  const auto start = Clock::now();
  for (int i = 0; i < 4; ++i) timing.ChargeSequentialRead(250000);
  EXPECT_GE(ElapsedNs(start), 1e6);
  EXPECT_EQ(timing.sequential_read_bytes_charged(), 1000000u);
  // Without a read cap a read is free and not counted.
  NvmTiming uncapped(NvmTimingModel{});
  uncapped.ChargeSequentialRead(1 << 20);
  EXPECT_EQ(uncapped.sequential_read_bytes_charged(), 0u);
}

TEST(NvmTimingTest, DatabaseWorksUnderTheOptaneModel) {
  test::ScratchDir dir;
  Options options = test::SmallOptions();
  options.nvm_timing = NvmTimingModel::Optane();
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path() + "/db", &db).ok());
  for (int i = 0; i < 3000; ++i) {
    ASSERT_TRUE(db->Put(WriteOptions(), "key" + std::to_string(i), std::string(100, 'v')).ok());
  }
  std::string value;
  ASSERT_TRUE(db->Get(ReadOptions(), "key17", &value).ok());
  EXPECT_EQ(value, std::string(100, 'v'));
  std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
  int n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  EXPECT_EQ(n, 3000);
  std::string device;
  ASSERT_TRUE(db->GetProperty("jigsaw.pmem-device", &device));
  EXPECT_NE(device.find("emulated pmem (tmpfs)) with an NVM timing model"), std::string::npos) << device;
}

}  // namespace
}  // namespace jigsaw::pmem
