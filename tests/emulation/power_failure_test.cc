// The power-failure simulator (emulation/power_failure.h) and its harness
// run against the real engine.
#include "emulation/power_failure.h"

#include <fcntl.h>
#include <libpmem.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "emulation/power_failure_harness.h"
#include "tests/support/db_test_util.h"
#include "tests/support/fault_injection_fs.h"

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

// Counts, over many images, how line `line` of each came out: as the
// durable image had it (all zero), wholly `c`, or some words of each.
struct LineOutcomes {
  int absent = 0, whole = 0, torn = 0, other = 0;
  void Count(const std::vector<char>& image, int line, char c) {
    int words_c = 0, words_zero = 0;
    for (int word = 0; word < 8; ++word) {
      const char* w = image.data() + line * 64 + word * 8;
      if (std::all_of(w, w + 8, [c](char b) { return b == c; })) ++words_c;
      if (std::all_of(w, w + 8, [](char b) { return b == 0; })) ++words_zero;
    }
    if (words_zero == 8) {
      ++absent;
    } else if (words_c == 8) {
      ++whole;
    } else if (words_c + words_zero == 8) {
      ++torn;
    } else {
      ++other;
    }
  }
};

TEST_F(SimulatorTest, EarlyEvictionOffersDirtyLinesWholeOrByWords) {
  const std::string path = dir_.path() + "/file";
  MappedFile file(path);
  ArmOptions options;
  options.track_dirty_lines = true;
  ASSERT_TRUE(sim_.Arm(path, options).ok());
  EXPECT_EQ(sim_.evictable_at(0), 0u);
  char* p = file.base();
  std::memset(p, 'a', 64);  // line 0: stored, never flushed
  std::memset(p + 4 * 64, 'c', 64);
  pmem_persist(p + 4 * 64, 64);  // line 4: durable, nothing left to evict
  std::memset(p + 2 * 64, 'b', 64);
  pmem_persist(p + 2 * 64, 64);
  std::memset(p + 2 * 64, 'B', 64);  // line 2: stored again after its persist
  pmem_persist(p + 6 * 64, 64);      // a point that changes nothing
  sim_.Disarm();
  ASSERT_EQ(sim_.persist_points(), 3u);
  EXPECT_EQ(sim_.evictable_at(1), 1u);  // line 0
  EXPECT_EQ(sim_.evictable_at(2), 1u);  // line 0 (line 2 matched its image)
  EXPECT_EQ(sim_.evictable_at(3), 2u);  // lines 0 and 2
  EXPECT_EQ(sim_.evictable_contents(), 2u) << "an unchanged dirty line is logged once";

  PowerFailureSimulator::ImageCursor cursor(sim_);
  cursor.AdvanceTo(3);
  std::mt19937_64 rng(5);
  LineOutcomes line0, line2;
  for (int i = 0; i < 400; ++i) {
    const std::vector<char> image = cursor.ImageWithEarlyEviction(&rng);
    line0.Count(image, 0, 'a');
    // line 2 is durable as 'b'; eviction may put 'B' words over it
    std::vector<char> rebased = image;
    for (int b = 2 * 64; b < 3 * 64; ++b) rebased[b] = rebased[b] == 'b' ? 0 : rebased[b];
    line2.Count(rebased, 2, 'B');
    EXPECT_EQ(image[4 * 64], 'c');
    EXPECT_EQ(image[8 * 64], 0);
  }
  for (const LineOutcomes* o : {&line0, &line2}) {
    EXPECT_GT(o->absent, 0);
    EXPECT_GT(o->whole, 0);
    EXPECT_GT(o->torn, 0);
    EXPECT_EQ(o->other, 0) << "an 8-byte word is never torn";
  }
  EXPECT_EQ(cursor.image()[0], 0) << "the durable image itself never holds unflushed data";
}

