// KeySet version 1 (still read, written only on request): the byte layout,
// position independence, the skiplist and key-head index structures and
// comparator checks. The behaviour every format shares is block_test's.
#include "format/keyset_v1.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "format/bloom.h"
#include "util/checksum.h"
#include "util/coding.h"
#include "tests/support/block_test_util.h"

namespace jigsaw {
namespace {

using test::AlignedBuffer;
using test::TestEntry;

std::vector<TestEntry> SequentialEntries(int n, const std::string& prefix = "user") {
  std::vector<TestEntry> entries;
  for (int i = 0; i < n; ++i) {
    char key[32];
    std::snprintf(key, sizeof(key), "%s%016d", prefix.c_str(), i);
    entries.push_back({key, static_cast<SequenceNumber>(i + 1), ValueType::kValue, "value" + std::to_string(i)});
  }
  return entries;
}

Slice Build(const std::vector<TestEntry>& entries, AlignedBuffer* buffer,
            BlockBuilderOptions options = {}) {
  options.keyset_version = 1;
  size_t size = 0;
  EXPECT_TRUE(test::BuildBlock(BlockFormat::kKeySet, entries, options, buffer, &size).ok());
  return Slice(buffer->data(), size);
}

TEST(KeySetV1Test, HeaderFieldsAndAlignment) {
  AlignedBuffer buffer;
  auto entries = SequentialEntries(100);
  Slice block = Build(entries, &buffer);
  const char* b = block.data();
  EXPECT_EQ(std::memcmp(b, "JIGSAWKS", 8), 0);
  EXPECT_EQ(DecodeFixed32(b + keyset::hdr::kVersion), keyset::v1::kFormatVersion);
  EXPECT_EQ(DecodeFixed64(b + keyset::hdr::kBlockSize), block.size());
  EXPECT_EQ(DecodeFixed32(b + keyset::hdr::kEntryCount), 100u);
  EXPECT_EQ(DecodeFixed32(b + keyset::hdr::kFlags), keyset::kFlagKeyHeads);
  // Every section starts 8-byte aligned; the Bloom filter 64-byte aligned.
  for (size_t field : {keyset::hdr::kKeySetOffset, keyset::hdr::kEntryOffsetsOffset, keyset::hdr::kKeyHeadsOffset}) {
    EXPECT_EQ(DecodeFixed64(b + field) % 8, 0u);
  }
  EXPECT_EQ(DecodeFixed64(b + keyset::hdr::kBloomOffset) % 64, 0u);
  // Every entry is 8-byte aligned and its value offset indexes the value buffer.
  const uint64_t keyset_offset = DecodeFixed64(b + keyset::hdr::kKeySetOffset);
  const char* offsets = b + DecodeFixed64(b + keyset::hdr::kEntryOffsetsOffset);
  for (size_t i = 0; i < entries.size(); ++i) {
    const uint32_t off = DecodeFixed32(offsets + 4 * i);
    EXPECT_EQ(off % 8, 0u);
    const char* e = b + keyset_offset + off;
    const uint64_t value_offset = DecodeFixed64(e + keyset::v1::ent::kIndex);
    const uint32_t value_size = DecodeFixed32(e + keyset::v1::ent::kValueSize);
    EXPECT_EQ(std::string(b + keyset::kHeaderSize + value_offset, value_size), entries[i].value);
    EXPECT_EQ(DecodeFixed32(e + keyset::v1::ent::kHeight), keyset::v1::BulkHeight(i));
  }
}

TEST(KeySetV1Test, BulkHeightsFormABalancedSkiplist) {
  EXPECT_EQ(keyset::v1::BulkHeight(0), 1u);
  EXPECT_EQ(keyset::v1::BulkHeight(3), 2u);   // 4th entry
  EXPECT_EQ(keyset::v1::BulkHeight(15), 3u);  // 16th entry
  EXPECT_EQ(keyset::v1::BulkHeight(63), 4u);
  EXPECT_EQ(keyset::v1::BulkHeight((uint64_t{1} << 40) - 1), keyset::kMaxHeight);
}

// A block is position independent: copied anywhere (another pmem address, an
// SSD file buffer, a cache buffer) it reads the same with no rebase.
TEST(KeySetV1Test, CopiedBytesReadIdentically) {
  AlignedBuffer buffer;
  std::mt19937_64 rng(3);
  auto entries = test::RandomEntries(&rng, 500, 20, 100);
  Slice block = Build(entries, &buffer);
  AlignedBuffer copy(block.size() + 8);
  std::memcpy(copy.data() + 8, block.data(), block.size());
  std::memset(buffer.data(), 0, block.size());  // the original is gone
  std::unique_ptr<BlockReader> reader;
  ASSERT_TRUE(BlockReader::Open(BlockFormat::kKeySet, Slice(copy.data() + 8, block.size()), {}, &reader).ok());
  ASSERT_TRUE(reader->Validate().ok());
  auto it = reader->NewIterator();
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
    ASSERT_EQ(it->user_key().ToString(), entries[i].user_key);
    ASSERT_EQ(it->value().ToString(), entries[i].value);
  }
  EXPECT_EQ(i, entries.size());
}

TEST(KeySetV1Test, BuildIsDeterministic) {
  auto entries = SequentialEntries(300);
  AlignedBuffer a, b;
  Slice x = Build(entries, &a);
  Slice y = Build(entries, &b);
  ASSERT_EQ(x.size(), y.size());
  EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size()), 0);
}

