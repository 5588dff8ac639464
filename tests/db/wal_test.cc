#include "db/wal.h"

#include <gtest/gtest.h>

#include <filesystem>

#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "util/coding.h"
#include "util/memory_file.h"

#include "tests/support/block_test_util.h"
#include "tests/support/db_test_util.h"
#include "tests/support/forwarding_fs.h"

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
                                 WalReadResult* result = nullptr, WalDamage on_damage = WalDamage::kStop) {
  std::vector<std::string> records;
  WalReadResult read;
  *status = ReadWalSegment(
      segment, capacity, number, on_damage,
      [&](const Slice& r) {
        records.push_back(r.ToString());
        return Status::OK();
      },
      &read);
  if (result != nullptr) *result = read;
  return records;
}

// The same for a log file (through `fs`, `live` as ReadWalFile takes it).
std::vector<std::string> ReadAllFromFile(const std::string& path, uint64_t number, Status* status,
                                         WalReadResult* result, FileSystem* fs = FileSystem::Default(),
                                         bool live = false) {
  std::vector<std::string> records;
  *status = ReadWalFile(
      fs, path, number, WalDamage::kStop,
      [&](const Slice& r) {
        records.push_back(r.ToString());
        return Status::OK();
      },
      result, live);
  return records;
}

// A payload shaped like a WriteBatch (fixed64 sequence, fixed32 count,
// updates), as the search for intact records after damage expects.
std::string BatchPayload(uint64_t sequence, size_t size) {
  std::string payload(12 + size, static_cast<char>('a' + sequence % 26));
  EncodeFixed64(payload.data(), sequence);
  EncodeFixed32(payload.data() + 8, 1);
  if (size > 0) payload[12] = 1;  // a Put
  return payload;
}

// The offsets of a segment's first `n` records of the given payload sizes.
std::vector<uint64_t> RecordOffsets(const std::vector<std::string>& payloads) {
  std::vector<uint64_t> offsets;
  uint64_t offset = kWalHeaderSize;
  for (const std::string& p : payloads) {
    offsets.push_back(offset);
    offset += WalRecordSize(p.size());
  }
  offsets.push_back(offset);  // the end
  return offsets;
}

// Fills `segment` with pseudo-random bytes: what a pool object's space may
// hold before a segment is reserved there without zeroing.
void FillWithOldBytes(test::AlignedBuffer* segment, uint64_t seed) {
  std::mt19937_64 rng(seed);
  for (uint64_t p = 0; p + 8 <= segment->size(); p += 8) EncodeFixed64(segment->data() + p, rng());
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
  WalReadResult read;
  EXPECT_EQ(ReadAll(segment.data(), capacity, 9, &s, &read), written);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(read.damaged) << DescribeWalDamage(read);
  EXPECT_EQ(read.records, written.size());
  // A writer reopened at the end continues the segment.
  WalWriter more(&region, segment.data(), capacity, 9, read.end);
  ASSERT_TRUE(more.Append("tail", true).ok());
  written.push_back("tail");
  EXPECT_EQ(ReadAll(segment.data(), capacity, 9, &s), written);
}

