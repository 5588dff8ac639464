// Media errors in the pool (util/guarded_read.h, pmem/pmem_table.h): pool
// pages that raise SIGBUS -- as a poisoned line of persistent memory does --
// make the reads that meet them a Corruption naming the block, the process
// lives, and the keys elsewhere (memtable, other blocks, SSD) stay readable.
// The fault is made by mapping an empty memory file over chosen pages of the
// pool's mapping (every page past a file's end raises SIGBUS), and undone by
// mapping the pool file back over them.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

#include "db/db_impl.h"
#include "jigsaw/db.h"
#include "tests/support/db_test_util.h"

namespace jigsaw {
namespace {

constexpr uintptr_t kPage = 4096;

// The file mapped at `address` in this process, from /proc/self/maps.
std::string MappedFile(const void* address) {
  std::ifstream maps("/proc/self/maps");
  const auto at = reinterpret_cast<uintptr_t>(address);
  for (std::string line; std::getline(maps, line);) {
    std::istringstream in(line);
    std::string range, perms, offset, device, inode, path;
    in >> range >> perms >> offset >> device >> inode >> path;
    const size_t dash = range.find('-');
    const uintptr_t begin = std::stoull(range.substr(0, dash), nullptr, 16);
    const uintptr_t end = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (at >= begin && at < end) return path;
  }
  return "";
}

// Makes the pages holding [data, data + size) of a pool mapping raise SIGBUS
// until destroyed, when the pool file is mapped back over them.
class PoisonedPages {
 public:
  // `pool_base`: where the pool file's byte 0 is mapped.
  PoisonedPages(const char* pool_base, const char* data, size_t size) {
    begin_ = reinterpret_cast<uintptr_t>(data) / kPage * kPage;
    const uintptr_t end = (reinterpret_cast<uintptr_t>(data) + size + kPage - 1) / kPage * kPage;
    bytes_ = end - begin_;
    file_offset_ = begin_ - reinterpret_cast<uintptr_t>(pool_base);
    pool_path_ = MappedFile(data);
    EXPECT_FALSE(pool_path_.empty());
    const int empty = memfd_create("jigsaw-poison", 0);
    EXPECT_GE(empty, 0);
    EXPECT_NE(mmap(reinterpret_cast<void*>(begin_), bytes_, PROT_READ, MAP_SHARED | MAP_FIXED, empty, 0), MAP_FAILED);
    close(empty);
  }
  ~PoisonedPages() {
    const int fd = open(pool_path_.c_str(), O_RDWR);
    EXPECT_GE(fd, 0) << pool_path_;
    EXPECT_NE(mmap(reinterpret_cast<void*>(begin_), bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
                   static_cast<off_t>(file_offset_)),
              MAP_FAILED);
    close(fd);
  }