TEST_F(SimulatorTest, LinesAnotherThreadFlushedAndHasNotDrainedAreEvictable) {
  const std::string path = dir_.path() + "/file";
  MappedFile file(path);
  ArmOptions options;
  options.track_dirty_lines = true;
  ASSERT_TRUE(sim_.Arm(path, options).ok());
  char* p = file.base();
  std::thread([p] {
    std::memset(p + 8 * 64, 'f', 64);
    pmem_flush(p + 8 * 64, 64);  // never drained by this thread
  }).join();
  pmem_persist(p, 64);  // this thread's fence does not cover the other's flush
  sim_.Disarm();
  ASSERT_EQ(sim_.persist_points(), 1u);
  EXPECT_EQ(sim_.lines_at(1), 1u);
  EXPECT_EQ(sim_.evictable_at(1), 1u);
  PowerFailureSimulator::ImageCursor cursor(sim_);
  cursor.AdvanceTo(1);
  EXPECT_EQ(cursor.image()[8 * 64], 0);
  std::mt19937_64 rng(1);
  bool seen = false;
  for (int i = 0; i < 50 && !seen; ++i) seen = cursor.ImageWithEarlyEviction(&rng)[8 * 64] == 'f';
  EXPECT_TRUE(seen);
}

TEST_F(SimulatorTest, ExternalPointsSampleTheirLabelsAndMakeNoLineDurable) {
  const std::string path = dir_.path() + "/file";
  MappedFile file(path);
  uint64_t events = 3;
  ArmOptions options;
  options.file_events = [&events] { return events; };
  ASSERT_TRUE(sim_.Arm(path, options).ok());
  std::memset(file.base(), 'e', 64);
  pmem_flush(file.base(), 64);
  events = 4;
  sim_.AddExternalPoint();  // not a fence: the flushed line stays pending
  pmem_drain();
  sim_.Disarm();
  ASSERT_EQ(sim_.persist_points(), 2u);
  EXPECT_EQ(sim_.external_points(), 1u);
  EXPECT_EQ(sim_.file_events_at(0), 3u);
  EXPECT_EQ(sim_.file_events_at(1), 4u);
  EXPECT_EQ(sim_.lines_at(1), 0u);
  EXPECT_EQ(sim_.lines_at(2), 1u);
}

// A store overwritten before it was ever flushed may still have reached the
// medium: the early-eviction images hold it, the flush-based ones never do.
TEST_F(SimulatorTest, EarlyEvictionExposesAStoreOverwrittenBeforeItsFlush) {
  const std::string path = dir_.path() + "/file";
  MappedFile file(path);
  ArmOptions options;
  options.track_dirty_lines = true;
  ASSERT_TRUE(sim_.Arm(path, options).ok());
  char* p = file.base();
  const uint64_t tentative = 0xAAAAAAAAAAAAAAAAull, final_value = 0xBBBBBBBBBBBBBBBBull;
  std::memcpy(p + 64, &tentative, 8);  // meant never to be durable
  pmem_persist(p + 640, 64);           // some other fence meanwhile
  std::memcpy(p + 64, &final_value, 8);
  pmem_persist(p + 64, 64);
  sim_.Disarm();
  ASSERT_EQ(sim_.persist_points(), 2u);
  auto word = [](const std::vector<char>& image) {
    uint64_t w = 0;
    std::memcpy(&w, image.data() + 64, 8);
    return w;
  };
  PowerFailureSimulator::ImageCursor cursor(sim_);
  std::mt19937_64 rng(7);
  bool evicted = false;
  for (size_t point = 0; point <= 2; ++point) {
    cursor.AdvanceTo(point);
    EXPECT_NE(word(cursor.image()), tentative);
    for (int i = 0; i < 100; ++i) {
      if (point < 2) {
        EXPECT_NE(word(cursor.ImageWithPartialNextPoint(&rng)), tentative);
      }
      evicted |= word(cursor.ImageWithEarlyEviction(&rng)) == tentative;
    }
  }
  EXPECT_TRUE(evicted);
}