TEST(WalTest, DamagedRecordStopsTheReadAndIsReported) {
  const uint64_t capacity = 16 << 10;
  test::AlignedBuffer segment(capacity);
  CountingRegion region;
  WalWriter::Format(&region, segment.data(), capacity, 3);
  WalWriter writer(&region, segment.data(), capacity, 3);
  const std::vector<std::string> payloads = {BatchPayload(1, 5), BatchPayload(2, 13), BatchPayload(3, 5)};
  for (const std::string& p : payloads) ASSERT_TRUE(writer.Append(p, true).ok());
  const std::vector<uint64_t> at = RecordOffsets(payloads);
  // Damage the payload of the second record: reading stops before it, and
  // reports it with the intact third record after it.
  segment.data()[at[1] + kWalRecordHeaderSize + 2] ^= 1;
  Status s;
  WalReadResult read;
  EXPECT_EQ(ReadAll(segment.data(), capacity, 3, &s, &read), std::vector<std::string>{payloads[0]});
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(read.damaged);
  EXPECT_EQ(read.damage, "bad CRC");
  EXPECT_EQ(read.damage_offset, at[1]);
  EXPECT_EQ(read.next_intact_offset, at[2]);
  EXPECT_EQ(read.end, at[1]);
  // The search after damage knows a batch that starts with a range delete.
  {
    test::AlignedBuffer other(capacity);
    WalWriter::Format(&region, other.data(), capacity, 3);
    WalWriter other_writer(&region, other.data(), capacity, 3);
    std::string ranged = BatchPayload(3, 5);
    ranged[12] = 2;
    for (const std::string& p : {payloads[0], payloads[1], ranged}) ASSERT_TRUE(other_writer.Append(p, true).ok());
    other.data()[at[1] + kWalRecordHeaderSize + 2] ^= 1;
    WalReadResult other_read;
    ReadAll(other.data(), capacity, 3, &s, &other_read);
    EXPECT_EQ(other_read.next_intact_offset, at[2]);
  }
  EXPECT_EQ(read.durable_end, at[2]);  // the third sync named what the second made durable
  EXPECT_FALSE(WalDamageIsTornTail(read, /*newest_log=*/true));
  EXPECT_NE(DescribeWalDamage(read).find("bad CRC at offset " + std::to_string(at[1])), std::string::npos)
      << DescribeWalDamage(read);
  // Records of another segment number never replay.
  EXPECT_TRUE(ReadAll(segment.data(), capacity, 4, &s).empty());
  EXPECT_TRUE(s.IsCorruption());
  // A segment without a header is corrupt.
  test::AlignedBuffer blank(capacity);
  ReadAll(blank.data(), capacity, 3, &s);
  EXPECT_TRUE(s.IsCorruption());
}

// A bug once found here: a flipped byte in the first record of a segment
// whose writes were made durable (here by the Sync of a clean close) was
// read as the end of the log, dropping the 200 records after it unreported.
TEST(WalTest, FlippedByteInTheFirstRecordIsReportedWithItsOffset) {
  const uint64_t capacity = 64 << 10;
  test::AlignedBuffer segment(capacity);
  CountingRegion region;
  WalWriter::Format(&region, segment.data(), capacity, 7);
  WalWriter writer(&region, segment.data(), capacity, 7);
  std::vector<std::string> payloads;
  for (int i = 0; i < 201; ++i) {
    payloads.push_back(BatchPayload(i + 1, 40));
    ASSERT_TRUE(writer.Append(payloads.back(), /*sync=*/false).ok());
  }
  ASSERT_TRUE(writer.Sync().ok());
  const std::vector<uint64_t> at = RecordOffsets(payloads);
  segment.data()[kWalHeaderSize + kWalRecordHeaderSize + 20] ^= 0x10;
  Status s;
  WalReadResult read;
  EXPECT_TRUE(ReadAll(segment.data(), capacity, 7, &s, &read).empty());
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(read.damaged);
  EXPECT_EQ(read.damage_offset, kWalHeaderSize);
  EXPECT_EQ(read.next_intact_offset, at[1]);
  EXPECT_EQ(read.durable_end, at.back());  // Sync persisted the durable end up to the last record
  EXPECT_FALSE(WalDamageIsTornTail(read, /*newest_log=*/true));
  EXPECT_NE(DescribeWalDamage(read).find("at offset 64"), std::string::npos) << DescribeWalDamage(read);

  // Skipping damage replays the 200 records after it.
  std::vector<std::string> rest(payloads.begin() + 1, payloads.end());
  EXPECT_EQ(ReadAll(segment.data(), capacity, 7, &s, &read, WalDamage::kSkip), rest);
  EXPECT_TRUE(read.damaged);
  EXPECT_EQ(read.skipped_stretches, 1u);
  EXPECT_EQ(read.skipped_bytes, at[1] - at[0]);
  EXPECT_EQ(read.end, at.back());
}

