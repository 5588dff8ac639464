// One harness, every format: each check here runs against the KeySet block
// (version 2, and version 1 which is still read) and the classic block
// through the shared BlockBuilder/BlockReader interface.
#include "format/block.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "format/keyset_block.h"
#include "format/keyset_entry.h"
#include "tests/support/block_test_util.h"
#include "util/coding.h"

namespace jigsaw {
namespace {

using test::AlignedBuffer;
using test::TestEntry;

struct Variant {
  BlockFormat format;
  uint32_t keyset_version;  // KeySet only
  const char* name;
};

class BlockTest : public ::testing::TestWithParam<Variant> {
 protected:
  BlockFormat format() const { return GetParam().format; }
  // Builder options of this variant.
  BlockBuilderOptions Options(BlockBuilderOptions options = {}) const {
    options.keyset_version = GetParam().keyset_version;
    return options;
  }

  // Builds `entries` and opens a reader on the result.
  void BuildAndOpen(const std::vector<TestEntry>& entries, const BlockBuilderOptions& given_options = {}) {
    const BlockBuilderOptions build_options = Options(given_options);
    size_t size = 0;
    ASSERT_TRUE(test::BuildBlock(format(), entries, build_options, &buffer_, &size).ok());
    block_ = Slice(buffer_.data(), size);
    BlockReadOptions read_options;
    read_options.comparator = build_options.comparator;
    Status s = BlockReader::Open(format(), block_, read_options, &reader_);
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_TRUE(reader_->Validate().ok()) << reader_->Validate().ToString();
    ASSERT_EQ(reader_->num_entries(), entries.size());
  }

  // Forward and backward iteration must return exactly `entries`.
  void ExpectIterationMatches(const std::vector<TestEntry>& entries) {
    auto it = reader_->NewIterator();
    size_t i = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
      ASSERT_LT(i, entries.size());
      ExpectAt(*it, entries[i]);
    }
    ASSERT_TRUE(it->status().ok()) << it->status().ToString();
    ASSERT_EQ(i, entries.size());
    for (it->SeekToLast(); it->Valid(); it->Prev()) {
      ASSERT_GT(i, 0u);
      ExpectAt(*it, entries[--i]);
    }
    ASSERT_TRUE(it->status().ok());
    ASSERT_EQ(i, 0u);
  }

  static void ExpectAt(const InternalIterator& it, const TestEntry& e) {
    ASSERT_EQ(it.user_key().ToString(), e.user_key);
    ASSERT_EQ(it.sequence(), e.sequence);
    ASSERT_EQ(it.type(), e.type);
    if (e.type == ValueType::kValue) {
      ASSERT_EQ(it.value().ToString(), e.value);
    }
  }

  // Get and Seek agree with the model for every key at several snapshots,
  // and for keys that are not in the block.
  void ExpectLookupsMatch(const std::vector<TestEntry>& entries, std::mt19937_64* rng) {
    std::vector<std::string> probes;
    for (const TestEntry& e : entries) probes.push_back(e.user_key);
    for (int i = 0; i < 50; ++i) probes.push_back("zz-missing-" + std::to_string((*rng)() % 1000));
    probes.push_back("");
    probes.push_back("a");
    auto it = reader_->NewIterator();
    for (const std::string& key : probes) {
      for (SequenceNumber snapshot : {kMaxSequenceNumber, SequenceNumber{500000}, SequenceNumber{0},
                                      SequenceNumber{(*rng)() % 1000000}}) {
        const TestEntry* want = test::ModelGet(entries, key, snapshot);
        BlockLookup got;
        Status s = reader_->Get(key, snapshot, &got);
        if (want == nullptr) {
          ASSERT_TRUE(s.IsNotFound()) << key << "@" << snapshot << ": " << s.ToString();
        } else {
          ASSERT_TRUE(s.ok()) << key << "@" << snapshot << ": " << s.ToString();
          ASSERT_EQ(got.type, want->type);
          ASSERT_EQ(got.sequence, want->sequence);
          if (want->type == ValueType::kValue) {
            ASSERT_EQ(got.value.ToString(), want->value);
          }
        }
        // Seek lands on the first entry >= (key, snapshot).
        it->Seek(key, snapshot);
        size_t expected = 0;
        while (expected < entries.size() &&
               CompareInternal(BytewiseComparator(), entries[expected].user_key,
                               PackTag(entries[expected].sequence, entries[expected].type), key,
                               PackTag(snapshot, ValueType::kValue)) < 0) {
          ++expected;
        }
        if (expected == entries.size()) {
          ASSERT_FALSE(it->Valid());
        } else {
          ASSERT_TRUE(it->Valid());
          ExpectAt(*it, entries[expected]);
          if (expected > 0) {  // Prev after Seek
            it->Prev();
            ASSERT_TRUE(it->Valid());
            ExpectAt(*it, entries[expected - 1]);
          }
        }
      }
    }
  }