TEST(KeySetV1Test, EntriesCarryTheirKeyHash) {
  AlignedBuffer buffer;
  auto entries = SequentialEntries(40);
  Slice block = Build(entries, &buffer);
  const char* keyset = block.data() + DecodeFixed64(block.data() + keyset::hdr::kKeySetOffset);
  const char* offsets = block.data() + DecodeFixed64(block.data() + keyset::hdr::kEntryOffsetsOffset);
  for (size_t i = 0; i < entries.size(); ++i) {
    const char* e = keyset + DecodeFixed32(offsets + 4 * i);
    EXPECT_EQ(DecodeFixed32(e + keyset::v1::ent::kKeyHash), bloom::KeyHash(entries[i].user_key));
  }
}

TEST(KeySetV1Test, HeadFencesNarrowEveryLookup) {
  // Enough entries for several fences, with runs of equal heads (versions of
  // one key) that straddle fence boundaries.
  std::vector<TestEntry> entries;
  for (int k = 0; k < 300; ++k) {
    const int versions = k % 7 == 0 ? 40 : 1;
    for (int v = versions; v >= 1; --v) {
      char key[32];
      std::snprintf(key, sizeof(key), "key%08d", k * 3);
      entries.push_back({key, static_cast<SequenceNumber>(v), ValueType::kValue, std::to_string(k * 100 + v)});
    }
  }
  AlignedBuffer buffer;
  Slice block = Build(entries, &buffer);
  std::unique_ptr<BlockReader> reader;
  ASSERT_TRUE(BlockReader::Open(BlockFormat::kKeySet, block, {}, &reader).ok());
  ASSERT_TRUE(reader->Validate().ok());
  BlockLookup r;
  for (int k = 0; k < 300; ++k) {
    char key[32];
    std::snprintf(key, sizeof(key), "key%08d", k * 3);
    const int versions = k % 7 == 0 ? 40 : 1;
    ASSERT_TRUE(reader->Get(key, kMaxSequenceNumber, &r).ok()) << key;
    EXPECT_EQ(r.value.ToString(), std::to_string(k * 100 + versions));
    if (versions > 1) {
      ASSERT_TRUE(reader->Get(key, 17, &r).ok());
      EXPECT_EQ(r.sequence, 17u);
    }
    std::snprintf(key, sizeof(key), "key%08d", k * 3 + 1);  // absent, between two present keys
    EXPECT_TRUE(reader->Get(key, kMaxSequenceNumber, &r).IsNotFound()) << key;
    auto it = reader->NewIterator();
    it->Seek(key);
    if (k < 299) {
      ASSERT_TRUE(it->Valid());
      std::snprintf(key, sizeof(key), "key%08d", k * 3 + 3);
      EXPECT_EQ(it->user_key().ToString(), key);
    } else {
      EXPECT_FALSE(it->Valid());
    }
  }
}