// What a power failure leaves of records that were never synced -- missing
// or half-written, in any order, since unsynced cache lines reach pmem in
// any order -- is a torn tail, not mid-log damage.
// A version 1 segment (reserved zeroed, as before version 2): unsynced
// lines lost in a power failure read as zeros.
TEST(WalTest, UnsyncedRecordsTornByAPowerFailureAreATornTail) {
  const uint64_t capacity = 16 << 10;
  test::AlignedBuffer segment(capacity);
  CountingRegion region;
  WalWriter::Format(&region, segment.data(), capacity, 5);
  EncodeFixed32(segment.data() + 8, 1);
  WalWriter writer(&region, segment.data(), capacity, 5);
  std::vector<std::string> payloads;
  for (int i = 0; i < 6; ++i) {
    payloads.push_back(BatchPayload(i + 1, 100));
    ASSERT_TRUE(writer.Append(payloads.back(), /*sync=*/i == 1 || i == 2).ok());
  }
  // Records 0-2 were synced; the header names what the first sync made
  // durable (records 0 and 1), as of the second.
  const std::vector<uint64_t> at = RecordOffsets(payloads);
  Status s;
  WalReadResult read;
  EXPECT_EQ(ReadAll(segment.data(), capacity, 5, &s, &read), payloads);
  EXPECT_FALSE(read.damaged);
  EXPECT_EQ(read.durable_end, at[2]);

  // Record 4 lost its last bytes, record 5 reached the medium whole.
  std::memset(segment.data() + at[5] - 16, 0, 16);
  EXPECT_EQ(ReadAll(segment.data(), capacity, 5, &s, &read),
            std::vector<std::string>(payloads.begin(), payloads.begin() + 4));
  ASSERT_TRUE(read.damaged);
  EXPECT_EQ(read.damage_offset, at[4]);
  EXPECT_EQ(read.next_intact_offset, at[5]);
  EXPECT_TRUE(WalDamageIsTornTail(read, /*newest_log=*/true)) << DescribeWalDamage(read);
  EXPECT_TRUE(WalDamageIsTornTail(read, /*newest_log=*/false)) << DescribeWalDamage(read);

  // Record 3's header never arrived but its payload did: torn too.
  std::memset(segment.data() + at[3], 0, kWalRecordHeaderSize);
  ReadAll(segment.data(), capacity, 5, &s, &read);
  ASSERT_TRUE(read.damaged);
  EXPECT_EQ(read.damage_offset, at[3]);
  EXPECT_EQ(read.damage, "record header of zeros, with nonzero bytes after it");
  EXPECT_TRUE(WalDamageIsTornTail(read, true));

  // Nothing of records 3-5 arrived: the segment ends cleanly.
  std::memset(segment.data() + at[3], 0, at[6] - at[3]);
  EXPECT_EQ(ReadAll(segment.data(), capacity, 5, &s, &read),
            std::vector<std::string>(payloads.begin(), payloads.begin() + 3));
  EXPECT_FALSE(read.damaged) << DescribeWalDamage(read);
  EXPECT_EQ(read.end, at[3]);

  // But a synced record that reads as zeros is damage, even at the end.
  std::memset(segment.data() + at[1], 0, at[3] - at[1]);
  ReadAll(segment.data(), capacity, 5, &s, &read);
  ASSERT_TRUE(read.damaged);
  EXPECT_EQ(read.damage_offset, at[1]);
  EXPECT_EQ(read.damage, "zeros where a record was durable");
  EXPECT_EQ(read.next_intact_offset, 0u);
  EXPECT_FALSE(WalDamageIsTornTail(read, true)) << DescribeWalDamage(read);
}

// Without a durable end (log files; segments written before the field):
// damage followed by an intact record, or in a log that is not the newest,
// is mid-log damage; damage at the end of the newest log is a torn tail.
TEST(WalTest, WithoutADurableEndOnlyTheNewestLogsLastDamageIsATornTail) {
  const uint64_t capacity = 16 << 10;
  test::AlignedBuffer segment(capacity);
  CountingRegion region;
  WalWriter::Format(&region, segment.data(), capacity, 2);
  WalWriter writer(&region, segment.data(), capacity, 2);
  const std::vector<std::string> payloads = {BatchPayload(1, 30), BatchPayload(2, 30), BatchPayload(3, 30)};
  for (const std::string& p : payloads) ASSERT_TRUE(writer.Append(p, true).ok());
  std::memset(segment.data() + 32, 0, 8);  // as written before the durable end existed
  const std::vector<uint64_t> at = RecordOffsets(payloads);
  segment.data()[at[1] + 4] ^= 1;  // the length of the middle record
  Status s;
  WalReadResult read;
  ReadAll(segment.data(), capacity, 2, &s, &read);
  ASSERT_TRUE(read.damaged);
  EXPECT_EQ(read.durable_end, 0u);
  EXPECT_EQ(read.damage_offset, at[1]);
  EXPECT_EQ(read.next_intact_offset, at[2]);
  EXPECT_FALSE(WalDamageIsTornTail(read, true));
  segment.data()[at[1] + 4] ^= 1;
  segment.data()[at[2] + 20] ^= 1;  // the last record
  ReadAll(segment.data(), capacity, 2, &s, &read);
  ASSERT_TRUE(read.damaged);
  EXPECT_EQ(read.damage_offset, at[2]);
  EXPECT_TRUE(WalDamageIsTornTail(read, /*newest_log=*/true));
  EXPECT_FALSE(WalDamageIsTornTail(read, /*newest_log=*/false));
}

