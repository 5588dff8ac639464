#include "ssd/block_cache.h"

namespace jigsaw::ssd {

BlockCache::BlockCache(size_t capacity) : capacity_(capacity) {}

size_t BlockCache::Shard::Home(uint64_t key) const {
  return static_cast<size_t>((key * 0x9E3779B97F4A7C15ULL) >> 16) & (slots.size() - 1);
}

BlockCache::Slot* BlockCache::Shard::Find(uint64_t key) {
  if (slots.empty()) return nullptr;
  const size_t mask = slots.size() - 1;
  for (size_t i = Home(key);; i = (i + 1) & mask) {
    Slot& slot = slots[i];
    if (slot.entry == 0) return nullptr;
    if (slot.key == key) return &slot;
  }
}

void BlockCache::Shard::Grow() {
  std::vector<Slot> old = std::move(slots);
  slots.assign(old.empty() ? 64 : old.size() * 2, Slot());
  for (const Slot& slot : old) {
    if (slot.entry != 0) Place(slot);
  }
}

void BlockCache::Shard::Place(const Slot& slot) {
  const size_t mask = slots.size() - 1;
  size_t i = Home(slot.key);
  while (slots[i].entry != 0) i = (i + 1) & mask;
  slots[i] = slot;
}

void BlockCache::Shard::Add(uint64_t key, CachedBlockRef value) {
  if (2 * (entries.size() - holes.size() + 1) > slots.size()) Grow();
  uint32_t index;
  if (!holes.empty()) {
    index = holes.back();
    holes.pop_back();
  } else {
    index = static_cast<uint32_t>(entries.size());
    entries.emplace_back();
  }
  Entry& e = entries[index];
  e.key = key;
  usage += value->size;
  e.value = std::move(value);
  e.referenced = false;  // evicted first unless it is read again
  Place(Slot{key, index + 1});
}

void BlockCache::Shard::Remove(Slot* slot) {
  Entry& e = entries[slot->entry - 1];
  usage -= e.value->size;
  e.value.reset();
  holes.push_back(slot->entry - 1);
  // Backward-shift deletion: later slots of the probe run that may move
  // into the hole do, so that no lookup stops early at it.
  const size_t mask = slots.size() - 1;
  size_t hole = static_cast<size_t>(slot - slots.data());
  for (size_t j = (hole + 1) & mask; slots[j].entry != 0; j = (j + 1) & mask) {
    const size_t home = Home(slots[j].key);
    // Whether home lies cyclically in (hole, j]: then slot j stays.
    const bool stays = hole <= j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays) continue;
    slots[hole] = slots[j];
    hole = j;
  }
  slots[hole] = Slot();
}

void BlockCache::Shard::EvictBeyond(size_t capacity) {
  while (usage > capacity) {
    if (hand >= entries.size()) hand = 0;
    Entry& e = entries[hand];
    if (e.value != nullptr) {
      if (e.referenced) {
        e.referenced = false;
      } else {
        Remove(Find(e.key));
      }
    }
    ++hand;
  }
}

CachedBlockRef BlockCache::Lookup(uint64_t table, uint32_t block) {
  const uint64_t key = Key(table, block);
  Shard& shard = ShardFor(key);
  std::lock_guard<std::mutex> lock(shard.mu);
  Slot* slot = shard.Find(key);
  if (slot == nullptr) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  hits_.fetch_add(1, std::memory_order_relaxed);
  Entry& e = shard.entries[slot->entry - 1];
  e.referenced = true;
  return e.value;
}

bool BlockCache::Contains(uint64_t table, uint32_t block) {
  const uint64_t key = Key(table, block);
  Shard& shard = ShardFor(key);
  std::lock_guard<std::mutex> lock(shard.mu);
  return shard.Find(key) != nullptr;
}

CachedBlockRef BlockCache::Insert(uint64_t table, uint32_t block, CachedBlockRef value) {
  const uint64_t key = Key(table, block);
  Shard& shard = ShardFor(key);
  const size_t shard_capacity = capacity_ / kShards;
  std::lock_guard<std::mutex> lock(shard.mu);
  if (Slot* slot = shard.Find(key)) shard.Remove(slot);
  if (value->size <= shard_capacity) shard.Add(key, value);
  shard.EvictBeyond(shard_capacity);
  return value;
}

void BlockCache::EraseTable(uint64_t table, uint32_t blocks) {
  auto erase = [&](uint64_t key) {
    Shard& shard = ShardFor(key);
    std::lock_guard<std::mutex> lock(shard.mu);
    if (Slot* slot = shard.Find(key)) shard.Remove(slot);
  };
  for (uint32_t block = 0; block < blocks; ++block) {
    erase(Key(table, block));
    if (block < kKeyPartBit) erase(Key(table, block | kKeyPartBit));
  }
}

size_t BlockCache::usage() const {
  size_t total = 0;
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(const_cast<std::mutex&>(shard.mu));
    total += shard.usage;
  }
  return total;
}

}  // namespace jigsaw::ssd
