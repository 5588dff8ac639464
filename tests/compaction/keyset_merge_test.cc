// The merge of KeySet blocks as bytes (compaction/merge.h, MergeBlockScans): the same
// surviving entries as MergeInto over iterators, under every rule, with
// inputs of many blocks; most entries copied as bytes; blocks of another
// version refused with NotSupported; damage reported, never read past.
#include "compaction/merge.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "format/keyset_block.h"
#include "format/keyset_entry.h"
#include "table/merging_iterator.h"
#include "tests/support/block_test_util.h"
#include "tests/support/collecting_sink.h"

namespace jigsaw {
namespace {

using test::AlignedBuffer;
using test::TestEntry;
using CollectingSink = test::CollectingKeySetSink;

class ReverseComparator final : public Comparator {
 public:
  int Compare(const Slice& a, const Slice& b) const override { return b.compare(a); }
  const char* Name() const override { return "test.Reverse"; }
};

// Inputs of several blocks each (an L0 table, or a level's tables one after
// another); sequence numbers unique across them, as in an LSM tree.
struct Inputs {
  std::vector<std::vector<AlignedBuffer>> buffers;
  std::vector<std::vector<Slice>> blocks;  // per input, in key order
};

void BuildWithValuesReversed(const std::vector<TestEntry>& entries, const BlockBuilderOptions& options,
                             AlignedBuffer* buffer, size_t* size) {
  size_t capacity = 4096, value_bytes = 0;
  for (const TestEntry& e : entries) {
    capacity += MaxEntryFootprint(BlockFormat::kKeySet, e.user_key.size(), e.value.size());
    value_bytes += e.value.size();
  }
  buffer->Resize(capacity);
  auto builder = keyset::NewPlacedBuilder(options, buffer->data(), capacity, value_bytes);
  if (builder == nullptr) {  // a version whose values lie in key order
    ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, entries, options, buffer, size).ok());
    return;
  }
  uint64_t end = value_bytes;
  for (const TestEntry& e : entries) {
    end -= e.value.size();
    std::memcpy(builder->value_buffer() + end, e.value.data(), e.value.size());
    ASSERT_TRUE(builder->AddPlaced(e.user_key, e.sequence, e.type, end, e.value.size(),
                                   bloom::KeyHash(e.user_key)).ok());
  }
  ASSERT_TRUE(builder->Finish(size).ok());
}

void MakeInputs(std::mt19937_64* rng, int count, BlockBuilderOptions options, Inputs* inputs) {
  std::set<uint64_t> used_sequences;
  inputs->buffers.resize(count);
  inputs->blocks.resize(count);
  for (int b = 0; b < count; ++b) {
    std::vector<TestEntry> entries;
    // Dense and sparse key ranges, so that runs of all lengths occur.
    const int stride = 1 + b * 3;
    for (int i = 0; i < 3000; i += stride) {
      if ((*rng)() % 3 == 0) continue;
      char key[24];
      std::snprintf(key, sizeof(key), (*rng)() % 2 ? "key%06d" : "key%06d-long-suffix", i);
      const int versions = (*rng)() % 10 == 0 ? 3 : 1;
      for (int v = 0; v < versions; ++v) {
        uint64_t sequence;
        do {
          sequence = 1 + (*rng)() % 100000;
        } while (!used_sequences.insert(sequence).second);
        const bool deletion = (*rng)() % 8 == 0;
        entries.push_back({key, sequence, deletion ? ValueType::kDeletion : ValueType::kValue,
                           deletion ? "" : std::string((*rng)() % 60, static_cast<char>('a' + b))});
      }
    }
    std::sort(entries.begin(), entries.end(), [&](const TestEntry& x, const TestEntry& y) {
      const int r = options.comparator->Compare(x.user_key, y.user_key);
      return r != 0 ? r < 0 : x.sequence > y.sequence;
    });
    // Cut into blocks of random length; a key's versions may straddle two.
    for (size_t start = 0; start < entries.size();) {
      const size_t n = std::min<size_t>(entries.size() - start, 1 + (*rng)() % 400);
      std::vector<TestEntry> part(entries.begin() + start, entries.begin() + start + n);
      inputs->buffers[b].emplace_back();
      size_t size = 0;
      if (b == 0) {
        // As a flush lays blocks out: values in the order they were
        // written, here the reverse of the keys' -- adjacent entries whose
        // values are not adjacent, which no run may join.
        BuildWithValuesReversed(part, options, &inputs->buffers[b].back(), &size);
      } else {
        ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, part, options, &inputs->buffers[b].back(), &size).ok());
      }
      start += n;
    }
    for (auto& buffer : inputs->buffers[b]) {
      inputs->blocks[b].push_back(Slice(buffer.data(), keyset::kHeaderSize));
    }
  }
  // The sizes, now that the buffers no longer move.
  for (int b = 0; b < count; ++b) {
    for (size_t k = 0; k < inputs->buffers[b].size(); ++k) {
      const char* data = inputs->buffers[b][k].data();
      inputs->blocks[b][k] = Slice(data, DecodeFixed64(data + keyset::hdr::kBlockSize));
    }
  }
}

