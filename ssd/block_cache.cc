#include "ssd/block_cache.h"

namespace jigsaw::ssd {

BlockCache::BlockCache(size_t capacity) : capacity_(capacity) {}

CachedBlockRef BlockCache::Lookup(uint64_t table, uint32_t block) {
  const uint64_t key = Key(table, block);
  Shard& shard = ShardFor(key);
  std::lock_guard<std::mutex> lock(shard.mu);
  auto it = shard.map.find(key);
  if (it == shard.map.end()) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  hits_.fetch_add(1, std::memory_order_relaxed);
  shard.lru.splice(shard.lru.begin(), shard.lru, it->second);
  return it->second->second;
}

bool BlockCache::Contains(uint64_t table, uint32_t block) {
  const uint64_t key = Key(table, block);
  Shard& shard = ShardFor(key);
  std::lock_guard<std::mutex> lock(shard.mu);
  return shard.map.count(key) != 0;
}

CachedBlockRef BlockCache::Insert(uint64_t table, uint32_t block, CachedBlockRef value) {
  const uint64_t key = Key(table, block);
  Shard& shard = ShardFor(key);
  const size_t shard_capacity = capacity_ / kShards;
  std::lock_guard<std::mutex> lock(shard.mu);
  auto it = shard.map.find(key);
  if (it != shard.map.end()) {
    shard.usage -= it->second->second->size;
    shard.lru.erase(it->second);
    shard.map.erase(it);
  }
  if (value->size <= shard_capacity) {
    shard.lru.emplace_front(key, value);
    shard.map[key] = shard.lru.begin();
    shard.usage += value->size;
  }
  while (shard.usage > shard_capacity && !shard.lru.empty()) {
    shard.usage -= shard.lru.back().second->size;
    shard.map.erase(shard.lru.back().first);
    shard.lru.pop_back();
  }
  return value;
}

void BlockCache::EraseTable(uint64_t table, uint32_t blocks) {
  for (uint32_t block = 0; block < blocks; ++block) {
    const uint64_t key = Key(table, block);
    Shard& shard = ShardFor(key);
    std::lock_guard<std::mutex> lock(shard.mu);
    auto it = shard.map.find(key);
    if (it == shard.map.end()) continue;
    shard.usage -= it->second->second->size;
    shard.lru.erase(it->second);
    shard.map.erase(it);
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