  AlignedBuffer buffer_;
  Slice block_;
  std::unique_ptr<BlockReader> reader_;
};

TEST_P(BlockTest, EmptyBlock) {
  BuildAndOpen({});
  auto it = reader_->NewIterator();
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  it->Seek("a");
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok());
  BlockLookup r;
  EXPECT_TRUE(reader_->Get("a", kMaxSequenceNumber, &r).IsNotFound());
}

TEST_P(BlockTest, OneEntry) {
  std::vector<TestEntry> entries = {{"key", 7, ValueType::kValue, "value"}};
  BuildAndOpen(entries);
  ExpectIterationMatches(entries);
  BlockLookup r;
  ASSERT_TRUE(reader_->Get("key", 7, &r).ok());
  EXPECT_EQ(r.value.ToString(), "value");
  EXPECT_TRUE(reader_->Get("key", 6, &r).IsNotFound());  // newer than the snapshot
  EXPECT_TRUE(reader_->Get("kez", kMaxSequenceNumber, &r).IsNotFound());
}

TEST_P(BlockTest, EmptyKeyAndEmptyValue) {
  std::vector<TestEntry> entries = {{"", 3, ValueType::kValue, ""}, {"a", 2, ValueType::kValue, ""}};
  BuildAndOpen(entries);
  ExpectIterationMatches(entries);
  BlockLookup r;
  ASSERT_TRUE(reader_->Get("", kMaxSequenceNumber, &r).ok());
  EXPECT_EQ(r.value.size(), 0u);
}

TEST_P(BlockTest, AllDeletions) {
  std::vector<TestEntry> entries;
  for (int i = 0; i < 500; ++i) entries.push_back({"key" + std::to_string(1000 + i), 9, ValueType::kDeletion, ""});
  BuildAndOpen(entries);
  ExpectIterationMatches(entries);
  BlockLookup r;
  ASSERT_TRUE(reader_->Get("key1200", kMaxSequenceNumber, &r).ok());
  EXPECT_EQ(r.type, ValueType::kDeletion);
  EXPECT_TRUE(r.value.empty());
}

TEST_P(BlockTest, VersionsOfOneKeyAndSnapshots) {
  std::vector<TestEntry> entries;
  entries.push_back({"a", 1, ValueType::kValue, "a1"});
  for (SequenceNumber s = 100; s >= 10; s -= 10) {
    entries.push_back({"k", s, s % 20 == 0 ? ValueType::kDeletion : ValueType::kValue, std::string("v").append(std::to_string(s))});
  }
  entries.push_back({"z", 5, ValueType::kValue, "z5"});
  test::SortInternal(&entries);
  BuildAndOpen(entries);
  ExpectIterationMatches(entries);
  BlockLookup r;
  ASSERT_TRUE(reader_->Get("k", 95, &r).ok());
  EXPECT_EQ(r.sequence, 90u);
  EXPECT_EQ(r.value.ToString(), "v90");
  ASSERT_TRUE(reader_->Get("k", 80, &r).ok());
  EXPECT_EQ(r.type, ValueType::kDeletion);
  EXPECT_TRUE(reader_->Get("k", 9, &r).IsNotFound());
  ASSERT_TRUE(reader_->Get("k", kMaxSequenceNumber, &r).ok());
  EXPECT_EQ(r.sequence, 100u);
}

TEST_P(BlockTest, RandomRoundTrip) {
  std::mt19937_64 rng(301);
  for (int round = 0; round < 6; ++round) {
    std::vector<TestEntry> entries = test::RandomEntries(&rng, 1 + rng() % 2000, 24, 200);
    BuildAndOpen(entries);
    ExpectIterationMatches(entries);
    ExpectLookupsMatch(entries, &rng);
  }
}

