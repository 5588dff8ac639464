#include "db/memtable.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <thread>

#include "format/bloom.h"
#include "format/keyset_entry.h"
#include "format/keyset_node.h"
#include "util/coding.h"

namespace jigsaw {

// The node layout (format/keyset_node.h).
namespace layout = keyset::node;

char* MemTable::ValueLog::Reserve(size_t size) {
  if (chunks_.empty() || capacity_ - chunks_.back().used < size) {
    capacity_ = size > chunk_size_ / 4 ? size : chunk_size_;
    chunks_.push_back(Chunk{std::unique_ptr<char[]>(new char[capacity_]), 0});
    usage_.fetch_add(capacity_, std::memory_order_relaxed);
  }
  Chunk& chunk = chunks_.back();
  char* result = chunk.data.get() + chunk.used;
  chunk.used += size;
  return result;
}

void MemTable::ValueLog::CopyTo(char* dest) const {
  for (const Chunk& chunk : chunks_) {
    std::memcpy(dest, chunk.data.get(), chunk.used);
    dest += chunk.used;
  }
}

MemTable::MemTable(const Comparator* comparator, size_t arena_chunk, size_t filter_bytes)
    : comparator_(comparator),
      bytewise_(comparator == BytewiseComparator()),
      arena_(arena_chunk),
      values_(arena_chunk),
      rng_(0x6a19) {
  if (filter_bytes > 0) {
    filter_geometry_.lines = static_cast<uint32_t>((filter_bytes + bloom::kLineBytes - 1) / bloom::kLineBytes);
    filter_geometry_.probes = bloom::kProbes;
    const size_t words = size_t{filter_geometry_.lines} * bloom::kProbes;
    filter_.reset(new std::atomic<uint64_t>[words]);
    for (size_t i = 0; i < words; ++i) filter_[i].store(0, std::memory_order_relaxed);
  }
  head_ = arena_.Allocate(layout::kHeadSize);
  std::fill(tail_, tail_ + kMaxHeight, head_);
  std::memset(head_, 0, layout::kHeadSize);
  EncodeFixed32(head_ + layout::kHeight, kMaxHeight);
}

Slice MemTable::NodeKey(const char* node) {
  const uint32_t height = DecodeFixed32(node + layout::kHeight);
  return Slice(node + layout::kHeaderSize + 8 * size_t{height}, DecodeFixed32(node + layout::kKeySize));
}

uint64_t MemTable::NodeTag(const char* node) { return DecodeFixed64(node + layout::kTag); }

Slice MemTable::NodeValue(const char* node) {
  return Slice(reinterpret_cast<const char*>(DecodeFixed64(node + layout::kIndex)), NodeValueSize(node));
}

uint32_t MemTable::NodeValueSize(const char* node) { return DecodeFixed32(node + layout::kValueSize); }

uint32_t MemTable::NodeKeyHash(const char* node) { return DecodeFixed32(node + layout::kKeyHash); }

uint64_t MemTable::NodeValueOffset(const char* node) { return DecodeFixed64(node - kNodePrefix); }

namespace {
// Stretches of a level ForEachEntryBatch follows at once: enough misses in
// flight to cover the memory's latency.
constexpr size_t kWalkChains = 16;
// How far ahead of the node it reads a batch fetches a node's lines.
constexpr size_t kVisitAhead = 8;
}  // namespace

void MemTable::ForEachEntryBatch(const std::function<void(const FlushEntry*, size_t)>& visit,
                                 bool reads_values) const {
  std::vector<FlushEntry> batch;
  // A node's first and last lines (its prefix word, its key) and its value.
  auto fetch = [reads_values](const char* node) {
    __builtin_prefetch(node - kNodePrefix);
    __builtin_prefetch(node + 48);
    if (reads_values) __builtin_prefetch(reinterpret_cast<const char*>(DecodeFixed64(node + layout::kIndex)));
  };
  auto visit_nodes = [&](const std::vector<const char*>& nodes) {
    batch.clear();
    for (size_t i = 0; i < std::min(kVisitAhead, nodes.size()); ++i) fetch(nodes[i]);
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (i + kVisitAhead < nodes.size()) fetch(nodes[i + kVisitAhead]);
      const char* node = nodes[i];
      const Slice value = NodeValue(node);
      batch.push_back(FlushEntry{NodeKey(node), NodeTag(node), NodeValueOffset(node),
                                 static_cast<uint32_t>(value.size()), NodeKeyHash(node), value.data()});
    }
    if (!batch.empty()) visit(batch.data(), batch.size());
  };
  // The top level's nodes, one after another (there are few); then a lower
  // level's from those of a higher one, `bounds`: stretch 0 runs from the
  // lower level's first node up to bounds[0], stretch k from bounds[k - 1]
  // up to bounds[k], the last to the end. A node of a higher level is one
  // of every lower level too, so the stretches cover the level exactly.
  int level = max_height_.load(std::memory_order_acquire) - 1;
  std::vector<const char*> bounds;
  for (const char* node = Next(head_, level); node != nullptr; node = Next(node, level)) bounds.push_back(node);
  if (level == 0) {
    visit_nodes(bounds);
    return;
  }
  // A node whose every link leads to itself: where an ended stretch steps.
  uint64_t parked_words[(layout::kNext + 8 * kMaxHeight) / 8];
  const char* const parked = reinterpret_cast<const char*>(parked_words);
  for (int l = 0; l < kMaxHeight; ++l) {
    EncodeFixed64(reinterpret_cast<char*>(parked_words) + layout::kNext + 8 * l, reinterpret_cast<uint64_t>(parked));
  }
  const uintptr_t parked_address = reinterpret_cast<uintptr_t>(parked);
  std::vector<const char*> below;
  std::vector<const char*> steps;  // row r: the r-th node of each stretch
  while (level > 0) {
    // Two levels down at a time: stretches of about 16 nodes, so that the
    // rounds a batch of stretches takes (its longest) stay near the average.
    level = std::max(level - 2, 0);
    below.clear();
    const size_t stretches = bounds.size() + 1;
    for (size_t first = 0; first < stretches; first += kWalkChains) {
      const size_t count = std::min(kWalkChains, stretches - first);
      uintptr_t at[kWalkChains];
      uintptr_t end[kWalkChains];
      size_t length[kWalkChains];
      for (size_t c = 0; c < kWalkChains; ++c) {
        const size_t k = first + c;
        const char* start = c >= count ? parked : k == 0 ? Next(head_, level) : bounds[k - 1];
        const char* stop = c >= count ? parked : k < bounds.size() ? bounds[k] : nullptr;
        at[c] = reinterpret_cast<uintptr_t>(start);
        end[c] = reinterpret_cast<uintptr_t>(stop);
        length[c] = 0;
      }
      // One step of every stretch per round. The steps select with masks,
      // not branches (which compilers emit for ?:): a mispredicted branch
      // on a node just loaded would discard the other stretches' loads in
      // flight. An ended stretch steps on the parked node.
      bool moving = true;
      for (size_t round = 0; moving; ++round) {
        if (steps.size() < (round + 1) * kWalkChains) steps.resize(2 * (round + 1) * kWalkChains);
        const char** row = steps.data() + round * kWalkChains;
        uintptr_t any = 0;
        for (size_t c = 0; c < kWalkChains; ++c) {
          const uintptr_t node = at[c];
          const uintptr_t active = node != end[c];
          const uintptr_t mask = 0 - active;
          const uintptr_t from = (node & mask) | (parked_address & ~mask);
          const uintptr_t next = reinterpret_cast<uintptr_t>(Next(reinterpret_cast<const char*>(from), level));
          row[c] = reinterpret_cast<const char*>(from);
          length[c] += active;
          at[c] = (next & mask) | (node & ~mask);
          any |= active;
        }
        moving = any != 0;
      }
      if (level == 0) below.clear();
      for (size_t c = 0; c < count; ++c) {
        for (size_t r = 0; r < length[c]; ++r) below.push_back(steps[r * kWalkChains + c]);
      }
      if (level == 0) visit_nodes(below);
    }
    if (level > 0) bounds.swap(below);
  }
}

