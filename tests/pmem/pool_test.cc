#include "pmem/pool.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "tests/support/db_test_util.h"

namespace jigsaw {
namespace {

pmem::PoolOptions Options(const std::string& path) {
  pmem::PoolOptions o;
  o.path = path;
  o.size = 32 << 20;
  o.create_if_missing = true;
  o.comparator_name = "jigsaw.BytewiseComparator";
  return o;
}

TEST(PoolTest, CommitIsAtomicAndSurvivesReopen) {
  test::ScratchDir dir;
  const std::string path = dir.path() + "/pool";
  uint64_t offset = 0;
  {
    std::unique_ptr<pmem::Pool> pool;
    ASSERT_TRUE(pmem::Pool::Open(Options(path), &pool).ok());
    EXPECT_TRUE(pool->created());
    EXPECT_EQ(pool->manifest_offset(), 0u);
    pmem::Reservation r;
    ASSERT_TRUE(pool->Reserve(pmem::ObjectType::kManifest, 100, false, &r).ok());
    EXPECT_GE(pool->ObjectSize(r.offset), 100u);
    std::memcpy(r.data, "hello", 6);
    pool->region()->Persist(r.data, 6);
    // Reserved but not committed: not an object yet.
    EXPECT_TRUE(pool->Objects(pmem::ObjectType::kManifest).empty());
    ASSERT_TRUE(pool->Commit({&r}, r.offset, {}).ok());
    offset = r.offset;
    EXPECT_EQ(pool->manifest_offset(), offset);
    EXPECT_EQ(pool->Objects(pmem::ObjectType::kManifest), std::vector<uint64_t>{offset});
    // A reservation that is dropped leaves nothing behind.
    pmem::Reservation dropped;
    ASSERT_TRUE(pool->Reserve(pmem::ObjectType::kBlock, 1000, true, &dropped).ok());
    pool->Cancel(&dropped);
  }
  std::unique_ptr<pmem::Pool> pool;
  pmem::PoolOptions reopen = Options(path);
  reopen.create_if_missing = false;
  ASSERT_TRUE(pmem::Pool::Open(reopen, &pool).ok());
  EXPECT_FALSE(pool->created());
  EXPECT_EQ(pool->manifest_offset(), offset);
  EXPECT_STREQ(pool->Direct(offset), "hello");
  EXPECT_TRUE(pool->Objects(pmem::ObjectType::kBlock).empty());
  // Commit that replaces the manifest and frees the old one.
  pmem::Reservation next;
  ASSERT_TRUE(pool->Reserve(pmem::ObjectType::kManifest, 100, false, &next).ok());
  ASSERT_TRUE(pool->Commit({&next}, next.offset, {offset}).ok());
  EXPECT_EQ(pool->Objects(pmem::ObjectType::kManifest), std::vector<uint64_t>{next.offset});
}

// An object reserved to be written (not zeroed) has its pages made
// writable ahead, once per 256 KiB span of the pool in a process: reserving
// the same space again adds none; a zeroed object (written by libpmemobj)
// none. What is written reads back either way.
// Pools opened and closed on several threads at once, each open inspecting
// its pool in a forked child first: a child forked while another thread
// was inside libpmemobj once inherited a libpmemobj mutex locked by a
// thread it does not have and waited forever (the test then hangs until
// ctest's timeout); and an inspection's copy-on-write setting, which is
// process-wide, could apply to another thread's open, whose writes then
// never reached the file.
TEST(PoolTest, PoolsOpenedAndClosedOnSeveralThreadsAtOnce) {
  test::ScratchDir dir;
  constexpr int kThreads = 4;
  constexpr int kRounds = 25;
  std::vector<std::thread> threads;
  std::vector<std::string> failures(kThreads);
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      const std::string path = dir.path() + "/pool" + std::to_string(t);
      for (int round = 0; round < kRounds && failures[t].empty(); round++) {
        std::unique_ptr<pmem::Pool> pool;
        Status s = pmem::Pool::Open(Options(path), &pool);
        if (!s.ok()) {
          failures[t] = "round " + std::to_string(round) + ": " + s.ToString();
          break;
        }
        // The last round's commit must be in the file when the pool reopens.
        if (round > 0) {
          const char* text = pool->Direct(pool->manifest_offset());
          if (std::string(text) != "round " + std::to_string(round - 1)) {
            failures[t] = "round " + std::to_string(round) + " found \"" + text + "\"";
            break;
          }
        }
        pmem::Reservation r;
        const std::string text = "round " + std::to_string(round);
        s = pool->Reserve(pmem::ObjectType::kManifest, 64, true, &r);
        if (s.ok()) {
          std::memcpy(r.data, text.c_str(), text.size() + 1);
          pool->region()->Persist(r.data, text.size() + 1);
          const uint64_t old_manifest = pool->manifest_offset();
          s = pool->Commit({&r}, r.offset, old_manifest != 0 ? std::vector<uint64_t>{old_manifest}
                                                             : std::vector<uint64_t>{});
        }
        if (!s.ok()) failures[t] = "round " + std::to_string(round) + ": " + s.ToString();
      }
    });
  }
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; t++) EXPECT_EQ(failures[t], "") << "thread " << t;
}