TEST_P(BlockTest, LargeKeysAndValues) {
  std::mt19937_64 rng(7);
  std::vector<TestEntry> entries = test::RandomEntries(&rng, 40, 64 * 1024, 64 * 1024);
  BuildAndOpen(entries);
  ExpectIterationMatches(entries);
  ExpectLookupsMatch(entries, &rng);
}

TEST_P(BlockTest, MaximumKeyAndValueSizes) {
  std::vector<TestEntry> entries = {
      {std::string(kMaxKeySize, 'k'), 1, ValueType::kValue, std::string(kMaxValueSize, 'v')},
      {std::string(kMaxKeySize, 'l'), 1, ValueType::kValue, "small"},
  };
  BuildAndOpen(entries);
  ExpectIterationMatches(entries);
  BlockLookup r;
  ASSERT_TRUE(reader_->Get(entries[0].user_key, kMaxSequenceNumber, &r).ok());
  EXPECT_EQ(r.value.size(), kMaxValueSize);
}

TEST_P(BlockTest, OversizedKeyOrValueIsInvalidArgument) {
  AlignedBuffer buffer(1 << 20);
  auto builder = NewBlockBuilder(format(), Options(), buffer.data(), buffer.size());
  EXPECT_TRUE(builder->Add(std::string(kMaxKeySize + 1, 'k'), 1, ValueType::kValue, "v").IsInvalidArgument());
  std::string huge(kMaxValueSize + 1, 'v');
  EXPECT_TRUE(builder->Add("k", 1, ValueType::kValue, huge).IsInvalidArgument());
  EXPECT_TRUE(builder->Add("k", kMaxSequenceNumber + 1, ValueType::kValue, "v").IsInvalidArgument());
  ASSERT_TRUE(builder->Add("k", 1, ValueType::kValue, "v").ok());
  size_t size;
  ASSERT_TRUE(builder->Finish(&size).ok());
  std::unique_ptr<BlockReader> reader;
  ASSERT_TRUE(BlockReader::Open(format(), Slice(buffer.data(), size), {}, &reader).ok());
  EXPECT_EQ(reader->num_entries(), 1u);
}

TEST_P(BlockTest, FullDestinationIsNoSpaceAndBlockStaysUsable) {
  const size_t capacity = 16 * 1024;
  AlignedBuffer buffer(capacity + 64);
  // Canary bytes past the capacity must never be written.
  for (size_t i = capacity; i < capacity + 64; ++i) buffer.data()[i] = '\x5a';
  auto builder = NewBlockBuilder(format(), Options(), buffer.data(), capacity);
  std::vector<TestEntry> added;
  for (int i = 0;; ++i) {
    TestEntry e{"key" + std::to_string(100000 + i), 1, ValueType::kValue, std::string(100, 'v')};
    Status s = builder->Add(e.user_key, e.sequence, e.type, e.value);
    if (s.IsNoSpace()) break;
    ASSERT_TRUE(s.ok()) << s.ToString();
    added.push_back(e);
    ASSERT_LE(builder->CurrentSize(), capacity);
  }
  ASSERT_GT(added.size(), 50u);
  size_t size;
  ASSERT_TRUE(builder->Finish(&size).ok());
  EXPECT_LE(size, capacity);
  for (size_t i = capacity; i < capacity + 64; ++i) ASSERT_EQ(buffer.data()[i], '\x5a');
  block_ = Slice(buffer.data(), size);
  ASSERT_TRUE(BlockReader::Open(format(), block_, {}, &reader_).ok());
  ExpectIterationMatches(added);
}

TEST_P(BlockTest, CurrentSizeIsExact) {
  std::mt19937_64 rng(11);
  std::vector<TestEntry> entries = test::RandomEntries(&rng, 300, 30, 300);
  AlignedBuffer buffer(1 << 20);
  auto builder = NewBlockBuilder(format(), Options(), buffer.data(), buffer.size());
  for (const TestEntry& e : entries) {
    const size_t before = builder->CurrentSize();
    ASSERT_TRUE(builder->Add(e.user_key, e.sequence, e.type, e.value).ok());
    ASSERT_LE(builder->CurrentSize() - before, MaxEntryFootprint(format(), e.user_key.size(), e.value.size()));
  }
  const size_t predicted = builder->CurrentSize();
  size_t size;
  ASSERT_TRUE(builder->Finish(&size).ok());
  EXPECT_EQ(size, predicted);
}