char* MemTable::Next(const char* node, int level) {
  auto* link = reinterpret_cast<uint64_t*>(const_cast<char*>(node) + layout::kNext + 8 * level);
  return reinterpret_cast<char*>(std::atomic_ref<uint64_t>(*link).load(std::memory_order_acquire));
}

void MemTable::SetNext(char* node, int level, char* next) {
  auto* link = reinterpret_cast<uint64_t*>(node + layout::kNext + 8 * level);
  std::atomic_ref<uint64_t>(*link).store(reinterpret_cast<uint64_t>(next), std::memory_order_release);
}

int MemTable::CompareNode(const char* node, const Target& target) const {
  const Slice node_key = NodeKey(node);
  int r = bytewise_ ? CompareWithPrefixes(node_key, LoadKeyPrefix(node_key), target.key, target.prefix)
                    : comparator_->Compare(node_key, target.key);
  if (r != 0) return r;
  const uint64_t node_tag = NodeTag(node);
  return node_tag > target.tag ? -1 : node_tag < target.tag ? 1 : 0;  // newer (larger tag) first
}

int MemTable::RandomHeight(std::minstd_rand* rng) {
  int height = 1;
  while (height < kMaxHeight && (*rng)() % 4 == 0) ++height;
  return height;
}

char* MemTable::FindGreaterOrEqual(const Slice& key, uint64_t tag, char** prev) const {
  const Target target = MakeTarget(key, tag);
  char* x = head_;
  int level = max_height_.load(std::memory_order_relaxed) - 1;
  for (;;) {
    char* next = Next(x, level);
    // Where the search continues if it descends from x: fetch it while
    // `next` is compared (two cache misses in parallel instead of in turn).
    if (level > 0) {
      const char* below = Next(x, level - 1);
      if (below != nullptr && below != next) {
        __builtin_prefetch(below + layout::kKeySize);  // sizes, height, links
        __builtin_prefetch(below + layout::kNext + 8 * 2);  // the key of a low node
      }
    }
    if (next != nullptr && CompareNode(next, target) < 0) {
      x = next;
    } else {
      if (prev != nullptr) prev[level] = x;
      if (level == 0) return next;
      --level;
    }
  }
}

