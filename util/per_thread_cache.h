// PerThreadCache<T>: each thread's own reference to the latest version of
// a shared object that is replaced now and then (DBImpl's read state), so
// that a reader takes it without a lock and without touching the object's
// shared reference count -- cache lines that every reading core would
// otherwise pass between them on each read.
//
// Each live thread of the process owns one slot (ThreadSlot(), below); a
// slot is empty or holds a reference to the object that was latest when
// its thread filled it. Contract:
//  - Acquire() leases the calling thread's slot (filling it from `latest`
//    when empty) and returns the object; the lease is given back when it
//    is destroyed, on the same thread. A thread without a slot, or leasing
//    its slot twice, gets an empty lease: the caller takes the object its
//    usual way.
//  - Invalidate(), called after a new object is published, empties every
//    slot and drops the references it held; a slot leased at that moment
//    is emptied when its lease ends. So an acquire that follows an
//    Invalidate() never sees an object older than the one published
//    before it, and no slot keeps an old object alive past the next
//    Invalidate().
#ifndef JIGSAW_UTIL_PER_THREAD_CACHE_H_
#define JIGSAW_UTIL_PER_THREAD_CACHE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace jigsaw {

// How many threads of a process own a slot at once.
inline constexpr size_t kThreadSlots = 64;
inline constexpr size_t kNoThreadSlot = SIZE_MAX;

// A number in [0, kThreadSlots) that no other live thread of the process
// has, fixed for the calling thread's life and given back when it exits;
// kNoThreadSlot once kThreadSlots live threads have one.
size_t ThreadSlot();

template <typename T>
class PerThreadCache {
  static constexpr uintptr_t kEmpty = 0;
  static constexpr uintptr_t kInUse = 1;
  // A slot: kEmpty, kInUse (leased), or the address of the reference it
  // holds. One cache line each: threads never share one.
  struct alignas(64) Slot {
    std::atomic<uintptr_t> value{kEmpty};
  };

 public:
  class Lease {
   public:
    Lease() = default;
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() {
      if (slot_ == nullptr) return;
      uintptr_t expected = kInUse;
      if (!slot_->value.compare_exchange_strong(expected, reinterpret_cast<uintptr_t>(held_),
                                                std::memory_order_acq_rel)) {
        delete held_;  // the slot was emptied while leased
      }
    }
    // The object, or nullptr for an empty lease.
    const T* get() const { return held_ != nullptr ? held_->get() : nullptr; }
    // A reference of the caller's own to the object (null for an empty
    // lease): it outlives the lease and any Invalidate().
    std::shared_ptr<const T> Share() const { return held_ != nullptr ? *held_ : nullptr; }

   private:
    friend class PerThreadCache;
    Lease(Slot* slot, std::shared_ptr<const T>* held) : slot_(slot), held_(held) {}
    Slot* slot_ = nullptr;
    std::shared_ptr<const T>* held_ = nullptr;
  };

  PerThreadCache() = default;
  PerThreadCache(const PerThreadCache&) = delete;
  PerThreadCache& operator=(const PerThreadCache&) = delete;
  // No lease may be live.
  ~PerThreadCache() { Invalidate(); }

  // `latest()` returns a std::shared_ptr<const T> to the latest object; it
  // is called only to fill an empty slot.
  template <typename Latest>
  Lease Acquire(Latest&& latest) {
    const size_t index = ThreadSlot();
    if (index == kNoThreadSlot) return Lease();
    Slot& slot = slots_[index];
    const uintptr_t value = slot.value.exchange(kInUse, std::memory_order_acq_rel);
    if (value == kInUse) return Lease();  // leased already, further up this thread's stack
    auto* held = value != kEmpty ? reinterpret_cast<std::shared_ptr<const T>*>(value)
                                 : new std::shared_ptr<const T>(latest());
    return Lease(&slot, held);
  }

  void Invalidate() {
    for (Slot& slot : slots_) {
      if (slot.value.load(std::memory_order_relaxed) == kEmpty) continue;
      const uintptr_t value = slot.value.exchange(kEmpty, std::memory_order_acq_rel);
      if (value != kEmpty && value != kInUse) delete reinterpret_cast<std::shared_ptr<const T>*>(value);
    }
  }

 private:
  Slot slots_[kThreadSlots];
};

}  // namespace jigsaw

#endif  // JIGSAW_UTIL_PER_THREAD_CACHE_H_
