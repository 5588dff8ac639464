#include "src/wal.h"

#include <gtest/gtest.h>

#include <filesystem>

#include <cstring>
#include <string>
#include <vector>

#include "tests/block_test_util.h"
#include "tests/db_test_util.h"

namespace jigsaw {
namespace {

// A region over ordinary memory that counts persisted bytes.
class CountingRegion : public pmem::Region {
 public:
  bool is_pmem() const override { return true; }
  void Flush(const void*, size_t len) override { flushed += len; }
  void Drain() override { ++drains; }
  void MemcpyNoDrain(void* dest, const void* src, size_t len) override { std::memcpy(dest, src, len); }
  size_t flushed = 0;
  int drains = 0;
};

std::vector<std::string> ReadAll(const char* segment, uint64_t capacity, uint64_t number, Status* status,
                                 uint64_t* end = nullptr) {
  std::vector<std::string> records;
  uint64_t end_offset = 0;
  *status = ReadWalSegment(
      segment, capacity, number,
      [&](const Slice& r) {
        records.push_back(r.ToString());
        return Status::OK();
      },
      &end_offset);
  if (end != nullptr) *end = end_offset;
  return records;
}

TEST(WalTest, AppendAndReadBack) {
  const uint64_t capacity = 64 << 10;
  test::AlignedBuffer segment(capacity);
  CountingRegion region;
  WalWriter::Format(&region, segment.data(), capacity, 9);
  WalWriter writer(&region, segment.data(), capacity, 9);
  std::vector<std::string> written;
  for (int i = 0; i < 100; ++i) {
    written.push_back(std::string(static_cast<size_t>(1 + i * 13 % 300), static_cast<char>('a' + i % 26)));
    ASSERT_TRUE(writer.HasRoom(written.back().size()));
    ASSERT_TRUE(writer.Append(written.back(), /*sync=*/i % 10 == 0).ok());
  }
  EXPECT_EQ(region.drains, 1 + 10);  // the header, then every sync
  Status s;
  uint64_t end = 0;
  EXPECT_EQ(ReadAll(segment.data(), capacity, 9, &s, &end), written);
  ASSERT_TRUE(s.ok()) << s.ToString();
  // A writer reopened at the end continues the segment.
  WalWriter more(&region, segment.data(), capacity, 9, end);
  ASSERT_TRUE(more.Append("tail", true).ok());
  written.push_back("tail");
  EXPECT_EQ(ReadAll(segment.data(), capacity, 9, &s), written);
}

TEST(WalTest, TornOrForeignTailEndsTheSegment) {
  const uint64_t capacity = 16 << 10;
  test::AlignedBuffer segment(capacity);
  CountingRegion region;
  WalWriter::Format(&region, segment.data(), capacity, 3);
  WalWriter writer(&region, segment.data(), capacity, 3);
  ASSERT_TRUE(writer.Append("first", true).ok());
  ASSERT_TRUE(writer.Append("second record", true).ok());
  ASSERT_TRUE(writer.Append("third", true).ok());
  // Damage the payload of the second record: reading stops before it.
  const uint64_t second = kWalHeaderSize + WalRecordSize(5);
  segment.data()[second + kWalRecordHeaderSize + 2] ^= 1;
  Status s;
  EXPECT_EQ(ReadAll(segment.data(), capacity, 3, &s), std::vector<std::string>{"first"});
  EXPECT_TRUE(s.ok());
  // Records of another segment number never replay.
  EXPECT_TRUE(ReadAll(segment.data(), capacity, 4, &s).empty());
  EXPECT_TRUE(s.IsCorruption());
  // A segment without a header is corrupt.
  test::AlignedBuffer blank(capacity);
  ReadAll(blank.data(), capacity, 3, &s);
  EXPECT_TRUE(s.IsCorruption());
}

TEST(WalTest, FullSegmentRefusesRecords) {
  const uint64_t capacity = kWalHeaderSize + 64;
  test::AlignedBuffer segment(capacity);
  CountingRegion region;
  WalWriter::Format(&region, segment.data(), capacity, 1);
  WalWriter writer(&region, segment.data(), capacity, 1);
  EXPECT_TRUE(writer.HasRoom(56));
  EXPECT_FALSE(writer.HasRoom(57));
}

// Disk-only mode: the same records in a log file.
TEST(WalTest, LogFileAppendsSyncsAndReadsBackUpToATornTail) {
  test::ScratchDir dir;
  const std::string path = dir.path() + "/000005.log";
  std::unique_ptr<FileWalWriter> writer;
  ASSERT_TRUE(FileWalWriter::Create(FileSystem::Default(), path, 5, &writer).ok());
  std::vector<std::string> written;
  for (int i = 0; i < 50; ++i) {
    written.push_back(std::string(static_cast<size_t>(1 + i * 37 % 500), static_cast<char>('a' + i % 26)));
    ASSERT_TRUE(writer->Append(written.back(), /*sync=*/i % 7 == 0).ok());
  }
  ASSERT_TRUE(writer->Sync().ok());
  EXPECT_EQ(writer->syncs(), 8u);  // i = 0, 7, ..., 49, then the final Sync
  writer.reset();
  auto read = [&](uint64_t number, Status* status) {
    std::vector<std::string> records;
    *status = ReadWalFile(FileSystem::Default(), path, number, [&](const Slice& r) {
      records.push_back(r.ToString());
      return Status::OK();
    });
    return records;
  };
  Status s;
  EXPECT_EQ(read(5, &s), written);
  EXPECT_TRUE(s.ok()) << s.ToString();
  // A torn last record: everything before it replays.
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 10);  // into the payload
  written.pop_back();
  EXPECT_EQ(read(5, &s), written);
  EXPECT_TRUE(s.ok());
  // Another number's log is refused; a missing log is Corruption.
  read(6, &s);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  std::filesystem::remove(path);
  read(5, &s);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
}

}  // namespace
}  // namespace jigsaw