TEST_P(BlockTest, ARestartedBuilderBuildsWhatAFreshOneBuilds) {
  std::mt19937_64 rng(12);
  const std::vector<TestEntry> first = test::RandomEntries(&rng, 200, 20, 80);
  const std::vector<TestEntry> second = test::RandomEntries(&rng, 150, 24, 60);
  AlignedBuffer fresh_buffer(1 << 20), reused_buffer(1 << 20);
  auto fresh = NewBlockBuilder(format(), Options(), fresh_buffer.data(), fresh_buffer.size());
  for (const TestEntry& e : second) ASSERT_TRUE(fresh->Add(e.user_key, e.sequence, e.type, e.value).ok());
  size_t fresh_size = 0;
  ASSERT_TRUE(fresh->Finish(&fresh_size).ok());

  auto reused = NewBlockBuilder(format(), Options(), reused_buffer.data(), reused_buffer.size());
  // Restarted after a finished block, and again in the middle of one.
  for (size_t keep : {first.size(), first.size() / 2}) {
    for (size_t i = 0; i < keep; ++i) {
      ASSERT_TRUE(reused->Add(first[i].user_key, first[i].sequence, first[i].type, first[i].value).ok());
    }
    size_t size = 0;
    if (keep == first.size()) {
      ASSERT_TRUE(reused->Finish(&size).ok());
    }
    if (!reused->Restart()) GTEST_SKIP() << "this builder does not restart";
    EXPECT_EQ(reused->num_entries(), 0u);
  }
  for (const TestEntry& e : second) ASSERT_TRUE(reused->Add(e.user_key, e.sequence, e.type, e.value).ok());
  size_t reused_size = 0;
  ASSERT_TRUE(reused->Finish(&reused_size).ok());
  ASSERT_EQ(reused_size, fresh_size);
  EXPECT_EQ(std::memcmp(reused_buffer.data(), fresh_buffer.data(), fresh_size), 0);
}

TEST_P(BlockTest, EveryTruncationIsCorruption) {
  std::mt19937_64 rng(5);
  std::vector<TestEntry> entries = test::RandomEntries(&rng, 60, 12, 40);
  BuildAndOpen(entries);
  for (size_t len = 0; len < block_.size(); ++len) {
    AlignedBuffer copy(len);
    std::memcpy(copy.data(), block_.data(), len);
    for (bool verify : {true, false}) {
      BlockReadOptions options;
      options.verify_checksum = verify;
      std::unique_ptr<BlockReader> reader;
      Status s = BlockReader::Open(format(), Slice(copy.data(), len), options, &reader);
      ASSERT_TRUE(s.IsCorruption()) << "len " << len << ": " << s.ToString();
    }
  }
}

TEST_P(BlockTest, ByteFlipsAreCorruptionWithChecksum) {
  std::mt19937_64 rng(6);
  std::vector<TestEntry> entries = test::RandomEntries(&rng, 80, 12, 40);
  BuildAndOpen(entries);
  AlignedBuffer copy(block_.size());
  for (size_t pos = 0; pos < block_.size(); ++pos) {
    std::memcpy(copy.data(), block_.data(), block_.size());
    copy.data()[pos] = static_cast<char>(copy.data()[pos] ^ (1 + rng() % 255));
    std::unique_ptr<BlockReader> reader;
    Status s = BlockReader::Open(format(), Slice(copy.data(), block_.size()), {}, &reader);
    // A flip in the version field may read as a newer version instead.
    ASSERT_TRUE(s.IsCorruption() || s.IsNotSupported()) << "pos " << pos << ": " << s.ToString();
  }
}

