#include "tests/support/block_test_util.h"

#include <algorithm>
#include <set>
#include <utility>

namespace jigsaw::test {

void SortInternal(std::vector<TestEntry>* entries) {
  std::sort(entries->begin(), entries->end(), [](const TestEntry& a, const TestEntry& b) {
    return CompareInternal(BytewiseComparator(), a.user_key, PackTag(a.sequence, a.type), b.user_key,
                           PackTag(b.sequence, b.type)) < 0;
  });
}

std::vector<TestEntry> RandomEntries(std::mt19937_64* rng, size_t count, size_t max_key_size,
                                     size_t max_value_size, int deletion_every) {
  std::uniform_int_distribution<size_t> key_len(0, max_key_size);
  std::uniform_int_distribution<size_t> value_len(0, max_value_size);
  std::uniform_int_distribution<int> byte('a', 'e');
  std::uniform_int_distribution<SequenceNumber> seq(1, 1000000);
  std::set<std::pair<std::string, SequenceNumber>> seen;
  std::vector<TestEntry> entries;
  while (entries.size() < count) {
    TestEntry e;
    // Reuse an earlier key a quarter of the time to get several versions.
    if (!entries.empty() && (*rng)() % 4 == 0) {
      e.user_key = entries[(*rng)() % entries.size()].user_key;
    } else {
      e.user_key.resize(key_len(*rng));
      for (char& c : e.user_key) c = static_cast<char>(byte(*rng));
    }
    e.sequence = seq(*rng);
    if (!seen.insert({e.user_key, e.sequence}).second) continue;
    e.type = (deletion_every > 0 && (*rng)() % deletion_every == 0) ? ValueType::kDeletion : ValueType::kValue;
    if (e.type == ValueType::kValue) {
      e.value.resize(value_len(*rng));
      for (char& c : e.value) c = static_cast<char>((*rng)());
    }
    entries.push_back(std::move(e));
  }
  SortInternal(&entries);
  return entries;
}

Status BuildBlock(BlockFormat format, const std::vector<TestEntry>& entries, const BlockBuilderOptions& options,
                  AlignedBuffer* buffer, size_t* block_size) {
  size_t capacity = 4096;
  for (const TestEntry& e : entries) capacity += MaxEntryFootprint(format, e.user_key.size(), e.value.size());
  buffer->Resize(capacity);
  auto builder = NewBlockBuilder(format, options, buffer->data(), capacity);
  for (const TestEntry& e : entries) {
    Status s = builder->Add(e.user_key, e.sequence, e.type, e.value);
    if (!s.ok()) return s;
  }
  return builder->Finish(block_size);
}

const TestEntry* ModelGet(const std::vector<TestEntry>& sorted_entries, const std::string& user_key,
                          SequenceNumber snapshot) {
  for (const TestEntry& e : sorted_entries) {
    if (e.user_key == user_key && e.sequence <= snapshot) return &e;  // newest first
  }
  return nullptr;
}

size_t ModelSeek(const std::vector<TestEntry>& sorted_entries, const std::string& user_key,
                 SequenceNumber sequence) {
  const auto it = std::lower_bound(
      sorted_entries.begin(), sorted_entries.end(), PackTag(sequence, ValueType::kValue),
      [&](const TestEntry& e, uint64_t tag) {
        return CompareInternal(BytewiseComparator(), e.user_key, PackTag(e.sequence, e.type), user_key, tag) < 0;
      });
  return static_cast<size_t>(it - sorted_entries.begin());
}

}  // namespace jigsaw::test