TEST(PoolTest, ReservedSpaceIsPopulatedOncePerProcess) {
  test::ScratchDir dir;
  std::unique_ptr<pmem::Pool> pool;
  ASSERT_TRUE(pmem::Pool::Open(Options(dir.path() + "/pool"), &pool).ok());
  const uint64_t before = pool->populated_chunks();
  pmem::Reservation zeroed;
  ASSERT_TRUE(pool->Reserve(pmem::ObjectType::kWalSegment, 1 << 20, /*zero=*/true, &zeroed).ok());
  EXPECT_EQ(pool->populated_chunks(), before);
  pool->Cancel(&zeroed);

  pmem::Reservation block;
  ASSERT_TRUE(pool->Reserve(pmem::ObjectType::kBlock, 2 << 20, /*zero=*/false, &block).ok());
  const uint64_t after = pool->populated_chunks();
  EXPECT_GE(after, before + 8);   // 2 MiB spans at least 8 spans
  EXPECT_LE(after, before + 9);   // and at most 9
  std::memset(block.data, 0x5a, 2 << 20);
  EXPECT_EQ(static_cast<unsigned char>(block.data[(2 << 20) - 1]), 0x5a);
  const uint64_t offset = block.offset;
  pool->Cancel(&block);

  pmem::Reservation again;
  ASSERT_TRUE(pool->Reserve(pmem::ObjectType::kBlock, 2 << 20, /*zero=*/false, &again).ok());
  EXPECT_EQ(again.offset, offset);  // the same space, handed out again
  EXPECT_EQ(pool->populated_chunks(), after);
  pool->Cancel(&again);
}

TEST(PoolTest, RefusesBadOptionsForeignFilesAndOtherComparators) {
  test::ScratchDir dir;
  const std::string path = dir.path() + "/pool";
  std::unique_ptr<pmem::Pool> pool;
  pmem::PoolOptions o = Options(path);
  o.create_if_missing = false;
  EXPECT_TRUE(pmem::Pool::Open(o, &pool).IsInvalidArgument());
  o = Options(path);
  o.size = 1 << 20;
  EXPECT_TRUE(pmem::Pool::Open(o, &pool).IsInvalidArgument());
  o = Options("");
  EXPECT_TRUE(pmem::Pool::Open(o, &pool).IsInvalidArgument());
  ASSERT_TRUE(pmem::Pool::Open(Options(path), &pool).ok());
  pool.reset();
  o = Options(path);
  o.comparator_name = "other";
  EXPECT_TRUE(pmem::Pool::Open(o, &pool).IsInvalidArgument());
  o = Options(path);
  o.error_if_exists = true;
  EXPECT_TRUE(pmem::Pool::Open(o, &pool).IsInvalidArgument());
  const std::string foreign = dir.path() + "/foreign";
  std::ofstream(foreign) << std::string(1 << 20, 'x');
  EXPECT_TRUE(pmem::Pool::Open(Options(foreign), &pool).IsCorruption());
}