char* MemTable::FindLessThan(const Slice& key, uint64_t tag) const {
  const Target target = MakeTarget(key, tag);
  char* x = head_;
  int level = max_height_.load(std::memory_order_relaxed) - 1;
  for (;;) {
    char* next = Next(x, level);
    if (next != nullptr && CompareNode(next, target) < 0) {
      x = next;
    } else {
      if (level == 0) return x == head_ ? nullptr : x;
      --level;
    }
  }
}

char* MemTable::FindLast() const {
  char* x = head_;
  int level = max_height_.load(std::memory_order_relaxed) - 1;
  for (;;) {
    char* next = Next(x, level);
    if (next != nullptr) {
      x = next;
    } else {
      if (level == 0) return x == head_ ? nullptr : x;
      --level;
    }
  }
}

char* MemTable::NewNode(int height, uint64_t tag, const Slice& key, const Slice& value, bool concurrently) {
  const size_t node_bytes = kNodePrefix + layout::NodeSize(static_cast<uint32_t>(height), key.size());
  // Empty values point at a static byte, never at null.
  static const char kEmptyValue[1] = {0};
  char* value_copy = const_cast<char*>(kEmptyValue);
  char* node;
  uint64_t value_offset;
  {
    std::unique_lock<std::mutex> lock(alloc_mutex_, std::defer_lock);
    if (concurrently) lock.lock();
    if (!value.empty()) value_copy = values_.Reserve(value.size());
    node = arena_.Allocate(node_bytes) + kNodePrefix;
    value_offset = value_bytes_.load(std::memory_order_relaxed);
    value_bytes_.store(value_offset + value.size(), std::memory_order_relaxed);
  }
  if (!value.empty()) std::memcpy(value_copy, value.data(), value.size());
  EncodeFixed64(node - kNodePrefix, value_offset);
  EncodeFixed64(node + layout::kTag, tag);
  EncodeFixed64(node + layout::kIndex, reinterpret_cast<uint64_t>(value_copy));
  EncodeFixed32(node + layout::kKeySize, static_cast<uint32_t>(key.size()));
  EncodeFixed32(node + layout::kValueSize, static_cast<uint32_t>(value.size()));
  EncodeFixed32(node + layout::kHeight, static_cast<uint32_t>(height));
  const uint32_t key_hash = bloom::KeyHash(key);
  EncodeFixed32(node + layout::kKeyHash, key_hash);
  if (filter_ != nullptr) {
    std::atomic<uint64_t>* line = &filter_[size_t{bloom::LineIndex(filter_geometry_, key_hash)} * bloom::kProbes];
    uint64_t bits[bloom::kProbes];
    bloom::LineBits(key_hash, bits);
    for (uint32_t i = 0; i < bloom::kProbes; ++i) {
      if (concurrently) {
        line[i].fetch_or(bits[i], std::memory_order_relaxed);
      } else {
        line[i].store(line[i].load(std::memory_order_relaxed) | bits[i], std::memory_order_relaxed);
      }
    }
  }
  char* key_copy = node + layout::kHeaderSize + 8 * size_t(height);
  if (!key.empty()) {
    EncodeFixed64(key_copy + AlignUp8(key.size()) - 8, 0);
    std::memcpy(key_copy, key.data(), key.size());
  }
  const uint64_t entry_bytes = keyset::SizingEntryBytes(key.size());
  if (concurrently) {
    sizing_entry_bytes_.fetch_add(entry_bytes, std::memory_order_relaxed);
  } else {
    // One writer: no locked instruction (it would wait for every store of
    // the node to reach the cache).
    sizing_entry_bytes_.store(sizing_entry_bytes_.load(std::memory_order_relaxed) + entry_bytes,
                                  std::memory_order_relaxed);
  }
  return node;
}

