// IdlePool<T>: objects an engine adapter keeps between operations -- its
// iterators, its read transactions -- so that an operation reuses one
// instead of making it. Each thread gives back to and takes from a shard
// of its own, on cache lines of its own, without a lock, as an application
// thread keeps its own cursor or transaction: the pool's cost is not
// charged to the engine.
#ifndef JIGSAW_BENCH_IDLE_POOL_H_
#define JIGSAW_BENCH_IDLE_POOL_H_

#include <array>
#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

#include "util/per_thread_cache.h"  // ThreadSlot

namespace jigsaw::bench {

template <typename T>
class IdlePool {
 public:
  // Moves one of the calling thread's idle objects into *item; false if
  // it has none.
  bool Take(T* item) {
    return OnMyShard([&](std::vector<T>& idle) {
      if (idle.empty()) return false;
      *item = std::move(idle.back());
      idle.pop_back();
      return true;
    });
  }
  void GiveBack(T item) {
    OnMyShard([&](std::vector<T>& idle) {
      idle.push_back(std::move(item));
      return true;
    });
  }
  // Hands every idle object to drop(T&), then forgets it. Requires that no
  // Take or GiveBack runs meanwhile (between benchmarks, at destruction).
  template <typename Drop>
  void Drain(Drop&& drop) {
    auto drain = [&](std::vector<T>& idle) {
      for (T& item : idle) drop(item);
      idle.clear();
    };
    for (Shard& shard : shards_) drain(shard.idle);
    std::lock_guard<std::mutex> lock(shared_mu_);
    drain(shared_);
  }

 private:
  struct alignas(64) Shard {
    std::vector<T> idle;  // touched only by the thread owning the slot
  };
  // A shard per ThreadSlot (a live thread's own; a slot, and what its
  // shard holds, passes to a later thread only after its owner exited);
  // threads beyond kThreadSlots share one list under a lock.
  template <typename Op>
  bool OnMyShard(Op&& op) {
    const size_t slot = ThreadSlot();
    if (slot != kNoThreadSlot) return op(shards_[slot].idle);
    std::lock_guard<std::mutex> lock(shared_mu_);
    return op(shared_);
  }
  std::array<Shard, kThreadSlots> shards_;
  std::mutex shared_mu_;
  std::vector<T> shared_;
};

}  // namespace jigsaw::bench

#endif  // JIGSAW_BENCH_IDLE_POOL_H_