// Without checksum verification, damage must still never cause an
// out-of-bounds access (run under ASan in CI): each read either works or
// reports Corruption.
TEST_P(BlockTest, ByteFlipsWithoutChecksumNeverCrash) {
  std::mt19937_64 rng(8);
  std::vector<TestEntry> entries = test::RandomEntries(&rng, 80, 12, 40);
  BuildAndOpen(entries);
  AlignedBuffer copy(block_.size());
  BlockReadOptions options;
  options.verify_checksum = false;
  size_t detected = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::memcpy(copy.data(), block_.data(), block_.size());
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) {
      const size_t pos = rng() % block_.size();
      copy.data()[pos] = static_cast<char>(copy.data()[pos] ^ (1 + rng() % 255));
    }
    std::unique_ptr<BlockReader> reader;
    Status s = BlockReader::Open(format(), Slice(copy.data(), block_.size()), options, &reader);
    if (!s.ok()) {
      ASSERT_TRUE(s.IsCorruption() || s.IsNotSupported() || s.IsInvalidArgument()) << s.ToString();
      ++detected;
      continue;
    }
    if (!reader->Validate().ok()) ++detected;
    auto it = reader->NewIterator();
    size_t steps = 0;
    for (it->SeekToFirst(); it->Valid() && steps < 10000; it->Next(), ++steps) {
      (void)it->user_key().size();
      (void)it->value().size();
    }
    for (it->SeekToLast(); it->Valid() && steps < 20000; it->Prev(), ++steps) {
    }
    ASSERT_TRUE(it->status().ok() || it->status().IsCorruption());
    for (const TestEntry& e : entries) {
      BlockLookup r;
      Status g = reader->Get(e.user_key, kMaxSequenceNumber, &r);
      ASSERT_TRUE(g.ok() || g.IsNotFound() || g.IsCorruption()) << g.ToString();
      it->Seek(e.user_key);
    }
  }
  EXPECT_GT(detected, 0u);
}

TEST_P(BlockTest, WrongFormatIsCorruption) {
  std::vector<TestEntry> entries = {{"k", 1, ValueType::kValue, "v"}};
  BuildAndOpen(entries);
  const BlockFormat other = format() == BlockFormat::kKeySet ? BlockFormat::kClassic : BlockFormat::kKeySet;
  std::unique_ptr<BlockReader> reader;
  EXPECT_TRUE(BlockReader::Open(other, block_, {}, &reader).IsCorruption());
}

// Runs go to a builder exactly when BuilderTakesRuns says its options make
// one that takes them, through the BlockBuilder interface.
TEST_P(BlockTest, AppendRunWorksWhereBuilderTakesRuns) {
  std::vector<TestEntry> source_entries;
  for (int i = 0; i < 40; ++i) source_entries.push_back({"k" + std::to_string(100 + i), 7, ValueType::kValue, "v"});
  AlignedBuffer source;
  size_t source_size = 0;
  ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, source_entries, {}, &source, &source_size).ok());
  std::unique_ptr<BlockReader> reader;
  ASSERT_TRUE(BlockReader::Open(BlockFormat::kKeySet, Slice(source.data(), source_size), {}, &reader).ok());
  auto it = reader->NewIterator();
  it->SeekToFirst();
  EntryRun run;
  ASSERT_EQ(it->PeekRun(nullptr, 0, 1000, &run), 40u);

  AlignedBuffer buffer(1 << 16);
  auto builder = NewBlockBuilder(format(), Options(), buffer.data(), buffer.size());
  const bool takes = BuilderTakesRuns(format(), Options());
  EXPECT_EQ(builder->TakesRuns(), takes);
  ASSERT_EQ(builder->AppendRun(run, buffer.size()), takes ? 40u : 0u);
  if (!takes) return;
  size_t size = 0;
  ASSERT_TRUE(builder->Finish(&size).ok());
  block_ = Slice(buffer.data(), size);
  ASSERT_TRUE(BlockReader::Open(format(), block_, {}, &reader_).ok());
  ExpectIterationMatches(source_entries);
}

