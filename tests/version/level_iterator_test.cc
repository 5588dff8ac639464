// Level iterators (version/level_iterator.h) over pmem tables with disjoint key
// ranges: one run like the model, forwards, backwards, seeks and scans; the
// NVM timing charge of a level -- one random read per seek, as one source.
#include "version/level_iterator.h"

#include <gtest/gtest.h>

#include <random>

#include "pmem/pmem_table.h"
#include "tests/support/block_test_util.h"

namespace jigsaw {
namespace {

using test::TestEntry;

class LevelIteratorTest : public ::testing::Test {
 protected:
  // The model's entries as `count` tables, cut between user keys (a level's
  // tables never share one); timed by `timing` if not null.
  void MakeLevel(uint64_t seed, size_t count, const pmem::NvmTiming* timing) {
    std::mt19937_64 rng(seed);
    model_ = test::RandomEntries(&rng, 1000, 5, 12);
    std::vector<std::vector<TestEntry>> parts(1);
    for (size_t i = 0; i < model_.size(); ++i) {
      const bool new_key = i > 0 && model_[i].user_key != model_[i - 1].user_key;
      if (new_key && parts.back().size() >= model_.size() / count && parts.size() < count) parts.emplace_back();
      parts.back().push_back(model_[i]);
    }
    ASSERT_EQ(parts.size(), count);
    buffers_.resize(count);
    for (size_t t = 0; t < count; ++t) {
      size_t size = 0;
      ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, parts[t], BlockBuilderOptions(), &buffers_[t], &size).ok());
      std::unique_ptr<BlockReader> reader;
      ASSERT_TRUE(
          BlockReader::Open(BlockFormat::kKeySet, Slice(buffers_[t].data(), size), BlockReadOptions(), &reader)
              .ok());
      auto meta = std::make_shared<TableMeta>();
      meta->smallest = parts[t].front().user_key;
      meta->largest = parts[t].back().user_key;
      meta->entries = parts[t].size();
      meta->table = pmem::NewPmemTable(std::move(reader), Slice(buffers_[t].data(), size), t + 1, /*guard_reads=*/true);
      if (timing != nullptr) meta->table = pmem::NewNvmTimedTable(std::move(meta->table), timing, size);
      tables_.push_back(std::move(meta));
    }
  }

  std::vector<TestEntry> model_;
  std::vector<test::AlignedBuffer> buffers_;
  std::vector<TableRef> tables_;
};

TEST_F(LevelIteratorTest, ReadsTheTablesAsOneRun) {
  MakeLevel(3, 6, nullptr);
  auto it = NewLevelIterator(BytewiseComparator(), tables_, ReadOptions());
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++i) {
    ASSERT_LT(i, model_.size());
    ASSERT_EQ(it->user_key().ToString(), model_[i].user_key);
    ASSERT_EQ(it->sequence(), model_[i].sequence);
  }
  EXPECT_EQ(i, model_.size());
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    ASSERT_GT(i, 0u);
    --i;
    ASSERT_EQ(it->user_key().ToString(), model_[i].user_key);
    ASSERT_EQ(it->sequence(), model_[i].sequence);
  }
  EXPECT_EQ(i, 0u);
  std::mt19937_64 rng(9);
  for (int n = 0; n < 300; ++n) {
    const TestEntry& target = model_[rng() % model_.size()];
    const SequenceNumber sequence = rng() % 2 == 0 ? kMaxSequenceNumber : rng() % 1000000;
    it->Seek(target.user_key, sequence);
    const size_t at = test::ModelSeek(model_, target.user_key, sequence);
    ASSERT_EQ(it->Valid(), at < model_.size());
    if (at < model_.size()) {
      ASSERT_EQ(it->user_key().ToString(), model_[at].user_key);
      ASSERT_EQ(it->sequence(), model_[at].sequence);
    }
  }
  EXPECT_TRUE(it->status().ok());

  auto scan = NewLevelScanIterator(BytewiseComparator(), tables_, nullptr);
  i = 0;
  for (scan->SeekToFirst(); scan->Valid(); scan->Next(), ++i) {
    ASSERT_LT(i, model_.size());
    ASSERT_EQ(scan->user_key().ToString(), model_[i].user_key);
  }
  EXPECT_EQ(i, model_.size());
  EXPECT_TRUE(scan->status().ok());
}