TEST(KeySetV1Test, KeyHeadsSkipTheCommonPrefix) {
  AlignedBuffer buffer;
  auto entries = SequentialEntries(1000, "common-prefix/");
  Slice block = Build(entries, &buffer);
  // Keys are "common-prefix/" + 16 digits; the first and last share 14 + 12 bytes.
  EXPECT_EQ(DecodeFixed32(block.data() + keyset::hdr::kKeyHeadSkip), 14u + 13u);
  std::unique_ptr<BlockReader> reader;
  ASSERT_TRUE(BlockReader::Open(BlockFormat::kKeySet, block, {}, &reader).ok());
  BlockLookup r;
  for (const TestEntry& e : entries) {
    ASSERT_TRUE(reader->Get(e.user_key, kMaxSequenceNumber, &r).ok()) << e.user_key;
    ASSERT_EQ(r.value.ToString(), e.value);
  }
  // Targets outside the common prefix sort before or after the whole block.
  auto it = reader->NewIterator();
  it->Seek("common");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->user_key().ToString(), entries.front().user_key);
  it->Seek("common-prefix0");
  EXPECT_FALSE(it->Valid());
  it->Seek("a");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->user_key().ToString(), entries.front().user_key);
  it->Seek("common-prefix/0000000000000999x");
  EXPECT_FALSE(it->Valid());
}

class ReverseComparator : public Comparator {
 public:
  int Compare(const Slice& a, const Slice& b) const override { return b.compare(a); }
  const char* Name() const override { return "test.Reverse"; }
};

TEST(KeySetV1Test, CustomComparatorHasNoKeyHeadsAndIsChecked) {
  ReverseComparator reverse;
  std::vector<TestEntry> entries = {
      {"c", 1, ValueType::kValue, "3"}, {"b", 1, ValueType::kValue, "2"}, {"a", 1, ValueType::kValue, "1"}};
  BlockBuilderOptions options;
  options.comparator = &reverse;
  AlignedBuffer buffer;
  Slice block = Build(entries, &buffer, options);
  EXPECT_EQ(DecodeFixed32(block.data() + keyset::hdr::kFlags) & keyset::kFlagKeyHeads, 0u);
  std::unique_ptr<BlockReader> reader;
  EXPECT_TRUE(BlockReader::Open(BlockFormat::kKeySet, block, {}, &reader).IsInvalidArgument());
  BlockReadOptions read_options;
  read_options.comparator = &reverse;
  ASSERT_TRUE(BlockReader::Open(BlockFormat::kKeySet, block, read_options, &reader).ok());
  ASSERT_TRUE(reader->Validate().ok());
  auto it = reader->NewIterator();
  it->Seek("b");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value().ToString(), "2");
  it->Next();
  EXPECT_EQ(it->user_key().ToString(), "a");
}

TEST(KeySetV1Test, NoBloomFilter) {
  BlockBuilderOptions options;
  options.bloom_bits_per_key = 0;
  AlignedBuffer buffer;
  auto entries = SequentialEntries(50);
  Slice block = Build(entries, &buffer, options);
  EXPECT_EQ(DecodeFixed32(block.data() + keyset::hdr::kBloomLines), 0u);
  std::unique_ptr<BlockReader> reader;
  ASSERT_TRUE(BlockReader::Open(BlockFormat::kKeySet, block, {}, &reader).ok());
  ASSERT_TRUE(reader->Validate().ok());
  BlockLookup r;
  EXPECT_TRUE(reader->Get(entries[7].user_key, kMaxSequenceNumber, &r).ok());
  EXPECT_TRUE(reader->Get("nope", kMaxSequenceNumber, &r).IsNotFound());
}

// Rewrites the checksum after a deliberate edit, so that structural checks
// (not the checksum) must catch the damage.
void Reseal(char* block, size_t size) {
  uint32_t crc = crc32c::Value(block + keyset::kHeaderSize, size - keyset::kHeaderSize);
  crc = crc32c::Extend(crc, block, keyset::hdr::kChecksum);
  EncodeFixed32(block + keyset::hdr::kChecksum, crc);
}

TEST(KeySetV1Test, TodaysReaderReadsVersionOneBlocks) {
  AlignedBuffer buffer;
  auto entries = SequentialEntries(200);
  Slice block = Build(entries, &buffer);
  ASSERT_EQ(DecodeFixed32(block.data() + keyset::hdr::kVersion), 1u);
  std::unique_ptr<BlockReader> reader;
  ASSERT_TRUE(BlockReader::Open(BlockFormat::kKeySet, block, {}, &reader).ok());
  ASSERT_TRUE(reader->Validate().ok());
  BlockLookup r;
  for (const TestEntry& e : entries) {
    ASSERT_TRUE(reader->Get(e.user_key, kMaxSequenceNumber, &r).ok()) << e.user_key;
    EXPECT_EQ(r.value.ToString(), e.value);
  }
}