// The fault-injection file system as a crash model (tests/support/fault_injection_fs.h).
class FileCrashModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.path() + "/db";
    std::filesystem::create_directories(db_);
    Write(db_ + "/old", "x");
    Write(db_ + "/pool", "not journaled");
  }
  static void Write(const std::string& path, const std::string& data) {
    std::ofstream(path, std::ios::binary) << data;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static void Append(WritableFile* f, const std::string& data) { ASSERT_TRUE(f->Append(data).ok()); }
  // The files a crash after `events` events leaves, by name.
  std::map<std::string, std::string> CrashState(uint64_t events, std::mt19937_64* rng) {
    const std::string out = dir_.path() + "/out";
    std::filesystem::remove_all(out);
    std::filesystem::create_directories(out);
    EXPECT_TRUE(fs_.WriteCrashState(events, out, rng).ok());
    std::map<std::string, std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(out)) {
      files[entry.path().filename().string()] = Read(entry.path().string());
    }
    return files;
  }

  test::ScratchDir dir_;
  std::string db_;
  test::FaultInjectionFileSystem fs_;
};

TEST_F(FileCrashModelTest, StrictStateHoldsTheSyncedBytesOfSyncedEntries) {
  int durability_events = 0;
  fs_.SetDurabilityListener([&durability_events] { ++durability_events; });
  ASSERT_TRUE(fs_.StartJournal(db_, {"pool"}).ok());
  const uint64_t start = fs_.JournalEvents();
  std::unique_ptr<WritableFile> a, b, c;
  ASSERT_TRUE(fs_.NewWritableFile(db_ + "/a", &a).ok());
  Append(a.get(), "aaaa");
  ASSERT_TRUE(a->Sync().ok());
  const uint64_t before_dir_sync = fs_.JournalEvents();
  ASSERT_TRUE(fs_.SyncDir(db_).ok());
  Append(a.get(), "bbbb");  // never synced
  ASSERT_TRUE(fs_.NewWritableFile(db_ + "/c", &c).ok());
  Append(c.get(), "c");
  ASSERT_TRUE(fs_.SyncDir(db_).ok());  // entry synced, data never
  ASSERT_TRUE(fs_.NewWritableFile(db_ + "/b", &b).ok());
  Append(b.get(), "b");
  ASSERT_TRUE(b->Sync().ok());  // data synced, entry never
  ASSERT_TRUE(fs_.RemoveFile(db_ + "/old").ok());  // not yet durable: strict states drop it anyway
  fs_.StopJournal();
  EXPECT_EQ(durability_events, 5);  // two syncs, two directory syncs, one removal

  using Files = std::map<std::string, std::string>;
  EXPECT_EQ(CrashState(start, nullptr), (Files{{"old", "x"}}));
  EXPECT_EQ(CrashState(before_dir_sync, nullptr), (Files{{"old", "x"}}));
  EXPECT_EQ(CrashState(before_dir_sync + 1, nullptr), (Files{{"a", "aaaa"}, {"old", "x"}}));
  EXPECT_EQ(CrashState(fs_.JournalEvents(), nullptr), (Files{{"a", "aaaa"}, {"c", ""}}));
}