TEST(PoolTest, PersistenceFollowsTheEmulationOption) {
  test::ScratchDir shm;  // tmpfs
  std::unique_ptr<pmem::Pool> pool;
  pmem::PoolOptions o = Options(shm.path() + "/auto");
  ASSERT_TRUE(pmem::Pool::Open(o, &pool).ok());
  EXPECT_EQ(pool->persistence(), "emulated pmem (tmpfs)");
  EXPECT_TRUE(pool->region()->is_pmem());
  EXPECT_EQ(pool->timing(), nullptr);
  o = Options(shm.path() + "/off");
  o.emulation = PmemEmulation::kOff;
  ASSERT_TRUE(pmem::Pool::Open(o, &pool).ok());
  EXPECT_EQ(pool->persistence(), "msync");
  EXPECT_FALSE(pool->region()->is_pmem());

  // A disk filesystem (the working directory's): msync unless forced.
  const std::string disk_dir = std::filesystem::current_path() / ("pool-test-" + std::to_string(::getpid()));
  std::filesystem::create_directories(disk_dir);
  o = Options(disk_dir + "/auto");
  ASSERT_TRUE(pmem::Pool::Open(o, &pool).ok());
  const bool disk_is_tmpfs = pool->persistence() == "emulated pmem (tmpfs)";
  if (!disk_is_tmpfs) {
    EXPECT_EQ(pool->persistence(), "msync");
  }
  o = Options(disk_dir + "/forced");
  o.emulation = PmemEmulation::kForce;
  o.timing = NvmTimingModel::Optane();
  ASSERT_TRUE(pmem::Pool::Open(o, &pool).ok());
  if (!disk_is_tmpfs) {
    EXPECT_EQ(pool->persistence(), "emulated pmem (forced)");
  }
  EXPECT_TRUE(pool->region()->is_pmem());
  ASSERT_NE(pool->timing(), nullptr);
  EXPECT_EQ(pool->timing()->model().random_read_ns, 205);
  pool.reset();
  std::filesystem::remove_all(disk_dir);
}

TEST(PoolTest, PathThatCannotBeMappedIsInvalidArgument) {
  std::unique_ptr<pmem::Pool> pool;
  // procfs files cannot be mapped; /dev/null is a character device but not
  // device DAX.
  for (const char* path : {"/proc/self/comm", "/dev/null"}) {
    pmem::PoolOptions o = Options(path);
    const Status s = pmem::Pool::Open(o, &pool);
    EXPECT_TRUE(s.IsInvalidArgument()) << path << ": " << s.ToString();
    EXPECT_NE(s.ToString().find("pmem_path"), std::string::npos) << s.ToString();
  }
}

TEST(PoolTest, FullPoolIsNoSpace) {
  test::ScratchDir dir;
  std::unique_ptr<pmem::Pool> pool;
  pmem::PoolOptions o = Options(dir.path() + "/pool");
  o.size = 16 << 20;
  ASSERT_TRUE(pmem::Pool::Open(o, &pool).ok());
  std::vector<pmem::Reservation> reservations(200);
  Status s;
  size_t n = 0;
  for (; n < reservations.size(); ++n) {
    s = pool->Reserve(pmem::ObjectType::kBlock, 1 << 20, false, &reservations[n]);
    if (!s.ok()) break;
  }
  EXPECT_TRUE(s.IsNoSpace()) << s.ToString();
  EXPECT_GT(n, 5u);
  for (size_t i = 0; i < n; ++i) pool->Cancel(&reservations[i]);
  EXPECT_TRUE(pool->Reserve(pmem::ObjectType::kBlock, 1 << 20, false, &reservations[0]).ok());
}

}  // namespace
}  // namespace jigsaw

#include <libpmemobj.h>