// A damaged stretch of bytes that look like long records does not make the
// search for an intact record after it quadratic: it stops at its work
// limit, and the damage then counts as possibly followed by one.
TEST(WalTest, SearchAfterDamageIsBounded) {
  const uint64_t capacity = 8 << 20;
  test::AlignedBuffer segment(capacity);
  CountingRegion region;
  WalWriter::Format(&region, segment.data(), capacity, 4);
  for (uint64_t p = kWalHeaderSize; p + 8 <= capacity; p += 8) {
    // Read at any 8-byte offset: a CRC of 1, a 4 MiB length, and a payload
    // shaped like a batch (sequence 4 MiB << 32 | 1, count 1, a Delete).
    EncodeFixed32(segment.data() + p, 1);
    EncodeFixed32(segment.data() + p + 4, 4 << 20);
  }
  std::memset(segment.data() + 32, 0, 8);  // no durable end: the search decides
  Status s;
  WalReadResult read;
  ReadAll(segment.data(), capacity, 4, &s, &read);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(read.damaged);
  EXPECT_TRUE(read.search_incomplete);
  EXPECT_EQ(read.next_intact_offset, 0u);
  EXPECT_FALSE(WalDamageIsTornTail(read, true));
  EXPECT_NE(DescribeWalDamage(read).find("work limit"), std::string::npos) << DescribeWalDamage(read);
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
  ASSERT_TRUE(FileWalWriter::Create(FileSystem::Default(), path, 5, /*reuse=*/"", &writer).ok());
  std::vector<std::string> written;
  for (int i = 0; i < 50; ++i) {
    written.push_back(BatchPayload(i + 1, static_cast<size_t>(1 + i * 37 % 500)));
    ASSERT_TRUE(writer->Append(written.back(), /*sync=*/i % 7 == 0).ok());
  }
  ASSERT_TRUE(writer->Sync().ok());
  EXPECT_EQ(writer->syncs(), 8u);  // i = 0, 7, ..., 49, then the final Sync
  writer.reset();
  WalReadResult read;
  auto read_log = [&](uint64_t number, Status* status) { return ReadAllFromFile(path, number, status, &read); };
  Status s;
  EXPECT_EQ(read_log(5, &s), written);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(read.damaged) << DescribeWalDamage(read);
  EXPECT_EQ(read.durable_end, 0u);  // a log file keeps none
  // A flipped byte in the first record: reported with its offset, and not a
  // torn tail (intact records follow).
  const std::vector<uint64_t> at = RecordOffsets(written);
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(kWalHeaderSize + kWalRecordHeaderSize + 3));
    f.put('\xff');
  }
  EXPECT_TRUE(read_log(5, &s).empty());
  EXPECT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(read.damaged);
  EXPECT_EQ(read.damage_offset, kWalHeaderSize);
  EXPECT_EQ(read.next_intact_offset, at[1]);
  EXPECT_FALSE(WalDamageIsTornTail(read, /*newest_log=*/true));
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(kWalHeaderSize + kWalRecordHeaderSize + 3));
    f.put(written[0][3]);
  }
  // A torn last record: everything before it replays, and it is a torn tail
  // of the newest log only.
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 10);  // into the payload
  written.pop_back();
  EXPECT_EQ(read_log(5, &s), written);
  EXPECT_TRUE(s.ok());
  ASSERT_TRUE(read.damaged);
  EXPECT_EQ(read.damage_offset, at[written.size()]);
  EXPECT_TRUE(WalDamageIsTornTail(read, /*newest_log=*/true));
  EXPECT_FALSE(WalDamageIsTornTail(read, /*newest_log=*/false));
  // Another number's log is refused; a missing log is Corruption.
  read_log(6, &s);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  std::filesystem::remove(path);
  read_log(5, &s);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
}

