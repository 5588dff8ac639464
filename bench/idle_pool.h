// IdlePool<T>: objects an engine adapter keeps between operations -- its
// iterators, its read transactions -- so that an operation reuses one
// instead of making it. Each thread gives back to and takes from a shard
// of its own (on cache lines of its own), so the threads of a benchmark do
// not contend on the pool: its cost is not charged to the engine.
#ifndef JIGSAW_BENCH_IDLE_POOL_H_
#define JIGSAW_BENCH_IDLE_POOL_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

namespace jigsaw::bench {

template <typename T>
class IdlePool {
 public:
  // Moves one of the calling thread's idle objects into *item; false if
  // it has none.
  bool Take(T* item) {
    Shard& shard = Mine();
    std::lock_guard<std::mutex> lock(shard.mu);
    if (shard.idle.empty()) return false;
    *item = std::move(shard.idle.back());
    shard.idle.pop_back();
    return true;
  }
  void GiveBack(T item) {
    Shard& shard = Mine();
    std::lock_guard<std::mutex> lock(shard.mu);
    shard.idle.push_back(std::move(item));
  }
  // Hands every idle object of every thread to drop(T&), then forgets it.
  template <typename Drop>
  void Drain(Drop&& drop) {
    for (Shard& shard : shards_) {
      std::lock_guard<std::mutex> lock(shard.mu);
      for (T& item : shard.idle) drop(item);
      shard.idle.clear();
    }
  }

 private:
  static constexpr size_t kShards = 64;  // more threads share shards, still correctly
  struct alignas(64) Shard {
    std::mutex mu;
    std::vector<T> idle;
  };
  Shard& Mine() {
    static std::atomic<size_t> next_thread{0};
    thread_local const size_t index = next_thread.fetch_add(1, std::memory_order_relaxed) % kShards;
    return shards_[index];
  }
  std::array<Shard, kShards> shards_;
};

}  // namespace jigsaw::bench

#endif  // JIGSAW_BENCH_IDLE_POOL_H_