TEST_F(FileCrashModelTest, RandomStatesKeepSyncedBytesAndVaryTheRest) {
  ASSERT_TRUE(fs_.StartJournal(db_, {"pool"}).ok());
  std::unique_ptr<WritableFile> a, b;
  ASSERT_TRUE(fs_.NewWritableFile(db_ + "/a", &a).ok());
  Append(a.get(), std::string(4096, 'a'));
  ASSERT_TRUE(a->Sync().ok());
  ASSERT_TRUE(fs_.SyncDir(db_).ok());
  Append(a.get(), std::string(8192, 'b'));
  ASSERT_TRUE(fs_.NewWritableFile(db_ + "/b", &b).ok());
  Append(b.get(), "b");
  ASSERT_TRUE(fs_.RemoveFile(db_ + "/old").ok());
  fs_.StopJournal();
  std::mt19937_64 rng(11);
  int a_synced_only = 0, a_whole = 0, a_prefix = 0, a_zeroed = 0, b_present = 0, old_back = 0;
  for (int i = 0; i < 200; ++i) {
    auto files = CrashState(fs_.JournalEvents(), &rng);
    ASSERT_EQ(files.count("a"), 1u);
    const std::string& got = files["a"];
    ASSERT_GE(got.size(), 4096u);
    ASSERT_EQ(got.substr(0, 4096), std::string(4096, 'a')) << "synced bytes are never lost";
    const std::string tail = got.substr(4096);
    if (tail.empty()) {
      ++a_synced_only;
    } else if (tail == std::string(8192, 'b')) {
      ++a_whole;
    } else if (tail.find('\0') != std::string::npos) {
      ++a_zeroed;
    } else {
      ++a_prefix;
    }
    b_present += files.count("b");
    if (files.count("old") != 0) {
      EXPECT_EQ(files["old"], "x");
      ++old_back;
    }
  }
  for (int count : {a_synced_only, a_whole, a_prefix, a_zeroed, b_present, old_back}) {
    EXPECT_GT(count, 0);
    EXPECT_LT(count, 200);
  }
}

// Workload sizes: the CI size by default, smaller under AddressSanitizer
// (about 3x slower per check), larger with JIGSAW_CRASH_FULL=1
// (docs/emulation.md).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

bool FullRun() {
  const char* full = std::getenv("JIGSAW_CRASH_FULL");
  return full != nullptr && std::strcmp(full, "0") != 0 && full[0] != '\0';
}

int Scaled(int ci, int asan, int full) { return FullRun() ? full : kAsan ? asan : ci; }

// JIGSAW_CRASH_SEED=n shifts every workload's seed by n: other batches,
// other interleavings, other random crash images.
uint64_t Seed(uint64_t seed) {
  const char* shift = std::getenv("JIGSAW_CRASH_SEED");
  return seed + (shift != nullptr ? std::strtoull(shift, nullptr, 10) : 0);
}

void ExpectNoFailures(const PowerFailureReport& report) {
  for (const std::string& f : report.failures) ADD_FAILURE() << f;
  EXPECT_EQ(report.failed_checks, 0u);
}