// A scan over blocks given as bytes. Each block is copied into one buffer
// that the next block overwrites, as an SSD table's read window is reused:
// a merge still pointing into a block it has left reads garbage.
class SliceScan final : public BlockScan {
 public:
  explicit SliceScan(std::vector<Slice> blocks) : blocks_(std::move(blocks)) {}
  bool NextBlock(Slice* block) override {
    if (next_ >= blocks_.size()) return false;
    const Slice& from = blocks_[next_++];
    if (window_.size() < from.size()) window_.Resize(from.size());
    std::memset(window_.data(), 0xee, window_.size());
    std::memcpy(window_.data(), from.data(), from.size());
    *block = Slice(window_.data(), from.size());
    return true;
  }
  Status status() const override { return Status::OK(); }

 private:
  const std::vector<Slice> blocks_;
  size_t next_ = 0;
  AlignedBuffer window_;
};

std::vector<TestEntry> MergeAsBytes(const Inputs& inputs, const MergeRules& rules, size_t block_bytes,
                                    uint64_t* read, uint64_t* spliced, uint64_t* added = nullptr) {
  std::vector<std::unique_ptr<BlockScan>> scans;
  for (const auto& blocks : inputs.blocks) scans.push_back(std::make_unique<SliceScan>(blocks));
  CollectingSink sink(/*take_runs=*/true, block_bytes);
  EXPECT_TRUE(MergeBlockScans(std::move(scans), rules, &sink, nullptr, nullptr, read, spliced).ok());
  if (added != nullptr) *added = sink.added;
  return sink.entries;
}

std::vector<TestEntry> MergeThroughIterators(const Inputs& inputs, const MergeRules& rules, size_t block_bytes) {
  std::vector<std::unique_ptr<BlockReader>> readers;
  std::vector<std::unique_ptr<InternalIterator>> children;
  for (const auto& blocks : inputs.blocks) {
    for (const Slice& block : blocks) {
      std::unique_ptr<BlockReader> reader;
      EXPECT_TRUE(BlockReader::Open(BlockFormat::kKeySet, block, {}, &reader).ok());
      children.push_back(reader->NewIterator());
      readers.push_back(std::move(reader));
    }
  }
  auto input = NewMergingIterator(rules.ucmp, std::move(children));
  CollectingSink sink(/*take_runs=*/true, block_bytes);
  uint64_t read = 0;
  EXPECT_TRUE(MergeInto(input.get(), rules, &sink, nullptr, &read).ok());
  return sink.entries;
}

void ExpectSameEntries(const std::vector<TestEntry>& got, const std::vector<TestEntry>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(got[i].user_key, want[i].user_key) << i;
    ASSERT_EQ(got[i].sequence, want[i].sequence) << i;
    ASSERT_EQ(got[i].type, want[i].type) << i;
    ASSERT_EQ(got[i].value, want[i].value) << i;
  }
}

TEST(KeySetMergeTest, KeepsWhatMergeIntoKeeps) {
  std::mt19937_64 rng(2026);
  for (int round = 0; round < 8; ++round) {
    Inputs inputs;
    MakeInputs(&rng, 1 + round % 4, BlockBuilderOptions(), &inputs);
    MergeRules rules;
    rules.ucmp = BytewiseComparator();
    // Every version visible to every reader (shadowed ones dropped), or a
    // snapshot in the middle of the sequences (some kept).
    rules.smallest_snapshot = round % 2 == 0 ? 200000 : 50000;
    // With a base version holding nothing below: tombstones visible to
    // every reader go too.
    Version empty;
    if (round % 4 >= 2) rules.base = &empty;
    for (size_t block_bytes : {size_t{4096}, size_t{1} << 20}) {
      uint64_t read = 0, spliced = 0, added = 0;
      const auto as_bytes = MergeAsBytes(inputs, rules, block_bytes, &read, &spliced, &added);
      const auto iterated = MergeThroughIterators(inputs, rules, block_bytes);
      ExpectSameEntries(as_bytes, iterated);
      uint64_t input_entries = 0;
      for (const auto& blocks : inputs.blocks) {
        for (const Slice& block : blocks) input_entries += DecodeFixed32(block.data() + keyset::hdr::kEntryCount);
      }
      EXPECT_EQ(read, input_entries);
      // Every survivor is copied as bytes but tombstones, older versions
      // kept for a snapshot, and entries too big for what an output had left.
      EXPECT_EQ(spliced + added, as_bytes.size());
      EXPECT_GT(spliced, as_bytes.size() / 2);
    }
  }
}