namespace jigsaw {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(PoolTest, NewerFormatVersionIsNotSupportedAndFileUntouched) {
  test::ScratchDir dir;
  const std::string path = dir.path() + "/pool";
  {
    std::unique_ptr<pmem::Pool> pool;
    ASSERT_TRUE(pmem::Pool::Open(Options(path), &pool).ok());
  }
  {
    // A future JigsawDB wrote this pool: bump the root's format version.
    PMEMobjpool* pop = pmemobj_open(path.c_str(), pmem::Pool::kLayout);
    ASSERT_NE(pop, nullptr);
    char* root = static_cast<char*>(pmemobj_direct(pmemobj_root(pop, 256)));
    uint32_t version = pmem::Pool::kFormatVersion + 1;
    pmemobj_memcpy_persist(pop, root + 8, &version, sizeof(version));
    pmemobj_close(pop);
  }
  const std::string before = ReadFile(path);
  std::unique_ptr<pmem::Pool> pool;
  Status s = pmem::Pool::Open(Options(path), &pool);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
  EXPECT_NE(s.message().find("version 2"), std::string::npos) << s.ToString();
  EXPECT_TRUE(ReadFile(path) == before) << "opening a newer pool modified it";
}

// The offsets below are libpmemobj's on-media layout (PMDK 1.12, pool
// major version 6): the pool descriptor follows the 4 KiB pool header and
// the 1 KiB layout name; each 3 KiB lane begins with its internal redo log:
// a 64-byte header (checksum, next, capacity, ...), then 192 bytes of
// entries.
TEST(PoolTest, PoolWhoseLaneLogLeadsOutsideTheFileIsCorruptionNotACrash) {
  test::ScratchDir dir;
  const std::string path = dir.path() + "/pool";
  {
    std::unique_ptr<pmem::Pool> pool;
    ASSERT_TRUE(pmem::Pool::Open(Options(path), &pool).ok());
  }
  std::string bytes = ReadFile(path);
  uint64_t lanes_offset = 0, heap_offset = 0;
  std::memcpy(&lanes_offset, bytes.data() + 4096 + 1024, 8);
  std::memcpy(&heap_offset, bytes.data() + 4096 + 1024 + 16, 8);
  ASSERT_LT(lanes_offset + 3072, bytes.size());
  // Lane 0's internal redo log, which pmemobj_open checks entry by entry:
  // fill it with valid entries (a store of 0 into the heap), so that the
  // check follows its `next` offset, and point that far past the file.
  char* log = bytes.data() + lanes_offset;
  const uint64_t next = uint64_t{1} << 44;
  std::memcpy(log + 8, &next, 8);
  uint64_t capacity = 0;
  std::memcpy(&capacity, log + 16, 8);
  ASSERT_EQ(capacity, 192u);
  for (uint64_t entry = 0; entry < capacity / 16; ++entry) {
    const uint64_t target = heap_offset + 4096, value = 0;
    std::memcpy(log + 64 + entry * 16, &target, 8);
    std::memcpy(log + 64 + entry * 16 + 8, &value, 8);
  }
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  pmem::Pool::Facts facts;
  Status s = pmem::Pool::Inspect(Options(path), &facts);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  std::unique_ptr<pmem::Pool> pool;
  s = pmem::Pool::Open(Options(path), &pool);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.ToString().find("damaged pool"), std::string::npos) << s.ToString();
  EXPECT_TRUE(ReadFile(path) == bytes) << "a refused pool was modified";
}

// Inspect forks a child; a thread allocating at that instant may hold an
// allocator lock the child then waits on for good (the sanitizers'
// allocator of clang 14 has no fork handlers). Every inspection still
// answers, with the pool's facts.
TEST(PoolTest, InspectionsWhileAnotherThreadAllocatesAllAnswer) {
  test::ScratchDir dir;
  const std::string path = dir.path() + "/pool";
  {
    std::unique_ptr<pmem::Pool> pool;
    ASSERT_TRUE(pmem::Pool::Open(Options(path), &pool).ok());
  }
  std::atomic<bool> stop{false};
  std::thread allocator([&] {
    std::vector<std::unique_ptr<char[]>> held(64);
    for (size_t i = 0; !stop.load(std::memory_order_relaxed); ++i) {
      held[i % held.size()].reset(new char[16 + (i * 7919) % 4096]);
    }
  });
  for (int round = 0; round < 40; ++round) {
    pmem::Pool::Facts facts;
    const Status s = pmem::Pool::Inspect(Options(path), &facts);
    ASSERT_TRUE(s.ok()) << "round " << round << ": " << s.ToString();
    EXPECT_FALSE(facts.locked) << "round " << round;
  }
  stop = true;
  allocator.join();
}

}  // namespace
}  // namespace jigsaw