// KeySet: both sizings answer for the block the builder makes, and a
// builder that places values, where the version has one, makes a block
// holding the same entries.
TEST_P(BlockTest, SizingAndPlacedValuesAgreeWithTheBuilder) {
  if (format() != BlockFormat::kKeySet) return;  // KeySet capabilities
  std::mt19937_64 rng(21);
  for (size_t count : {0, 1, 7, 64, 700}) {
    std::vector<TestEntry> entries = test::RandomEntries(&rng, count, 30, 200);
    size_t size = 0;
    ASSERT_TRUE(test::BuildBlock(format(), entries, Options(), &buffer_, &size).ok());
    keyset::BlockSizer sizer(Options());
    uint64_t value_bytes = 0, sizing_bytes = 0;
    for (const TestEntry& e : entries) {
      sizer.Add(e.user_key.size(), e.value.size());
      value_bytes += e.value.size();
      sizing_bytes += keyset::SizingEntryBytes(e.user_key.size());
    }
    EXPECT_EQ(sizer.size(), size) << count;
    uint64_t bound = 0;
    if (keyset::BlockSizeBound(Options(), entries.size(), value_bytes, sizing_bytes, &bound)) {
      EXPECT_GE(bound, size) << count;
      EXPECT_LE(bound, size + 2 * entries.size() + 8) << count;
    }

    AlignedBuffer placed_buffer(size + 64);
    std::unique_ptr<keyset::PlacedBuilder> placed =
        keyset::NewPlacedBuilder(Options(), placed_buffer.data(), placed_buffer.size(), value_bytes);
    if (placed == nullptr) continue;
    EXPECT_FALSE(placed->TakesRuns());
    std::vector<keyset::PlacedEntry> run;
    uint64_t offset = 0;
    for (const TestEntry& e : entries) {
      std::memcpy(placed->value_buffer() + offset, e.value.data(), e.value.size());
      run.push_back(keyset::PlacedEntry{e.user_key, PackTag(e.sequence, e.type), offset,
                                        static_cast<uint32_t>(e.value.size()), bloom::KeyHash(e.user_key),
                                        e.value.data()});
      offset += e.value.size();
    }
    ASSERT_TRUE(placed->AddPlacedRun(run.data(), run.size()).ok());
    size_t placed_size = 0;
    ASSERT_TRUE(placed->Finish(&placed_size).ok());
    block_ = Slice(placed_buffer.data(), placed_size);
    ASSERT_TRUE(BlockReader::Open(format(), block_, {}, &reader_).ok());
    ASSERT_TRUE(reader_->Validate().ok());
    ExpectIterationMatches(entries);
  }
}

// KeySet: an entry cursor reads a block exactly when HasEntryLayout says
// so, and ReadOutline reads the header of such a block.
TEST_P(BlockTest, EntryLayoutAndOutline) {
  if (format() != BlockFormat::kKeySet) return;  // KeySet capabilities
  std::mt19937_64 rng(22);
  std::vector<TestEntry> entries = test::RandomEntries(&rng, 100, 20, 50);
  BuildAndOpen(entries);
  const bool current = keyset::HasEntryLayout(block_);
  EXPECT_EQ(current, BuilderTakesRuns(format(), Options()));
  keyset::EntryCursor cursor;
  EXPECT_EQ(cursor.Reset(block_, BytewiseComparator()).ok(), current);

  keyset::BlockOutline outline;
  const Status s = keyset::ReadOutline(block_.data(), block_.size(), BytewiseComparator(), &outline);
  if (!current) {
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    return;
  }
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(outline.count, entries.size());
  EXPECT_TRUE(outline.piece_reads);  // bytewise: key heads
  EXPECT_GT(outline.bloom.lines, 0u);
  EXPECT_EQ(outline.bloom_offset + uint64_t{outline.bloom.lines} * bloom::kLineBytes, block_.size());
  EXPECT_TRUE(keyset::ReadOutline(block_.data(), block_.size() - 8, BytewiseComparator(), &outline).IsCorruption());
}

