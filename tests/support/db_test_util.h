// A scratch database on DRAM-emulated pmem (/dev/shm) for tests.
#ifndef JIGSAW_TESTS_DB_TEST_UTIL_H_
#define JIGSAW_TESTS_DB_TEST_UTIL_H_

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "jigsaw/db.h"

namespace jigsaw::test {

// ThreadSanitizer does not follow a siglongjmp out of a signal handler (its
// per-thread signal state is left behind, google/sanitizers#1759), so tests
// that fault a guarded mapped read (util/guarded_read.h) skip under it; the
// reads that do not fault run there like everywhere.
#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
inline constexpr bool kThreadSanitizer = true;
#else
inline constexpr bool kThreadSanitizer = false;
#endif
#else
inline constexpr bool kThreadSanitizer = false;
#endif
#define JIGSAW_SKIP_FAULTS_UNDER_TSAN() \
  if (::jigsaw::test::kThreadSanitizer) GTEST_SKIP() << "ThreadSanitizer cannot leave a signal handler by siglongjmp"

// A unique directory under /dev/shm (or $TMPDIR when /dev/shm is missing),
// removed with its contents on destruction.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    const std::filesystem::path base = std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
    path_ = (base / ("jigsaw-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++))).string();
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Small sizes so that tests exercise flushes and compactions quickly. Pool
// objects take whole 256 KiB chunks, so blocks are sized to fill about one.
inline Options SmallOptions() {
  Options options;
  options.create_if_missing = true;
  options.pmem_pool_size = uint64_t{128} << 20;
  options.memtable_size = 160 << 10;
  options.table_size = 200 << 10;
  options.level1_size = uint64_t{1} << 20;
  options.level0_compaction_trigger = 2;
  return options;
}

// SmallOptions in `mode`, with SSD levels below 2 MiB of pmem in hybrid
// mode.
inline Options SmallModeOptions(StorageMode mode) {
  Options options = SmallOptions();
  options.storage_mode = mode;
  options.pmem_budget = 2 << 20;
  return options;
}

// The smallest pool and memtables: crash simulations whose every persist
// point is checked stay short, yet flush and compact.
inline Options TinyPoolOptions() {
  Options options;
  options.pmem_pool_size = uint64_t{16} << 20;
  options.memtable_size = 64 << 10;
  options.table_size = 64 << 10;
  options.level1_size = 1 << 20;
  options.level0_compaction_trigger = 2;
  return options;
}

// Damages one byte of a file in place (XOR 0x5a).
inline void FlipByte(const std::string& path, std::streamoff offset) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(offset);
  char byte = 0;
  file.read(&byte, 1);
  byte = static_cast<char>(byte ^ 0x5a);
  file.seekp(offset);
  file.write(&byte, 1);
  EXPECT_TRUE(file.good()) << path;
}

// Key i of a test that writes keys in order: "key" and i in 10 digits.
inline std::string NumberedKey(uint64_t i) {
  char key[24];
  std::snprintf(key, sizeof(key), "key%010llu", static_cast<unsigned long long>(i));
  return key;
}
// The value such a test writes for key i.
inline std::string NumberedValue(uint64_t i) {
  return std::string(64, static_cast<char>('a' + i % 26)) + std::to_string(i);
}

// Every live pair of `db`, forwards; the iterator must end without error.
inline std::map<std::string, std::string> Contents(DB* db) {
  std::map<std::string, std::string> contents;
  std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) contents[it->key().ToString()] = it->value().ToString();
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return contents;
}

// A writer that Puts NumberedKey(i) -> NumberedValue(i) in order from
// sequence `base` gives key i sequence base + i + 1: `db`, at `sequence`,
// must hold exactly keys [0, sequence - base).
inline void ExpectNumberedPrefix(DB* db, uint64_t base, uint64_t sequence, const std::string& where) {
  ASSERT_GE(sequence, base) << where;
  const std::map<std::string, std::string> contents = Contents(db);
  ASSERT_EQ(contents.size(), sequence - base) << where;
  uint64_t i = 0;
  for (const auto& [key, value] : contents) {
    ASSERT_EQ(key, NumberedKey(i)) << where;
    ASSERT_EQ(value, NumberedValue(i)) << where;
    ++i;
  }
}

// Names a StorageMode test parameter (Pmem, Hybrid, Disk).
inline std::string ModeName(const ::testing::TestParamInfo<StorageMode>& info) {
  switch (info.param) {
    case StorageMode::kPmem:
      return "Pmem";
    case StorageMode::kHybrid:
      return "Hybrid";
    default:
      return "Disk";
  }
}

}  // namespace jigsaw::test

#endif  // JIGSAW_TESTS_DB_TEST_UTIL_H_