TEST(KeySetMergeTest, KeysOfAnyComparatorMergeInItsOrder) {
  // The reverse order has no key heads: every comparison goes through it.
  ReverseComparator reverse;
  BlockBuilderOptions options;
  options.comparator = &reverse;
  std::mt19937_64 rng(5);
  Inputs inputs;
  MakeInputs(&rng, 3, options, &inputs);
  MergeRules rules;
  rules.ucmp = options.comparator;
  rules.smallest_snapshot = 200000;
  uint64_t read = 0, spliced = 0;
  std::vector<std::unique_ptr<BlockScan>> scans;
  for (const auto& blocks : inputs.blocks) scans.push_back(std::make_unique<SliceScan>(blocks));
  std::vector<TestEntry> got;
  // The collecting sink builds bytewise blocks; here only the order of what
  // reaches it matters, so collect at the sink's door.
  class OrderSink final : public OutputSink {
   public:
    explicit OrderSink(std::vector<TestEntry>* out) : out_(out) {}
    Status CloseIfFull(size_t, size_t, bool* closed) override {
      *closed = false;
      return Status::OK();
    }
    Status Add(const InternalIterator& e) override {
      out_->push_back({e.user_key().ToString(), e.sequence(), e.type(), e.value().ToString()});
      return Status::OK();
    }
    bool TakesRuns() const override { return true; }
    Status AppendRun(const EntryRun& run, uint32_t* taken) override {
      for (uint32_t i = 0; i < run.count; ++i) {
        Slice key;
        uint64_t tag = 0;
        keyset::RunEntry(run, i, &key, &tag);
        out_->push_back({key.ToString(), TagSequence(tag), TagType(tag), ""});
      }
      *taken = run.count;
      return Status::OK();
    }
    Status Finish() override { return Status::OK(); }
    void Abandon() override {}

   private:
    std::vector<TestEntry>* out_;
  } sink(&got);
  ASSERT_TRUE(MergeBlockScans(std::move(scans), rules, &sink, nullptr, nullptr, &read, &spliced).ok());
  ASSERT_FALSE(got.empty());
  for (size_t i = 1; i < got.size(); ++i) {
    ASSERT_LT(rules.ucmp->Compare(got[i - 1].user_key, got[i].user_key), 0) << i;
  }
}

TEST(KeySetMergeTest, AVersionOneBlockIsNotSupported) {
  BlockBuilderOptions v1;
  v1.keyset_version = 1;
  std::mt19937_64 rng(9);
  Inputs inputs;
  MakeInputs(&rng, 2, v1, &inputs);
  MergeRules rules;
  rules.ucmp = BytewiseComparator();
  std::vector<std::unique_ptr<BlockScan>> scans;
  for (const auto& blocks : inputs.blocks) scans.push_back(std::make_unique<SliceScan>(blocks));
  CollectingSink sink(/*take_runs=*/true, 4096);
  Status s = MergeBlockScans(std::move(scans), rules, &sink, nullptr, nullptr, nullptr, nullptr);
  EXPECT_TRUE(s.IsNotSupported()) << s.ToString();
}

TEST(KeySetMergeTest, ADamagedLinkIsCorruptionNotAStrayRead) {
  std::vector<TestEntry> entries;
  for (int i = 0; i < 200; ++i) entries.push_back({"k" + std::to_string(1000 + i), 1 + uint64_t(i), ValueType::kValue, "v"});
  test::SortInternal(&entries);
  AlignedBuffer buffer;
  size_t size = 0;
  ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, entries, {}, &buffer, &size).ok());
  keyset::BlockOutline outline;
  ASSERT_TRUE(keyset::ReadOutline(buffer.data(), size, BytewiseComparator(), &outline).ok());
  // The 50th entry's level-0 link leads far past the key set.
  keyset::EntryCursor cursor;
  ASSERT_TRUE(cursor.Reset(Slice(buffer.data(), size), BytewiseComparator()).ok());
  for (int i = 0; i < 50; ++i) cursor.Next();
  ASSERT_TRUE(cursor.Valid());
  EncodeFixed32(const_cast<char*>(cursor.entry_bytes()) + keyset::ent::kNext, 1u << 30);

  std::vector<std::unique_ptr<BlockScan>> scans;
  scans.push_back(NewSingleBlockScan(Slice(buffer.data(), size)));
  MergeRules rules;
  rules.ucmp = BytewiseComparator();
  CollectingSink sink(/*take_runs=*/true, 1 << 20);
  uint64_t read = 0;
  Status s = MergeBlockScans(std::move(scans), rules, &sink, nullptr, nullptr, &read, nullptr);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_EQ(read, 51u);
}

TEST(KeySetMergeTest, ASinkThatTakesNoRunsIsNotSupported) {
  class NoRuns final : public OutputSink {
   public:
    Status CloseIfFull(size_t, size_t, bool* closed) override {
      *closed = false;
      return Status::OK();
    }
    Status Add(const InternalIterator&) override { return Status::OK(); }
    Status Finish() override { return Status::OK(); }
    void Abandon() override {}
  } sink;
  MergeRules rules;
  rules.ucmp = BytewiseComparator();
  EXPECT_TRUE(MergeBlockScans({}, rules, &sink, nullptr, nullptr, nullptr, nullptr).IsNotSupported());
}

}  // namespace
}  // namespace jigsaw