// A file system whose first `torn_reads` opens of a file serve `torn`
// instead of its bytes: what reads of a log catch while its writer copies
// a record into it.
class TornReadsFileSystem final : public test::ForwardingFileSystem {
 public:
  TornReadsFileSystem(std::string torn, int torn_reads) : torn_(std::move(torn)), left_(torn_reads) {}
  Status NewRandomAccessFile(const std::string& path, std::unique_ptr<RandomAccessFile>* file) override {
    ++opens_;
    if (left_ == 0) return base_->NewRandomAccessFile(path, file);
    if (left_ > 0) --left_;
    *file = std::make_unique<MemoryRandomAccessFile>(Slice(torn_));
    return Status::OK();
  }
  int opens() const { return opens_; }

 private:
  const std::string torn_;
  int left_;  // -1: every open
  int opens_ = 0;
};

// A live log (a read-only open beside its writer) read while a record's
// header is still zeros and records after it are whole -- an append caught
// half-copied: it is read again, and once the record is whole all of it
// replays. A header that stays zeros is damage like any other, reported
// once it has stayed kLiveLogPatience; a log read as not live reports it
// at once.
TEST(WalTest, ALiveLogIsReadAgainPastAnAppendCaughtHalfCopied) {
  test::ScratchDir dir;
  const std::string path = dir.path() + "/000005.log";
  std::unique_ptr<FileWalWriter> writer;
  ASSERT_TRUE(FileWalWriter::Create(FileSystem::Default(), path, 5, /*reuse=*/"", &writer).ok());
  std::vector<std::string> written;
  for (int i = 0; i < 20; ++i) {
    written.push_back(BatchPayload(i + 1, 100));
    ASSERT_TRUE(writer->Append(written.back(), /*sync=*/false).ok());
  }
  ASSERT_TRUE(writer->Sync().ok());
  writer.reset();
  const std::vector<uint64_t> at = RecordOffsets(written);
  std::ifstream in(path, std::ios::binary);
  std::string torn((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::memset(torn.data() + at[3], 0, kWalRecordHeaderSize);  // record 3 "in flight"
  auto read = [&](FileSystem* fs, bool live, Status* status, WalReadResult* result) {
    return ReadAllFromFile(path, 5, status, result, fs, live);
  };
  Status s;
  WalReadResult result;
  {
    // Not live: the damage at once, records 0-2 replayed.
    TornReadsFileSystem fs(torn, 1);
    EXPECT_EQ(read(&fs, false, &s, &result).size(), 3u);
    EXPECT_EQ(fs.opens(), 1);
    ASSERT_TRUE(result.damaged);
    EXPECT_EQ(result.damage_offset, at[3]);
    EXPECT_EQ(result.next_intact_offset, at[4]);
  }
  {
    // Live, the record whole by the third read: every record, no damage.
    TornReadsFileSystem fs(torn, 2);
    EXPECT_EQ(read(&fs, true, &s, &result), written);
    EXPECT_EQ(fs.opens(), 3);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_FALSE(result.damaged) << DescribeWalDamage(result);
  }
  {
    // Live, a header that stays zeros: read again until it has stayed the
    // patience, then reported.
    TornReadsFileSystem fs(torn, -1);
    EXPECT_EQ(read(&fs, true, &s, &result).size(), 3u);
    EXPECT_GT(fs.opens(), 1);
    EXPECT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(result.damaged);
    EXPECT_EQ(result.damage_offset, at[3]);
    EXPECT_EQ(result.next_intact_offset, at[4]);
  }
}

// A log file torn inside the zero padding of its last record (found by
// tests/fuzz/db_files_fuzzer.cc): the record was never written whole, so it
// is a torn tail like any other, and the read stays inside the file. The
// reader used to accept the record and then read the log's end past the
// file's last byte.
TEST(WalTest, ALogFileTornInsideTheLastRecordsPaddingEndsBeforeIt) {
  test::ScratchDir dir;
  const std::string path = dir.path() + "/000005.log";
  std::unique_ptr<FileWalWriter> writer;
  ASSERT_TRUE(FileWalWriter::Create(FileSystem::Default(), path, 5, /*reuse=*/"", &writer).ok());
  std::vector<std::string> written;
  for (int i = 0; i < 5; ++i) {
    written.push_back(BatchPayload(i + 1, 8 * static_cast<size_t>(i) + 5));  // 17 + 8i bytes: 7 of padding
    ASSERT_TRUE(writer->Append(written.back(), /*sync=*/true).ok());
  }
  writer.reset();
  const std::vector<uint64_t> at = RecordOffsets(written);
  ASSERT_EQ(std::filesystem::file_size(path), at.back());
  for (uint64_t cut : {1, 3, 7}) {
    std::filesystem::resize_file(path, at.back() - cut);
    Status s;
    WalReadResult read;
    EXPECT_EQ(ReadAllFromFile(path, 5, &s, &read), std::vector<std::string>(written.begin(), written.end() - 1))
        << "cut " << cut;
    EXPECT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(read.damaged) << "cut " << cut;
    EXPECT_EQ(read.damage_offset, at[written.size() - 1]);
    EXPECT_EQ(read.end, at[written.size() - 1]);
    EXPECT_TRUE(WalDamageIsTornTail(read, /*newest_log=*/true)) << DescribeWalDamage(read);
  }
}

// A segment header whose capacity is smaller than the header itself is
// Corruption, not a read before the segment's records.
TEST(WalTest, ACapacitySmallerThanTheHeaderIsCorruption) {
  const uint64_t capacity = 4096;
  test::AlignedBuffer segment(capacity);
  CountingRegion region;
  WalWriter::Format(&region, segment.data(), capacity, 9);
  for (uint64_t field : {uint64_t{1}, uint64_t{kWalHeaderSize - 8}}) {
    EncodeFixed64(segment.data() + 24, field);  // the capacity (docs/wal.md)
    Status s;
    EXPECT_TRUE(ReadAll(segment.data(), capacity, 9, &s).empty());
    EXPECT_TRUE(s.IsCorruption()) << field << ": " << s.ToString();
  }
}

// A log written over an older log's file (header version 2): it ends at the
// zero record header after its last record although the old log's records
// follow; a record of this log after that header is damage, as in any log.
TEST(WalTest, AReusedLogFileEndsAtZerosBeforeTheOldLogsBytes) {
  test::ScratchDir dir;
  const std::string old_path = dir.path() + "/000005.log";
  const std::string path = dir.path() + "/000009.log";
  std::unique_ptr<FileWalWriter> writer;
  ASSERT_TRUE(FileWalWriter::Create(FileSystem::Default(), old_path, 5, /*reuse=*/"", &writer).ok());
  for (int i = 0; i < 400; ++i) ASSERT_TRUE(writer->Append(BatchPayload(i + 1, 300), /*sync=*/false).ok());
  writer.reset();  // closed: 400 records of log 5
  const uint64_t old_size = std::filesystem::file_size(old_path);

  ASSERT_TRUE(FileWalWriter::Create(FileSystem::Default(), path, 9, /*reuse=*/old_path, &writer).ok());
  EXPECT_FALSE(std::filesystem::exists(old_path));
  std::vector<std::string> written;
  for (int i = 0; i < 30; ++i) {
    written.push_back(BatchPayload(1000 + i, static_cast<size_t>(20 + i * 13)));
    ASSERT_TRUE(writer->Append(written.back(), /*sync=*/false).ok());
  }
  // As a crash leaves it: the file not yet truncated, log 5's bytes after
  // the new records.
  const std::string crashed = dir.path() + "/crashed.log";
  std::filesystem::copy_file(path, crashed);
  EXPECT_GE(std::filesystem::file_size(crashed), old_size);
  WalReadResult read;
  auto read_log = [&](const std::string& file, Status* status) { return ReadAllFromFile(file, 9, status, &read); };
  Status s;
  EXPECT_EQ(read_log(crashed, &s), written);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(read.damaged) << DescribeWalDamage(read);
  const uint64_t end = read.end;

  // A zero header with a record of this log after it: damage.
  {
    std::fstream f(crashed, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(RecordOffsets(written)[20]));
    const char zeros[kWalRecordHeaderSize] = {};
    f.write(zeros, sizeof(zeros));
  }
  read_log(crashed, &s);
  EXPECT_TRUE(s.ok()) << s.ToString();
  ASSERT_TRUE(read.damaged);
  EXPECT_EQ(read.damage_offset, RecordOffsets(written)[20]);
  EXPECT_EQ(read.next_intact_offset, RecordOffsets(written)[21]);

  // Closed: truncated to its records, which read back without damage.
  writer.reset();
  EXPECT_EQ(std::filesystem::file_size(path), end);
  EXPECT_EQ(read_log(path, &s), written);
  EXPECT_FALSE(read.damaged) << DescribeWalDamage(read);

  // A file system that cannot reuse files: the old file is removed and a new
  // one made (version 1).
  ASSERT_TRUE(FileWalWriter::Create(FileSystem::Default(), old_path, 5, /*reuse=*/"", &writer).ok());
  writer.reset();
  test::ForwardingFileSystem no_reuse;
  const std::string fresh = dir.path() + "/000011.log";
  ASSERT_TRUE(FileWalWriter::Create(&no_reuse, fresh, 11, /*reuse=*/old_path, &writer).ok());
  writer.reset();
  EXPECT_FALSE(std::filesystem::exists(old_path));
  std::ifstream in(fresh, std::ios::binary);
  char header[16] = {};
  in.read(header, sizeof(header));
  EXPECT_EQ(DecodeFixed32(header + 8), 1u);
}

// A pmem segment is reserved without zeroing (version 2): whatever the
// space held before -- here random bytes and an intact record of another
// log -- follows the last record, and the log still ends there cleanly, at
// every step of an append a killed writer could leave behind; a version 1
// segment (reserved zeroed) with such bytes after its end is damaged.
TEST(WalTest, ASegmentOverOldBytesEndsAtItsLastRecord) {
  const uint64_t capacity = 16 << 10;
  test::AlignedBuffer segment(capacity);
  FillWithOldBytes(&segment, 11);
  {
    // Another log's records where this one's will go and beyond.
    CountingRegion region;
    WalWriter::Format(&region, segment.data(), capacity, 8);
    WalWriter other(&region, segment.data(), capacity, 8);
    for (int i = 0; i < 40; ++i) ASSERT_TRUE(other.Append(BatchPayload(100 + i, 90), false).ok());
  }
  CountingRegion region;
  WalWriter::Format(&region, segment.data(), capacity, 9);
  EXPECT_EQ(DecodeFixed32(segment.data() + 8), 2u);
  Status s;
  WalReadResult read;
  EXPECT_TRUE(ReadAll(segment.data(), capacity, 9, &s, &read).empty());
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(read.damaged) << DescribeWalDamage(read);

  WalWriter writer(&region, segment.data(), capacity, 9);
  std::vector<std::string> payloads;
  for (int i = 0; i < 20; ++i) {
    payloads.push_back(BatchPayload(i + 1, 10 + 7 * i));
    ASSERT_TRUE(writer.Append(payloads.back(), /*sync=*/i % 4 == 0).ok());
    EXPECT_EQ(ReadAll(segment.data(), capacity, 9, &s, &read), payloads);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_FALSE(read.damaged) << i << ": " << DescribeWalDamage(read);
  }
  const std::vector<uint64_t> at = RecordOffsets(payloads);
  EXPECT_EQ(read.end, at[20]);
  EXPECT_EQ(DecodeFixed64(segment.data() + at[20]), 0u);

  // A writer killed inside the next append: its payload written, its
  // header not yet -- the log still ends after record 19.
  const std::string next = BatchPayload(21, 50);
  std::memcpy(segment.data() + at[20] + kWalRecordHeaderSize, next.data(), next.size());
  EXPECT_EQ(ReadAll(segment.data(), capacity, 9, &s, &read), payloads);
  EXPECT_FALSE(read.damaged) << DescribeWalDamage(read);

  // The same bytes under version 1 (whose segments were zeroed): damage.
  EncodeFixed32(segment.data() + 8, 1);
  ReadAll(segment.data(), capacity, 9, &s, &read);
  ASSERT_TRUE(read.damaged);
  EXPECT_EQ(read.damage_offset, at[20]);
  EXPECT_EQ(read.damage, "record header of zeros, with nonzero bytes after it");
}

// A power failure loses unsynced lines of a segment over old bytes: they
// read as the old bytes again. Past the durable end that is a torn tail;
// the synced records all read back.
TEST(WalTest, UnsyncedLinesOverOldBytesLostInAPowerFailureAreATornTail) {
  const uint64_t capacity = 16 << 10;
  test::AlignedBuffer segment(capacity);
  FillWithOldBytes(&segment, 5);
  const std::string old(segment.data(), capacity);
  CountingRegion region;
  WalWriter::Format(&region, segment.data(), capacity, 6);
  WalWriter writer(&region, segment.data(), capacity, 6);
  std::vector<std::string> payloads;
  for (int i = 0; i < 8; ++i) {
    payloads.push_back(BatchPayload(i + 1, 100));
    ASSERT_TRUE(writer.Append(payloads.back(), /*sync=*/i == 3).ok());
  }
  ASSERT_TRUE(writer.Sync().ok());  // durable end: after record 7
  const std::vector<uint64_t> at = RecordOffsets(payloads);
  // Records 4-7 had not been synced: a line in the middle of record 5
  // reverts to the old bytes (the durable end is put back to record 4's
  // start, as before the last sync).
  EncodeFixed64(segment.data() + 32, at[4]);
  const uint64_t line = (at[5] + 64) & ~uint64_t{63};
  std::memcpy(segment.data() + line, old.data() + line, 64);
  Status s;
  WalReadResult read;
  EXPECT_EQ(ReadAll(segment.data(), capacity, 6, &s, &read),
            std::vector<std::string>(payloads.begin(), payloads.begin() + 5));
  ASSERT_TRUE(read.damaged);
  EXPECT_EQ(read.damage_offset, at[5]);
  EXPECT_TRUE(WalDamageIsTornTail(read, /*newest_log=*/true)) << DescribeWalDamage(read);
  // Where the old bytes under record 5's header were zeros, the segment
  // ends there, past its durable end, without looking further: records 6
  // and 7 were never durable (a version 1 segment would report damage).
  std::memset(segment.data() + at[5], 0, kWalRecordHeaderSize);
  EXPECT_EQ(ReadAll(segment.data(), capacity, 6, &s, &read),
            std::vector<std::string>(payloads.begin(), payloads.begin() + 5));
  EXPECT_FALSE(read.damaged) << DescribeWalDamage(read);
  EXPECT_EQ(read.end, at[5]);
  EncodeFixed32(segment.data() + 8, 1);
  ReadAll(segment.data(), capacity, 6, &s, &read);
  EXPECT_TRUE(read.damaged);
  EncodeFixed32(segment.data() + 8, 2);
  // The line of record 2, which was synced, lost: not a torn tail.
  const uint64_t synced_line = (at[2] + 64) & ~uint64_t{63};
  std::memcpy(segment.data() + synced_line, old.data() + synced_line, 64);
  ReadAll(segment.data(), capacity, 6, &s, &read);
  ASSERT_TRUE(read.damaged);
  EXPECT_LT(read.damage_offset, at[4]);
  EXPECT_FALSE(WalDamageIsTornTail(read, /*newest_log=*/true)) << DescribeWalDamage(read);
}


// A reused log file left by a kill (not truncated) whose old log held
// values of random binary bytes (hashes, compressed or encrypted data): the
// search for an intact record of this log through the old bytes must not
// give up at its work limit, or the clean end after a crash reads as damage
// (search incomplete, not a torn tail) and DB::Open fails in the default
// recovery mode.
TEST(WalTest, AReusedLogOverBinaryValuesEndsCleanlyAfterAKill) {
  test::ScratchDir dir;
  const std::string old_path = dir.path() + "/000005.log";
  const std::string path = dir.path() + "/000009.log";
  std::unique_ptr<FileWalWriter> writer;
  ASSERT_TRUE(FileWalWriter::Create(FileSystem::Default(), old_path, 5, /*reuse=*/"", &writer).ok());
  std::mt19937_64 rng(7);
  uint64_t bytes = 0;
  for (int i = 0; bytes < (16u << 20); ++i) {  // a 16 MiB log of batches with 120-byte random values
    std::string payload = BatchPayload(i + 1, 120);
    for (size_t p = 13; p + 8 <= payload.size(); p += 8) EncodeFixed64(payload.data() + p, rng());
    bytes += WalRecordSize(payload.size());
    ASSERT_TRUE(writer->Append(payload, /*sync=*/false).ok());
  }
  writer.reset();
  ASSERT_TRUE(FileWalWriter::Create(FileSystem::Default(), path, 9, /*reuse=*/old_path, &writer).ok());
  std::vector<std::string> written;
  for (int i = 0; i < 30; ++i) {
    written.push_back(BatchPayload(1000 + i, 100));
    ASSERT_TRUE(writer->Append(written.back(), /*sync=*/true).ok());
  }
  const std::string crashed = dir.path() + "/crashed.log";
  std::filesystem::copy_file(path, crashed);
  WalReadResult read;
  Status s;
  EXPECT_EQ(ReadAllFromFile(crashed, 9, &s, &read), written);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_FALSE(read.damaged) << DescribeWalDamage(read);
  EXPECT_FALSE(read.damaged && !WalDamageIsTornTail(read, /*newest_log=*/true))
      << "DB::Open in kTolerateCorruptedTailRecords fails: " << DescribeWalDamage(read);
}

}  // namespace
}  // namespace jigsaw
