#include "jigsaw/write_batch.h"

#include <gtest/gtest.h>

#include "jigsaw/db.h"
#include "db/memtable.h"
#include "db/write_batch_internal.h"

namespace jigsaw {
namespace {

class Recorder : public WriteBatch::Handler {
 public:
  void Put(const Slice& key, const Slice& value) override { log += "Put(" + key.ToString() + "," + value.ToString() + ")"; }
  void Delete(const Slice& key) override { log += "Delete(" + key.ToString() + ")"; }
  std::string log;
};

TEST(WriteBatchTest, RecordsUpdatesInOrder) {
  WriteBatch batch;
  EXPECT_EQ(batch.Count(), 0u);
  batch.Put("a", "1");
  batch.Delete("b");
  batch.Put("", "");
  EXPECT_EQ(batch.Count(), 3u);
  Recorder recorder;
  ASSERT_TRUE(batch.Iterate(&recorder).ok());
  EXPECT_EQ(recorder.log, "Put(a,1)Delete(b)Put(,)");
  WriteBatch other;
  other.Put("c", "3");
  batch.Append(other);
  EXPECT_EQ(batch.Count(), 4u);
  batch.Clear();
  EXPECT_EQ(batch.Count(), 0u);
}

TEST(WriteBatchTest, SequenceAndContentsRoundTrip) {
  WriteBatch batch;
  batch.Put("k", "v");
  WriteBatchInternal::SetSequence(&batch, 1234);
  WriteBatch copy;
  ASSERT_TRUE(WriteBatchInternal::SetContents(&copy, WriteBatchInternal::Contents(batch)).ok());
  EXPECT_EQ(WriteBatchInternal::Sequence(copy), 1234u);
  EXPECT_EQ(copy.Count(), 1u);
  EXPECT_TRUE(WriteBatchInternal::SetContents(&copy, Slice("short")).IsCorruption());
}

TEST(WriteBatchTest, DamagedEncodingIsCorruption) {
  WriteBatch batch;
  batch.Put("key", "value");
  std::string rep = WriteBatchInternal::Contents(batch).ToString();
  Recorder recorder;
  for (size_t cut = WriteBatchInternal::kHeaderSize; cut < rep.size(); ++cut) {
    WriteBatch damaged;
    ASSERT_TRUE(WriteBatchInternal::SetContents(&damaged, Slice(rep.data(), cut)).ok());
    EXPECT_TRUE(damaged.Iterate(&recorder).IsCorruption()) << "cut at " << cut;
  }
  rep[WriteBatchInternal::kHeaderSize] = 7;  // unknown record type
  WriteBatch unknown;
  ASSERT_TRUE(WriteBatchInternal::SetContents(&unknown, rep).ok());
  EXPECT_TRUE(unknown.Iterate(&recorder).IsCorruption());
}

TEST(WriteBatchTest, LimitsAndInsertion) {
  WriteBatch big;
  big.Put(std::string(kMaxUserKeySize + 1, 'k'), "v");
  EXPECT_TRUE(WriteBatchInternal::CheckLimits(big, BytewiseComparator()).IsInvalidArgument());
  WriteBatch batch;
  batch.Put("a", "1");
  batch.Delete("a");
  batch.Put("b", "2");
  bool deletes_only = true;
  ASSERT_TRUE(WriteBatchInternal::CheckLimits(batch, BytewiseComparator(), &deletes_only).ok());
  EXPECT_FALSE(deletes_only);
  WriteBatch deletes;
  deletes.Delete("a");
  deletes.Delete("b");
  ASSERT_TRUE(WriteBatchInternal::CheckLimits(deletes, BytewiseComparator(), &deletes_only).ok());
  EXPECT_TRUE(deletes_only);
  WriteBatchInternal::SetSequence(&batch, 10);
  MemTable mem(BytewiseComparator());
  ASSERT_TRUE(WriteBatchInternal::InsertInto(batch, &mem).ok());
  ValueType type;
  [[maybe_unused]] SequenceNumber found_sequence = 0;
  std::string value;
  ASSERT_TRUE(mem.Get("a", kMaxSequenceNumber, &type, &value, &found_sequence));
  EXPECT_EQ(type, ValueType::kDeletion);  // sequence 11 hides sequence 10
  ASSERT_TRUE(mem.Get("a", 10, &type, &value, &found_sequence));
  EXPECT_EQ(value, "1");
  ASSERT_TRUE(mem.Get("b", kMaxSequenceNumber, &type, &value, &found_sequence));
  EXPECT_EQ(value, "2");
}

}  // namespace
}  // namespace jigsaw