TEST(KeySetV1Test, MisalignedBufferIsInvalidArgument) {
  AlignedBuffer buffer;
  Slice block = Build(SequentialEntries(3), &buffer);
  AlignedBuffer copy(block.size() + 8);
  std::memcpy(copy.data() + 4, block.data(), block.size());
  std::unique_ptr<BlockReader> reader;
  EXPECT_TRUE(BlockReader::Open(BlockFormat::kKeySet, Slice(copy.data() + 4, block.size()), {}, &reader)
                  .IsInvalidArgument());
}

TEST(KeySetV1Test, ValidateCatchesStructuralDamageBehindAValidChecksum) {
  auto entries = SequentialEntries(64);
  struct Damage {
    const char* name;
    void (*apply)(char* block);
  };
  const Damage damages[] = {
      {"swap two entry offsets",
       [](char* b) {
         char* offsets = b + DecodeFixed64(b + keyset::hdr::kEntryOffsetsOffset);
         const uint32_t x = DecodeFixed32(offsets + 4 * 5);
         EncodeFixed32(offsets + 4 * 5, DecodeFixed32(offsets + 4 * 6));
         EncodeFixed32(offsets + 4 * 6, x);
       }},
      {"break a skiplist link",
       [](char* b) {
         char* keyset = b + DecodeFixed64(b + keyset::hdr::kKeySetOffset);
         const uint32_t off = DecodeFixed32(b + DecodeFixed64(b + keyset::hdr::kEntryOffsetsOffset) + 4 * 3);
         EncodeFixed64(keyset + off + keyset::v1::ent::kNext + 8, 8);  // level 1 of a height-2 entry
       }},
      {"change a stored key hash",
       [](char* b) {
         char* keyset = b + DecodeFixed64(b + keyset::hdr::kKeySetOffset);
         const uint32_t off = DecodeFixed32(b + DecodeFixed64(b + keyset::hdr::kEntryOffsetsOffset) + 4 * 9);
         EncodeFixed32(keyset + off + keyset::v1::ent::kKeyHash, DecodeFixed32(keyset + off + keyset::v1::ent::kKeyHash) ^ 1);
       }},
      {"change a head fence",
       [](char* b) {
         char* fences = b + DecodeFixed64(b + keyset::hdr::kKeyHeadsOffset) + 8 * 64;
         EncodeFixed64(fences + 8, DecodeFixed64(fences + 8) - 1);
       }},
      {"change a key head",
       [](char* b) {
         char* heads = b + DecodeFixed64(b + keyset::hdr::kKeyHeadsOffset);
         EncodeFixed64(heads + 8 * 10, DecodeFixed64(heads + 8 * 10) + 1);
       }},
  };
  for (const Damage& damage : damages) {
    AlignedBuffer buffer;
    Slice block = Build(entries, &buffer);
    damage.apply(buffer.data());
    Reseal(buffer.data(), block.size());
    std::unique_ptr<BlockReader> reader;
    ASSERT_TRUE(BlockReader::Open(BlockFormat::kKeySet, block, {}, &reader).ok()) << damage.name;
    EXPECT_TRUE(reader->Validate().IsCorruption()) << damage.name;
  }
}

TEST(KeySetV1Test, OutOfRangeEntryIsCorruptionOnRead) {
  AlignedBuffer buffer;
  Slice block = Build(SequentialEntries(20), &buffer);
  char* offsets = buffer.data() + DecodeFixed64(block.data() + keyset::hdr::kEntryOffsetsOffset);
  EncodeFixed32(offsets + 4 * 7, 0xfffffff8u);
  BlockReadOptions options;
  options.verify_checksum = false;
  std::unique_ptr<BlockReader> reader;
  ASSERT_TRUE(BlockReader::Open(BlockFormat::kKeySet, block, options, &reader).ok());
  auto it = reader->NewIterator();
  int seen = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++seen;
  EXPECT_EQ(seen, 7);
  EXPECT_TRUE(it->status().IsCorruption());
  EXPECT_TRUE(reader->Validate().IsCorruption());
}

}  // namespace
}  // namespace jigsaw
