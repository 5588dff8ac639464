// MergingIterator (table/merging_iterator.h) against a model: random moves
// in both directions and seeks over several blocks.
#include "table/merging_iterator.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/support/block_test_util.h"

namespace jigsaw {
namespace {

TEST(MergingIteratorTest, RandomMovesMatchTheMergedModel) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    std::mt19937_64 rng(seed);
    // One set of entries with unique (key, sequence), dealt over 1-6 blocks.
    std::vector<test::TestEntry> model = test::RandomEntries(&rng, 900, 5, 8);
    const size_t n_blocks = seed == 1 ? 2 : 1 + rng() % 6;  // seed 1: two children, as a scan of L1 + L2
    std::vector<std::vector<test::TestEntry>> parts(n_blocks);
    for (const auto& e : model) parts[rng() % n_blocks].push_back(e);
    std::vector<test::AlignedBuffer> buffers(n_blocks);
    std::vector<std::unique_ptr<BlockReader>> readers(n_blocks);
    std::vector<std::unique_ptr<InternalIterator>> children;
    for (size_t b = 0; b < n_blocks; ++b) {
      size_t size = 0;
      ASSERT_TRUE(test::BuildBlock(BlockFormat::kKeySet, parts[b], BlockBuilderOptions(), &buffers[b], &size).ok());
      ASSERT_TRUE(BlockReader::Open(BlockFormat::kKeySet, Slice(buffers[b].data(), size), BlockReadOptions(),
                                    &readers[b])
                      .ok());
      children.push_back(readers[b]->NewIterator());
    }
    auto it = NewMergingIterator(BytewiseComparator(), std::move(children));
    size_t at = 0;  // model position; model.size() = not valid
    it->SeekToFirst();
    for (int step = 0; step < 3000; ++step) {
      ASSERT_EQ(it->Valid(), at < model.size()) << "seed " << seed << " step " << step;
      if (at < model.size()) {
        ASSERT_EQ(it->user_key().ToString(), model[at].user_key) << "seed " << seed << " step " << step;
        ASSERT_EQ(it->sequence(), model[at].sequence) << "seed " << seed << " step " << step;
      }
      const uint64_t op = rng() % 20;
      if (op < 9 && at < model.size()) {
        it->Next();
        ++at;
      } else if (op < 17 && at < model.size()) {
        it->Prev();
        at = at == 0 ? model.size() : at - 1;
      } else if (op < 19) {
        const test::TestEntry& target = model[rng() % model.size()];
        const SequenceNumber sequence = rng() % 2 == 0 ? target.sequence : rng() % 1000000;
        it->Seek(target.user_key, sequence);
        at = test::ModelSeek(model, target.user_key, sequence);
      } else if (rng() % 2 == 0) {
        it->SeekToFirst();
        at = 0;
      } else {
        it->SeekToLast();
        at = model.size() - 1;
      }
    }
    ASSERT_TRUE(it->status().ok());
  }
}

}  // namespace
}  // namespace jigsaw
