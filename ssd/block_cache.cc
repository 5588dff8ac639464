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
  Entry* e = &it->second;
  shard.Unlink(e);
  shard.MakeNewest(e);
  return e->value;
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
  if (it != shard.map.end()) shard.Erase(it);
  if (value->size <= shard_capacity) {
    Entry& e = shard.map[key];
    e.key = key;
    e.value = value;
    shard.MakeNewest(&e);
    shard.usage += value->size;
  }
  while (shard.usage > shard_capacity && shard.lru.newer != &shard.lru) {
    shard.Erase(shard.map.find(shard.lru.newer->key));
  }
  return value;
}

void BlockCache::EraseTable(uint64_t table, uint32_t blocks) {
  for (uint32_t block = 0; block < blocks; ++block) {
    const uint64_t key = Key(table, block);
    Shard& shard = ShardFor(key);
    std::lock_guard<std::mutex> lock(shard.mu);
    auto it = shard.map.find(key);
    if (it != shard.map.end()) shard.Erase(it);
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
