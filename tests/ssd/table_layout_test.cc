// The SSD table layout's codec (ssd/table_layout.h): what it writes it
// reads back, and what Check refuses it names.
#include "ssd/table_layout.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "format/bloom.h"

namespace jigsaw::ssd {
namespace {

TableFooter AFooter() {
  TableFooter f;
  f.block_format = 1;
  f.index_offset = 4096;
  f.index_size = 200;
  f.entries = 77;
  f.index_crc = 0x12345678;
  return f;
}

constexpr uint64_t kFileSize = 4096 + 200 + kTableFooterSize;

TEST(TableLayoutTest, AFooterReadsBackAsWritten) {
  std::string bytes;
  AFooter().EncodeTo(&bytes);
  ASSERT_EQ(bytes.size(), kTableFooterSize);
  EXPECT_EQ(bytes.substr(0, 8), "JGSWSST1");
  const TableFooter f = TableFooter::DecodeFrom(bytes.data());
  EXPECT_EQ(f.version, kTableFormatVersion);
  EXPECT_EQ(f.block_format, 1u);
  EXPECT_EQ(f.index_offset, 4096u);
  EXPECT_EQ(f.index_size, 200u);
  EXPECT_EQ(f.entries, 77u);
  EXPECT_EQ(f.index_crc, 0x12345678u);
  EXPECT_TRUE(f.Check(kFileSize, "t.jst").ok()) << f.Check(kFileSize, "t.jst").ToString();
}

TEST(TableLayoutTest, CheckNamesWhatIsWrong) {
  auto check = [](void (*damage)(std::string*), uint64_t file_size) {
    std::string bytes;
    AFooter().EncodeTo(&bytes);
    damage(&bytes);
    return TableFooter::DecodeFrom(bytes.data()).Check(file_size, "t.jst");
  };
  Status s = check([](std::string* b) { (*b)[0] = 'X'; }, kFileSize);
  EXPECT_TRUE(s.IsCorruption() && s.ToString().find("bad magic") != std::string::npos) << s.ToString();
  s = check([](std::string* b) { (*b)[20] ^= 1; }, kFileSize);
  EXPECT_TRUE(s.IsCorruption() && s.ToString().find("footer checksum") != std::string::npos) << s.ToString();
  s = check([](std::string*) {}, kFileSize + 8);
  EXPECT_TRUE(s.IsCorruption() && s.ToString().find("index out of bounds") != std::string::npos) << s.ToString();
  // A newer version, its checksum right: NotSupported, not damage.
  TableFooter newer = AFooter();
  newer.version = kTableFormatVersion + 1;
  std::string bytes;
  newer.EncodeTo(&bytes);
  s = TableFooter::DecodeFrom(bytes.data()).Check(kFileSize, "t.jst");
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
}

TEST(TableLayoutTest, AnIndexReadsBackAndRefusesBlocksOutOfOrder) {
  std::vector<TableIndexEntry> blocks = {{0, 1000, 10, "a", "c"}, {1000, 2000, 20, "d", "ffff"}};
  std::string index;
  EncodeIndexEntries(blocks, /*filter_lines=*/2, kUncompressedTableVersion, &index);
  index.append(2 * bloom::kLineBytes, '\x5a');
  std::vector<TableIndexEntry> got;
  Slice filter;
  uint32_t lines = 0;
  ASSERT_TRUE(DecodeIndex(index, /*index_offset=*/3000, kUncompressedTableVersion, "t.jst", &got, &filter, &lines).ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].offset, 1000u);
  EXPECT_EQ(got[1].entries, 20u);
  EXPECT_EQ(got[1].largest, "ffff");
  EXPECT_EQ(lines, 2u);
  EXPECT_EQ(filter.size(), 2 * bloom::kLineBytes);
  // The second block overlapping the first: out of bounds.
  blocks[1].offset = 992;
  index.clear();
  EncodeIndexEntries(blocks, 0, kUncompressedTableVersion, &index);
  Status s = DecodeIndex(index, 3000, kUncompressedTableVersion, "t.jst", &got, &filter, &lines);
  EXPECT_TRUE(s.IsCorruption() && s.ToString().find("block 1 out of bounds") != std::string::npos) << s.ToString();
  // Cut short.
  s = DecodeIndex(Slice(index.data(), index.size() - 8), 3000, kUncompressedTableVersion, "t.jst", &got, &filter,
                  &lines);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
}

TEST(TableLayoutTest, AVersion2IndexCarriesEachBlocksCodecAndStoredSize) {
  std::vector<TableIndexEntry> blocks = {{0, 1000, 10, "a", "c"}, {1000, 8192, 20, "d", "ffff"}};
  blocks[1].codec = StoredCodec::kLZ4;
  blocks[1].stored_size = 1500;
  EXPECT_EQ(TableVersionFor(blocks), 2u);
  EXPECT_EQ(TableVersionFor({blocks[0]}), kUncompressedTableVersion);
  std::string index;
  EncodeIndexEntries(blocks, 0, 2, &index);
  std::vector<TableIndexEntry> got;
  Slice filter;
  uint32_t lines = 0;
  // The compressed block ends at 2500, though its decompressed size would not fit before 3000.
  ASSERT_TRUE(DecodeIndex(index, /*index_offset=*/2504, 2, "t.jst", &got, &filter, &lines).ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_FALSE(got[0].compressed());
  EXPECT_EQ(got[0].stored_bytes(), 1000u);
  EXPECT_EQ(got[1].codec, StoredCodec::kLZ4);
  EXPECT_EQ(got[1].size, 8192u);
  EXPECT_EQ(got[1].stored_bytes(), 1500u);
  // Stored bytes past the index: out of bounds.
  Status s = DecodeIndex(index, 2496, 2, "t.jst", &got, &filter, &lines);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  // An unknown codec, and a raw block whose stored size is not its size: Corruption.
  std::string bad = index;
  bad[8 + 32 + 8 + 28] = 9;  // block 1's codec (block 0's entry is 32 + 8 bytes)
  s = DecodeIndex(bad, 2504, 2, "t.jst", &got, &filter, &lines);
  EXPECT_TRUE(s.IsCorruption() && s.ToString().find("unknown compression") != std::string::npos) << s.ToString();
  bad = index;
  bad[8 + 24] = 1;  // block 0's stored size
  s = DecodeIndex(bad, 2504, 2, "t.jst", &got, &filter, &lines);
  EXPECT_TRUE(s.IsCorruption() && s.ToString().find("stored size") != std::string::npos) << s.ToString();
}

TEST(TableLayoutTest, ASplitBlockMakesTheTableVersion3AndIsRefusedInVersion2) {
  std::vector<TableIndexEntry> blocks = {{0, 8192, 10, "a", "c"}, {1504, 8192, 20, "d", "ffff"}};
  blocks[0].codec = StoredCodec::kLZ4;
  blocks[0].stored_size = 1500;
  blocks[1].codec = StoredCodec::kLZ4Split;
  blocks[1].stored_size = 1000;
  EXPECT_EQ(TableVersionFor(blocks), 3u);
  EXPECT_EQ(TableVersionFor({blocks[0]}), 2u);
  std::string index;
  EncodeIndexEntries(blocks, 0, 3, &index);
  std::vector<TableIndexEntry> got;
  Slice filter;
  uint32_t lines = 0;
  ASSERT_TRUE(DecodeIndex(index, 2504, 3, "t.jst", &got, &filter, &lines).ok());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].codec, StoredCodec::kLZ4Split);
  EXPECT_EQ(got[1].stored_bytes(), 1000u);
  // The same index read as version 2: a split codec is unknown there.
  const Status s = DecodeIndex(index, 2504, 2, "t.jst", &got, &filter, &lines);
  EXPECT_TRUE(s.IsCorruption() && s.ToString().find("unknown compression") != std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace jigsaw::ssd