void MemTable::RebuildTails() {
  char* x = head_;
  for (int level = kMaxHeight - 1; level >= 0; --level) {
    for (char* next = Next(x, level); next != nullptr; next = Next(x, level)) x = next;
    tail_[level] = x;
  }
  tails_stale_.store(false, std::memory_order_relaxed);
}

void MemTable::Add(SequenceNumber sequence, ValueType type, const Slice& key, const Slice& value) {
  const uint64_t tag = PackTag(sequence, type);
  if (tails_stale_.load(std::memory_order_relaxed)) RebuildTails();
  char* prev[kMaxHeight];
  if (tail_[0] != head_ && CompareNode(tail_[0], MakeTarget(key, tag)) < 0) {
    // After the largest entry (sequential keys): the last node of each
    // level precedes it -- no search.
    std::copy(tail_, tail_ + kMaxHeight, prev);
  } else {
    FindGreaterOrEqual(key, tag, prev);
  }

  const int height = RandomHeight(&rng_);
  const int current_max = max_height_.load(std::memory_order_relaxed);
  if (height > current_max) {
    for (int level = current_max; level < height; ++level) prev[level] = head_;
    // Readers that see the new height before the links find null links at
    // the new levels from the head and simply descend.
    max_height_.store(height, std::memory_order_relaxed);
  }

  char* node = NewNode(height, tag, key, value, /*concurrently=*/false);
  for (int level = 0; level < height; ++level) {
    // The node is not reachable yet, so its own links need no ordering; the
    // release store into prev publishes the whole node.
    auto* link = reinterpret_cast<uint64_t*>(node + layout::kNext + 8 * level);
    std::atomic_ref<uint64_t>(*link).store(reinterpret_cast<uint64_t>(Next(prev[level], level)),
                                           std::memory_order_relaxed);
    SetNext(prev[level], level, node);
    if (prev[level] == tail_[level]) tail_[level] = node;  // the new last node of this level
  }
  num_entries_.store(num_entries_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

void MemTable::AddConcurrently(SequenceNumber sequence, ValueType type, const Slice& key, const Slice& value) {
  const uint64_t tag = PackTag(sequence, type);
  const Target target = MakeTarget(key, tag);
  tails_stale_.store(true, std::memory_order_relaxed);
  char* prev[kMaxHeight];
  std::fill(prev, prev + kMaxHeight, head_);
  FindGreaterOrEqual(key, tag, prev);

  thread_local std::minstd_rand rng(static_cast<uint32_t>(std::hash<std::thread::id>()(std::this_thread::get_id())));
  const int height = RandomHeight(&rng);
  int current_max = max_height_.load(std::memory_order_relaxed);
  while (height > current_max &&
         !max_height_.compare_exchange_weak(current_max, height, std::memory_order_relaxed)) {
  }

  char* node = NewNode(height, tag, key, value, /*concurrently=*/true);
  for (int level = 0; level < height; ++level) {
    // prev[level] precedes the target at this level (the search found it, or
    // it is the head above the height searched). Other writers may have
    // linked nodes after it since: walk past those smaller than the target,
    // then swing prev's link from the node that follows to the new node; a
    // failed swing means another insert got there first -- walk again.
    auto* link = reinterpret_cast<uint64_t*>(node + layout::kNext + 8 * level);
    for (;;) {
      char* next = Next(prev[level], level);
      while (next != nullptr && CompareNode(next, target) < 0) {
        prev[level] = next;
        next = Next(next, level);
      }
      std::atomic_ref<uint64_t>(*link).store(reinterpret_cast<uint64_t>(next), std::memory_order_relaxed);
      auto* prev_link = reinterpret_cast<uint64_t*>(prev[level] + layout::kNext + 8 * level);
      uint64_t expected = reinterpret_cast<uint64_t>(next);
      if (std::atomic_ref<uint64_t>(*prev_link)
              .compare_exchange_strong(expected, reinterpret_cast<uint64_t>(node), std::memory_order_release,
                                       std::memory_order_relaxed)) {
        break;
      }
    }
  }
  num_entries_.fetch_add(1, std::memory_order_release);
}

void MemTable::AddRangeTombstone(SequenceNumber sequence, const Slice& begin, const Slice& end) {
  MutexLock lock(&range_mutex_);
  range_list_.push_back(RangeTombstone{begin.ToString(), end.ToString(), sequence});
  range_set_ = nullptr;
  has_range_tombstones_.store(true, std::memory_order_release);
}

std::shared_ptr<const RangeTombstoneSet> MemTable::range_tombstones() const {
  if (!has_range_tombstones()) return nullptr;
  MutexLock lock(&range_mutex_);
  if (range_set_ == nullptr) range_set_ = std::make_shared<const RangeTombstoneSet>(comparator_, range_list_);
  return range_set_;
}

bool MemTable::Get(const Slice& key, SequenceNumber snapshot, ValueType* type, std::string* value,
                   SequenceNumber* sequence) const {
  if (filter_ != nullptr) {
    const uint32_t key_hash = bloom::KeyHash(key);
    const std::atomic<uint64_t>* line =
        &filter_[size_t{bloom::LineIndex(filter_geometry_, key_hash)} * bloom::kProbes];
    uint64_t bits[bloom::kProbes];
    bloom::LineBits(key_hash, bits);
    uint64_t missing = 0;
    for (uint32_t i = 0; i < bloom::kProbes; ++i) missing |= bits[i] & ~line[i].load(std::memory_order_relaxed);
    if (missing != 0) return false;
  }
  const char* node = FindGreaterOrEqual(key, PackTag(snapshot, ValueType::kValue), nullptr);
  if (node == nullptr || (bytewise_ ? NodeKey(node).compare(key) : comparator_->Compare(NodeKey(node), key)) != 0) {
    return false;
  }
  *type = TagType(NodeTag(node));
  *sequence = TagSequence(NodeTag(node));
  if (*type == ValueType::kValue) {
    const Slice v = NodeValue(node);
    value->assign(v.data(), v.size());
  }
  return true;
}

class MemTableIterator final : public InternalIterator {
 public:
  MemTableIterator(const MemTable* table, SequenceNumber visible) : table_(table), visible_(visible) {}

  void SeekToFirst() override { SetForward(MemTable::Next(table_->head_, 0)); }
  void SeekToLast() override { SetBackward(table_->FindLast()); }
  void Seek(const Slice& user_key, SequenceNumber sequence) override {
    SetForward(table_->FindGreaterOrEqual(user_key, PackTag(std::min(sequence, visible_), ValueType::kValue), nullptr));
  }
  void Next() override { SetForward(MemTable::Next(node_, 0)); }
  void Prev() override { SetBackward(table_->FindLessThan(user_key_, tag_)); }
  Status status() const override { return Status::OK(); }

 private:
  void Set(const char* node) {
    node_ = node;
    valid_ = node != nullptr;
    if (valid_) {
      user_key_ = MemTable::NodeKey(node);
      tag_ = MemTable::NodeTag(node);
      value_ = MemTable::NodeValue(node);
      key_hash_ = MemTable::NodeKeyHash(node);
      has_key_hash_ = true;
      // The next node and this entry's value (it lies in the value log, not
      // in the node): a merged scan reads them only after the other
      // children's entries before them, so their misses overlap that work.
      if (const char* next = MemTable::Next(node, 0)) __builtin_prefetch(next);
      __builtin_prefetch(value_.data());
    }
  }

  // Moving forward: `node`, or the first entry after it visible at visible_.
  // The versions of a key newer than the reader come before those it sees:
  // past a few in a row, a seek skips the rest (a key overwritten
  // thousands of times since the reader began).
  void SetForward(const char* node) {
    int skipped = 0;
    while (node != nullptr && TagSequence(MemTable::NodeTag(node)) > visible_) {
      if (++skipped <= kMaxSequentialSkips) {
        node = MemTable::Next(node, 0);
      } else {
        node = table_->FindGreaterOrEqual(MemTable::NodeKey(node), PackTag(visible_, ValueType::kValue), nullptr);
        skipped = 0;
      }
    }
    Set(node);
  }
  // Moving backward: `node`, or the last entry before it visible at
  // visible_. The entries of an invisible entry's key before it are newer
  // still, so the search goes on before the key's first entry. (A step back
  // from an entry lands on whatever sorts just before it now, which may be
  // a version a writer added after the reader began.)
  void SetBackward(const char* node) {
    while (node != nullptr && TagSequence(MemTable::NodeTag(node)) > visible_) {
      node = table_->FindLessThan(MemTable::NodeKey(node), PackTag(kMaxSequenceNumber, ValueType::kValue));
    }
    Set(node);
  }

  static constexpr int kMaxSequentialSkips = 8;
  const MemTable* const table_;
  const SequenceNumber visible_;
  const char* node_ = nullptr;
};

std::unique_ptr<InternalIterator> MemTable::NewIterator(SequenceNumber visible) const {
  return std::make_unique<MemTableIterator>(this, visible);
}

}  // namespace jigsaw