void Print(const char* name, const PowerFailureReport& report, double seconds) {
  std::printf(
      "%s: %zu persist points (%zu file-system events), %zu checks (%zu with reordered lines, %zu with early "
      "eviction or random file outcomes), at most %zu evictable lines at a point; %" PRIu64 " flushes, %" PRIu64
      " compactions, data down to L%d; %.1f s\n",
      name, report.persist_points, report.external_points, report.checks, report.reorder_checks,
      report.eviction_checks, report.max_evictable, report.flushes, report.compactions, report.deepest_level,
      seconds);
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
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
// recovery leaves a database with every acknowledged sync write (sampled:
// at most 300 points).
TEST(PowerFailureHarnessTest, EngineSurvivesPowerFailureAtPersistPoints) {
  test::ScratchDir dir;
  PowerFailureReport report;
  PowerFailureWorkload workload = SmallWorkload();
  workload.seed = Seed(workload.seed);
  workload.early_eviction = true;
  const auto start = std::chrono::steady_clock::now();
  const Status s = RunPowerFailureHarness(dir.path(), workload, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Print("sampled", report, SecondsSince(start));
  EXPECT_GT(report.persist_points, 100u);
  EXPECT_GT(report.checks, 200u);
  ExpectNoFailures(report);
}

// The every-point workload: 64 KiB memtables, L1 of 1 MiB, L0 compacted at
// two blocks; a flush every ~100 batches; waits for the background thread
// every 150; one update in 100 a range delete. The long run writes 8000 batches over 6000 keys (L1 outgrows
// its target: L1 -> L2 compactions) into a 32 MiB pool.
PowerFailureWorkload EveryPointWorkload(uint64_t seed) {
  PowerFailureWorkload w;
  w.options = test::TinyPoolOptions();
  if (FullRun()) w.options.pmem_pool_size = uint64_t{32} << 20;
  w.batches = Scaled(900, 500, 8000);
  w.batches_before_arming = 100;
  w.keys = Scaled(400, 400, 6000);
  w.value_size = 250;
  w.settle_every = Scaled(150, 100, 400);
  w.seed = Seed(seed);
  w.max_checks = 0;  // no limit
  w.early_eviction = true;
  w.range_delete_fraction = 0.01;
  return w;
}

// Every single persist point of a workload that flushes several memtables
// and compacts, each checked as it is, with the next point's lines partly
// durable, and with dirty lines evicted early.
TEST(PowerFailureHarnessTest, EveryPersistPointOfAFlushingAndCompactingWorkload) {
  test::ScratchDir dir;
  const PowerFailureWorkload workload = EveryPointWorkload(2);
  PowerFailureReport report;
  const auto start = std::chrono::steady_clock::now();
  const Status s = RunPowerFailureHarness(dir.path(), workload, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Print("every point, pmem", report, SecondsSince(start));
  EXPECT_GE(report.flushes, 3u);
  EXPECT_GE(report.compactions, 1u);
  EXPECT_GE(report.checks, report.persist_points + 1);
  EXPECT_GT(report.eviction_checks, 0u);
  EXPECT_GT(report.max_evictable, 0u);
  ExpectNoFailures(report);
}

// Hybrid mode: the same at every persist point, pmem's and the file
// system's (fsyncs, directory syncs, removals), with SSD tables rebuilt as a
// power failure leaves them -- unsynced data dropped, and in the randomised
// check any outcome a file system allows.
TEST(PowerFailureHarnessTest, EveryPersistPointOfAHybridWorkload) {
  test::ScratchDir dir;
  test::FaultInjectionFileSystem fs;
  PowerFailureWorkload workload = EveryPointWorkload(3);
  workload.options.storage_mode = StorageMode::kHybrid;
  workload.options.pmem_budget = 1 << 20;  // below L0's stop size: every compaction writes SSD tables
  workload.options.ssd_block_size = 4 << 10;
  workload.options.file_system = &fs;
  workload.files = &fs;
  PowerFailureReport report;
  const auto start = std::chrono::steady_clock::now();
  const Status s = RunPowerFailureHarness(dir.path(), workload, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  Print("every point, hybrid", report, SecondsSince(start));
  std::printf("hybrid: %zu files journaled, %" PRIu64 " bytes\n", fs.journal_files(), fs.journal_bytes());
  EXPECT_GE(report.flushes, 3u);
  EXPECT_GE(report.compactions, 1u);
  EXPECT_GT(report.external_points, 0u);
  EXPECT_GT(fs.journal_files(), 0u);
  EXPECT_GE(report.checks, report.persist_points + 1);
  ExpectNoFailures(report);
}

// The file side bites: with a device that drops flushes, tables the
// manifest names are lost in a power failure, and checks fail.
TEST(PowerFailureHarnessTest, HybridChecksCatchTablesThatNeverBecameDurable) {
  test::ScratchDir dir;
  test::FaultInjectionFileSystem fs;
  PowerFailureWorkload workload = EveryPointWorkload(4);
  workload.options.storage_mode = StorageMode::kHybrid;
  workload.options.pmem_budget = 1 << 20;
  workload.options.file_system = &fs;
  workload.files = &fs;
  workload.batches = 500;
  workload.max_checks = 60;
  workload.early_eviction = false;
  fs.SetSyncsLie(true);
  PowerFailureReport report;
  const Status s = RunPowerFailureHarness(dir.path(), workload, &report);
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::printf("%zu of %zu checks failed; first: %s\n", report.failed_checks, report.checks,
              report.failures.empty() ? "-" : report.failures[0].c_str());
  ASSERT_GE(report.compactions, 1u);
  EXPECT_GT(report.failed_checks, 0u);
}

}  // namespace
}  // namespace jigsaw::emulation