// A seek of a level positions one of its tables: one random read, as the
// timing model charges a level (docs/emulation.md). Stepping from one table
// into the next positions that one: one more.
TEST_F(LevelIteratorTest, TimedTablesChargeOneRandomReadPerSeekOfTheLevelAndPerTableScanned) {
  pmem::NvmTiming timing(NvmTimingModel{});  // no latency: only the count matters here
  MakeLevel(4, 5, &timing);
  auto it = NewLevelIterator(BytewiseComparator(), tables_, ReadOptions());
  uint64_t charged = timing.random_reads_charged();
  EXPECT_EQ(charged, 0u);
  it->SeekToFirst();
  EXPECT_EQ(timing.random_reads_charged(), ++charged);
  it->SeekToLast();
  EXPECT_EQ(timing.random_reads_charged(), ++charged);
  for (const TableRef& table : tables_) {
    it->Seek(table->smallest, kMaxSequenceNumber);
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(timing.random_reads_charged(), ++charged);
    it->Seek(table->largest, kMaxSequenceNumber);
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(timing.random_reads_charged(), ++charged);
  }
  it->Seek(tables_.back()->largest + "z", kMaxSequenceNumber);  // past the level: no table read
  EXPECT_FALSE(it->Valid());
  EXPECT_EQ(timing.random_reads_charged(), charged);
  size_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  EXPECT_EQ(n, model_.size());
  EXPECT_EQ(timing.random_reads_charged(), charged + tables_.size());

  charged = timing.random_reads_charged();
  auto scan = NewLevelScanIterator(BytewiseComparator(), tables_, nullptr);
  for (scan->SeekToFirst(); scan->Valid(); scan->Next()) {
  }
  // A compaction's input positions once in each table, then reads on.
  EXPECT_EQ(timing.random_reads_charged(), charged + tables_.size());
}

// Records which iterator the level asks of a table.
class IteratorKindRecorder final : public Table {
 public:
  IteratorKindRecorder(std::unique_ptr<Table> base, size_t index, std::vector<std::string>* log)
      : base_(std::move(base)), index_(index), log_(log) {}
  Status Get(const ReadOptions& options, const Slice& user_key, SequenceNumber snapshot, ValueType* type,
             std::string* value, SequenceNumber* sequence) const override {
    return base_->Get(options, user_key, snapshot, type, value, sequence);
  }
  std::unique_ptr<InternalIterator> NewIterator(const ReadOptions& options) const override {
    log_->push_back(std::to_string(index_));
    return base_->NewIterator(options);
  }
  std::unique_ptr<InternalIterator> NewSequentialIterator(const ReadOptions& options) const override {
    log_->push_back(std::to_string(index_) + "s");
    return base_->NewIterator(options);
  }
  std::unique_ptr<InternalIterator> NewScanIterator(SampledPhase* decode) const override {
    return base_->NewScanIterator(decode);
  }
  uint64_t num_entries() const override { return base_->num_entries(); }
  Status Validate() const override { return base_->Validate(); }

 private:
  std::unique_ptr<Table> base_;
  const size_t index_;
  std::vector<std::string>* log_;
};

// A table entered by a forward step right after the whole table before it
// was read gets a sequential iterator (it reads ahead at once); a table
// entered by a seek, a step back, or after a table read only from a seek
// gets the ordinary one.
TEST_F(LevelIteratorTest, OnlyTablesAfterAWholeTableReadGetSequentialIterators) {
  MakeLevel(5, 5, nullptr);
  std::vector<std::string> log;
  for (size_t t = 0; t < tables_.size(); ++t) {
    tables_[t]->table = std::make_unique<IteratorKindRecorder>(std::move(tables_[t]->table), t, &log);
  }
  auto it = NewLevelIterator(BytewiseComparator(), tables_, ReadOptions());
  size_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++n;
  EXPECT_EQ(n, model_.size());
  EXPECT_EQ(log, (std::vector<std::string>{"0", "1s", "2s", "3s", "4s"}));

  // Into table 1 by a seek: 2 follows a table read from the middle, 3 a whole one.
  log.clear();
  for (it->Seek(tables_[1]->largest, kMaxSequenceNumber); it->Valid(); it->Next()) {
  }
  EXPECT_EQ(log, (std::vector<std::string>{"1", "2", "3s", "4s"}));

  // Backwards, and forwards again after a step back.
  log.clear();
  it->SeekToLast();
  while (it->Valid() && it->user_key().compare(tables_[3]->largest) > 0) it->Prev();
  ASSERT_TRUE(it->Valid());
  for (; it->Valid(); it->Next()) {
  }
  EXPECT_EQ(log, (std::vector<std::string>{"4", "3", "4"}));
}

}  // namespace
}  // namespace jigsaw
