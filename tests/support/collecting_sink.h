// An OutputSink for merge tests: builds KeySet blocks of at most
// `block_bytes` in DRAM (with the default Bloom filter, as the engine's pmem
// outputs: runs must feed it too), checks each finished block with
// Validate(), and collects every output entry in order.
#ifndef JIGSAW_TESTS_COLLECTING_SINK_H_
#define JIGSAW_TESTS_COLLECTING_SINK_H_

#include <memory>
#include <vector>

#include "compaction/output_sink.h"
#include "format/keyset_block.h"
#include "tests/support/block_test_util.h"

namespace jigsaw::test {

class CollectingKeySetSink final : public OutputSink {
 public:
  // take_runs: whether the sink takes runs as bytes (AppendRun).
  CollectingKeySetSink(bool take_runs, size_t block_bytes)
      : take_runs_(take_runs), block_bytes_(block_bytes), buffer_(2 * block_bytes) {}

  Status CloseIfFull(size_t key_size, size_t value_size, bool* closed) override {
    *closed = builder_ != nullptr &&
              builder_->CurrentSize() + MaxEntryFootprint(BlockFormat::kKeySet, key_size, value_size) > block_bytes_;
    return *closed ? FinishBlock() : Status::OK();
  }
  Status Add(const InternalIterator& entry) override {
    if (builder_ == nullptr) Start();
    ++added;
    return builder_->Add(entry.user_key(), entry.sequence(), entry.type(), entry.value());
  }
  bool TakesRuns() const override { return take_runs_; }
  Status AppendRun(const EntryRun& run, uint32_t* taken) override {
    if (builder_ == nullptr) Start();
    *taken = builder_->AppendRun(run, block_bytes_);
    return Status::OK();
  }
  Status Finish() override { return builder_ == nullptr ? Status::OK() : FinishBlock(); }
  void Abandon() override { builder_.reset(); }

  std::vector<TestEntry> entries;
  int blocks = 0;      // finished
  uint64_t added = 0;  // entries added one by one (not as runs)

 private:
  void Start() { builder_ = keyset::NewBuilder(BlockBuilderOptions(), buffer_.data(), buffer_.size()); }
  Status FinishBlock() {
    size_t size = 0;
    Status s = builder_->Finish(&size);
    builder_.reset();
    if (!s.ok()) return s;
    std::unique_ptr<BlockReader> reader;
    s = BlockReader::Open(BlockFormat::kKeySet, Slice(buffer_.data(), size), {}, &reader);
    if (s.ok()) s = reader->Validate();
    if (!s.ok()) return s;
    auto it = reader->NewIterator();
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      entries.push_back({it->user_key().ToString(), it->sequence(), it->type(), it->value().ToString()});
    }
    ++blocks;
    return it->status();
  }

  const bool take_runs_;
  const size_t block_bytes_;
  AlignedBuffer buffer_;
  std::unique_ptr<BlockBuilder> builder_;
};

}  // namespace jigsaw::test

#endif  // JIGSAW_TESTS_COLLECTING_SINK_H_