// DescribeHeader prints every header field, named as the block's version
// names them.
TEST(KeySetHeaderTest, DescribeHeaderPrintsEveryField) {
  AlignedBuffer header(keyset::kHeaderSize);
  char* h = header.data();
  EncodeFixed64(h + keyset::hdr::kMagic, keyset::kMagic);
  EncodeFixed32(h + keyset::hdr::kVersion, 2);
  EncodeFixed32(h + keyset::hdr::kHeaderSize, 128);
  EncodeFixed64(h + keyset::hdr::kBlockSize, 384);
  EncodeFixed32(h + keyset::hdr::kFlags, 1);
  EncodeFixed32(h + keyset::hdr::kEntryCount, 2);
  EncodeFixed64(h + keyset::hdr::kValueBufferSize, 12);
  EncodeFixed64(h + keyset::hdr::kKeySetOffset, 144);
  EncodeFixed64(h + keyset::hdr::kKeySetSize, 136);
  EncodeFixed64(h + keyset::hdr::kEntryOffsetsOffset, 280);
  EncodeFixed64(h + keyset::hdr::kKeyHeadsOffset, 288);
  EncodeFixed64(h + keyset::hdr::kBloomOffset, 320);
  EncodeFixed32(h + keyset::hdr::kBloomLines, 1);
  EncodeFixed32(h + keyset::hdr::kBloomProbes, 8);
  EncodeFixed32(h + keyset::hdr::kKeyHeadSkip, 4);
  EncodeFixed32(h + keyset::hdr::kMaxHeightUsed, 1);
  EncodeFixed32(h + keyset::hdr::kComparatorId, 0xb9a7283a);
  EncodeFixed32(h + keyset::hdr::kChecksum, 0x81bc2dc2);
  EXPECT_EQ(keyset::DescribeHeader(Slice(h, keyset::kHeaderSize), "  "),
            "  magic 534b57415347494a (JIGSAWKS), format_version 2, header_size 128, block_size 384\n"
            "  flags 0x1, entry_count 2, value_buffer_size 12, keyset_offset 144, keyset_size 136\n"
            "  samples_offset 280, sample_heads_offset 288, bloom_offset 320, bloom_lines 1, bloom_probes 8\n"
            "  key_head_skip 4, max_height 1, comparator_id b9a7283a, checksum 81bc2dc2\n");
  EncodeFixed32(h + keyset::hdr::kVersion, 1);
  EncodeFixed64(h + keyset::hdr::kMagic, 7);
  EncodeFixed32(h + keyset::hdr::kFlags, 0);
  EXPECT_EQ(keyset::DescribeHeader(Slice(h, keyset::kHeaderSize), ""),
            "magic 0000000000000007 (not a KeySet block), format_version 1, header_size 128, block_size 384\n"
            "flags 0, entry_count 2, value_buffer_size 12, keyset_offset 144, keyset_size 136\n"
            "entry_offsets_offset 280, key_heads_offset 288, bloom_offset 320, bloom_lines 1, bloom_probes 8\n"
            "key_head_skip 4, max_height 1, comparator_id b9a7283a, checksum 81bc2dc2\n");
  EXPECT_EQ(keyset::DescribeHeader(Slice(h, 5), "> "), "> (5 bytes: shorter than a KeySet header)\n");
}

// Built from the same entries, both formats iterate identically, forwards
// and backwards, and answer every lookup the same way.
TEST(BlockFormatsTest, BothFormatsIterateIdentically) {
  std::mt19937_64 rng(99);
  for (int round = 0; round < 4; ++round) {
    std::vector<TestEntry> entries = test::RandomEntries(&rng, 1 + rng() % 1500, 20, 300);
    AlignedBuffer buffers[2];
    std::unique_ptr<BlockReader> readers[2];
    const BlockFormat formats[2] = {BlockFormat::kKeySet, BlockFormat::kClassic};
    for (int f = 0; f < 2; ++f) {
      size_t size = 0;
      ASSERT_TRUE(test::BuildBlock(formats[f], entries, {}, &buffers[f], &size).ok());
      ASSERT_TRUE(BlockReader::Open(formats[f], Slice(buffers[f].data(), size), {}, &readers[f]).ok());
    }
    auto a = readers[0]->NewIterator();
    auto b = readers[1]->NewIterator();
    auto same = [&]() {
      ASSERT_EQ(a->Valid(), b->Valid());
      if (!a->Valid()) return;
      ASSERT_EQ(a->user_key(), b->user_key());
      ASSERT_EQ(a->sequence(), b->sequence());
      ASSERT_EQ(a->type(), b->type());
      ASSERT_EQ(a->value(), b->value());
    };
    size_t n = 0;
    for (a->SeekToFirst(), b->SeekToFirst(); a->Valid(); a->Next(), b->Next(), ++n) same();
    same();
    EXPECT_EQ(n, entries.size());
    for (a->SeekToLast(), b->SeekToLast(); a->Valid(); a->Prev(), b->Prev()) same();
    same();
    for (int i = 0; i < 300; ++i) {
      const std::string key = entries[rng() % entries.size()].user_key + (i % 3 == 0 ? "x" : "");
      const SequenceNumber snapshot = rng() % 1200000;
      a->Seek(key, snapshot);
      b->Seek(key, snapshot);
      same();
      BlockLookup ra, rb;
      Status sa = readers[0]->Get(key, snapshot, &ra);
      Status sb = readers[1]->Get(key, snapshot, &rb);
      ASSERT_EQ(sa.code(), sb.code());
      if (sa.ok()) {
        ASSERT_EQ(ra.sequence, rb.sequence);
        ASSERT_EQ(ra.value, rb.value);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, BlockTest,
                         ::testing::Values(Variant{BlockFormat::kKeySet, 2, "KeySetV2"},
                                           Variant{BlockFormat::kKeySet, 1, "KeySetV1"},
                                           Variant{BlockFormat::kClassic, 2, "Classic"}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace jigsaw
