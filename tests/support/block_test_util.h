// Helpers shared by the block tests, the fuzz seed generator and benchmarks.
#ifndef JIGSAW_TESTS_BLOCK_TEST_UTIL_H_
#define JIGSAW_TESTS_BLOCK_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "format/block.h"

namespace jigsaw::test {

struct TestEntry {
  std::string user_key;
  SequenceNumber sequence = 0;
  ValueType type = ValueType::kValue;
  std::string value;
};

// 8-byte aligned, zero-initialised heap buffer.
class AlignedBuffer {
 public:
  explicit AlignedBuffer(size_t size = 0) { Resize(size); }
  void Resize(size_t size) {
    words_.reset(new uint64_t[(size + 7) / 8 + 1]());
    size_ = size;
  }
  char* data() { return reinterpret_cast<char*>(words_.get()); }
  const char* data() const { return reinterpret_cast<const char*>(words_.get()); }
  size_t size() const { return size_; }

 private:
  std::unique_ptr<uint64_t[]> words_;
  size_t size_ = 0;
};

// Sorts entries into internal-key order under the bytewise comparator.
void SortInternal(std::vector<TestEntry>* entries);

// `count` random entries with unique (user_key, sequence), sorted. Keys are
// 0..max_key_size bytes from a small alphabet so that keys share prefixes and
// repeat with several sequence numbers; values are 0..max_value_size bytes;
// about one in `deletion_every` entries is a deletion (0 = none).
std::vector<TestEntry> RandomEntries(std::mt19937_64* rng, size_t count, size_t max_key_size,
                                     size_t max_value_size, int deletion_every = 8);

// Builds a block of `format` from sorted entries into *buffer (sized to fit).
Status BuildBlock(BlockFormat format, const std::vector<TestEntry>& entries,
                  const BlockBuilderOptions& options, AlignedBuffer* buffer, size_t* block_size);

// The newest entry of user_key with sequence <= snapshot, or nullptr.
const TestEntry* ModelGet(const std::vector<TestEntry>& sorted_entries, const std::string& user_key,
                          SequenceNumber snapshot);

// Index of the first of the sorted entries at or after (user_key, sequence)
// in internal-key order: where InternalIterator::Seek lands
// (sorted_entries.size(): past the end).
size_t ModelSeek(const std::vector<TestEntry>& sorted_entries, const std::string& user_key,
                 SequenceNumber sequence);

}  // namespace jigsaw::test

#endif  // JIGSAW_TESTS_BLOCK_TEST_UTIL_H_