 private:
  uintptr_t begin_ = 0;
  size_t bytes_ = 0;
  uintptr_t file_offset_ = 0;
  std::string pool_path_;
};

std::string Key(char prefix, int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%c%06d", prefix, i);
  return buf;
}

std::string Value(int i) { return std::string(200, static_cast<char>('a' + i % 26)) + std::to_string(i); }

class MediaErrorTest : public ::testing::TestWithParam<StorageMode> {};

TEST_P(MediaErrorTest, APoisonedBlockIsCorruptionAndTheRestStaysReadable) {
  JIGSAW_SKIP_FAULTS_UNDER_TSAN();
  test::ScratchDir dir;
  Options options = test::SmallModeOptions(GetParam());
  options.pmem_read_guard = PmemReadGuard::kAlways;  // on emulated pmem too
  options.read_triggered_compactions = false;  // no background reads of the poisoned block
  options.pmem_budget = uint64_t{64} << 20;      // hybrid: the recent levels stay in pmem
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  // 'a' keys compacted, 'm' keys in a level-0 pmem block, 'z' keys in the
  // memtable.
  constexpr int kTableKeys = 4000, kL0Keys = 1000, kMemKeys = 200;
  for (int i = 0; i < kTableKeys; ++i) ASSERT_TRUE(db->Put(WriteOptions(), Key('a', i), Value(i)).ok());
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  for (int i = 0; i < kL0Keys; ++i) ASSERT_TRUE(db->Put(WriteOptions(), Key('m', i), Value(i)).ok());
  auto* impl = static_cast<DBImpl*>(db.get());
  std::shared_ptr<const Version> version;
  for (int wait = 0; wait < 500 && (version == nullptr || version->levels[0].empty()); ++wait) {
    if (version != nullptr) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    version = impl->CurrentVersion();
  }
  ASSERT_FALSE(version->levels[0].empty()) << "no flush into level 0";
  for (int i = 0; i < kMemKeys; ++i) ASSERT_TRUE(db->Put(WriteOptions(), Key('z', i), Value(i)).ok());
  // Once the background work is done: the version stays the same a while.
  for (int still = 0; still < 30;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::shared_ptr<const Version> now = impl->CurrentVersion();
    still = now == version ? still + 1 : 0;
    version = std::move(now);
  }

  const TableMeta* victim = nullptr;
  size_t ssd_tables = 0;
  for (const auto& level : version->levels) {
    for (const TableRef& t : level) {
      if (t->residence != Residence::kPmem) {
        ++ssd_tables;
      } else if (victim == nullptr) {
        victim = t.get();
      }
    }
  }
  if (GetParam() == StorageMode::kHybrid) {
    EXPECT_GT(ssd_tables, 0u);
  }
  ASSERT_NE(victim, nullptr);
  const Slice contents = impl->PmemBlockContents(*victim);
  const std::string victim_name = "block " + std::to_string(victim->number);
  // Every table read once first: a block's first Get builds its hash index,
  // and a Get that faults while building it leaks what it had allocated
  // (util/guarded_read.h), which LeakSanitizer would report.
  for (const auto& [prefix, count] : {std::pair{'a', kTableKeys}, std::pair{'m', kL0Keys}}) {
    for (int i = 0; i < count; ++i) {
      std::string value;
      ASSERT_TRUE(db->Get(ReadOptions(), Key(prefix, i), &value).ok());
    }
  }
  {
    PoisonedPages poison(contents.data() - victim->offset, contents.data(), contents.size());

    // Every Get answers right or is a Corruption naming the poisoned block;
    // the keys outside it all answer.
    int faulted = 0;
    for (const auto& [prefix, count] : {std::pair{'a', kTableKeys}, std::pair{'m', kL0Keys}}) {
      for (int i = 0; i < count; ++i) {
        const std::string key = Key(prefix, i);
        std::string value;
        const Status s = db->Get(ReadOptions(), key, &value);
        if (s.IsCorruption()) {
          EXPECT_TRUE(key >= victim->smallest && key <= victim->largest) << key << ": " << s.ToString();
          EXPECT_NE(s.ToString().find(victim_name), std::string::npos) << s.ToString();
          ++faulted;
          continue;
        }
        ASSERT_TRUE(s.ok()) << key << ": " << s.ToString();
        EXPECT_EQ(value, Value(i));
      }
    }
    EXPECT_GT(faulted, 0);
    for (int i = 0; i < kMemKeys; ++i) {
      std::string value;
      ASSERT_TRUE(db->Get(ReadOptions(), Key('z', i), &value).ok());
      EXPECT_EQ(value, Value(i));
    }

    // A scan stops with the Corruption where it meets the block.
    std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
    int scanned = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) ++scanned;
    EXPECT_TRUE(it->status().IsCorruption()) << it->status().ToString();
    EXPECT_LT(scanned, kTableKeys + kL0Keys + kMemKeys);
    // Past the block, a seek reads on.
    it = db->NewIterator(ReadOptions());
    it->Seek(Key('z', 0));
    ASSERT_TRUE(it->Valid()) << it->status().ToString();
    EXPECT_EQ(it->key().ToString(), Key('z', 0));

    // Verification names the block and the unreadable stretch.
    const Status verified = db->VerifyIntegrity();
    EXPECT_TRUE(verified.IsCorruption()) << verified.ToString();
    EXPECT_NE(verified.ToString().find("unreadable pool memory at [0, "), std::string::npos) << verified.ToString();
    std::string levels;
    EXPECT_TRUE(db->GetProperty("jigsaw.levels", &levels));
  }

  // Readable again: everything is there, and stays there across a reopen.
  for (int pass = 0; pass < 2; ++pass) {
    for (int i = 0; i < kTableKeys; i += 7) {
      std::string value;
      ASSERT_TRUE(db->Get(ReadOptions(), Key('a', i), &value).ok());
      EXPECT_EQ(value, Value(i));
    }
    for (int i = 0; i < kL0Keys; ++i) {
      std::string value;
      ASSERT_TRUE(db->Get(ReadOptions(), Key('m', i), &value).ok());
      EXPECT_EQ(value, Value(i));
    }
    std::string value;
    ASSERT_TRUE(db->Get(ReadOptions(), Key('z', kMemKeys - 1), &value).ok());
    db.reset();
    ASSERT_TRUE(DB::Open(options, dir.path(), &db).ok());
  }
  EXPECT_TRUE(db->VerifyIntegrity().ok());
}

INSTANTIATE_TEST_SUITE_P(Modes, MediaErrorTest, ::testing::Values(StorageMode::kPmem, StorageMode::kHybrid),
                         [](const ::testing::TestParamInfo<StorageMode>& info) {
                           return info.param == StorageMode::kPmem ? std::string("Pmem") : std::string("Hybrid");
                         });

}  // namespace
}  // namespace jigsaw
