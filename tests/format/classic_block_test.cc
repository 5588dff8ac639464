// Classic-format specifics: prefix compression with restart points, the
// trailer and its version check.
#include "format/classic_block.h"

#include <gtest/gtest.h>

#include "util/checksum.h"
#include "util/coding.h"
#include "tests/support/block_test_util.h"

namespace jigsaw {
namespace {

using test::AlignedBuffer;
using test::TestEntry;

std::vector<TestEntry> Entries(int n) {
  std::vector<TestEntry> entries;
  for (int i = 0; i < n; ++i) {
    char key[32];
    std::snprintf(key, sizeof(key), "user%012d", i);
    entries.push_back({key, 1, ValueType::kValue, "v"});
  }
  return entries;
}

TEST(ClassicBlockTest, PrefixCompressionAndRestarts) {
  auto entries = Entries(100);
  for (int interval : {1, 4, 16}) {
    BlockBuilderOptions options;
    options.restart_interval = interval;
    AlignedBuffer buffer;
    size_t size = 0;
    ASSERT_TRUE(test::BuildBlock(BlockFormat::kClassic, entries, options, &buffer, &size).ok());
    const char* trailer = buffer.data() + size - classic::kTrailerSize;
    EXPECT_EQ(DecodeFixed32(trailer), 100u);                               // entries
    EXPECT_EQ(DecodeFixed32(trailer + 4), (100u + interval - 1) / interval);  // restarts
    // Shared prefixes make the block smaller than the raw keys with interval > 1.
    const size_t raw = 100 * (16 + 8 + 1 + 3);
    if (interval > 1) {
      EXPECT_LT(size, raw);
    }
    std::unique_ptr<BlockReader> reader;
    ASSERT_TRUE(BlockReader::Open(BlockFormat::kClassic, Slice(buffer.data(), size), {}, &reader).ok());
    ASSERT_TRUE(reader->Validate().ok());
    BlockLookup r;
    ASSERT_TRUE(reader->Get("user000000000042", kMaxSequenceNumber, &r).ok());
    EXPECT_EQ(r.value.ToString(), "v");
  }
}

TEST(ClassicBlockTest, NewerVersionIsNotSupported) {
  AlignedBuffer buffer;
  size_t size = 0;
  ASSERT_TRUE(test::BuildBlock(BlockFormat::kClassic, Entries(3), {}, &buffer, &size).ok());
  char* trailer = buffer.data() + size - classic::kTrailerSize;
  EncodeFixed32(trailer + 12, classic::kFormatVersion + 1);
  EncodeFixed32(trailer + 16, crc32c::Value(buffer.data(), size - 4));
  std::unique_ptr<BlockReader> reader;
  EXPECT_TRUE(BlockReader::Open(BlockFormat::kClassic, Slice(buffer.data(), size), {}, &reader).IsNotSupported());
}

TEST(ClassicBlockTest, DamagedRestartPointIsCorruption) {
  AlignedBuffer buffer;
  size_t size = 0;
  ASSERT_TRUE(test::BuildBlock(BlockFormat::kClassic, Entries(64), {}, &buffer, &size).ok());
  char* restarts = buffer.data() + size - classic::kTrailerSize - 4 * 4;
  EncodeFixed32(restarts + 4 * 2, 0x7fffffff);
  BlockReadOptions options;
  options.verify_checksum = false;
  std::unique_ptr<BlockReader> reader;
  ASSERT_TRUE(BlockReader::Open(BlockFormat::kClassic, Slice(buffer.data(), size), options, &reader).ok());
  EXPECT_TRUE(reader->Validate().IsCorruption());
  auto it = reader->NewIterator();
  it->Seek("user000000000063");
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().IsCorruption());
}

}  // namespace
}  // namespace jigsaw
