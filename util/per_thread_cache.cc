#include "util/per_thread_cache.h"

#include <mutex>
#include <vector>

namespace jigsaw {

namespace {

// The slots no live thread owns. Never destroyed: threads may exit (and
// give their slot back) while the process runs its static destructors.
struct SlotRegistry {
  std::mutex mutex;
  std::vector<size_t> returned;
  size_t next = 0;  // slots below it were handed out at least once
};

SlotRegistry& Registry() {
  static SlotRegistry* registry = new SlotRegistry;
  return *registry;
}

// The calling thread's slot, given back at its exit.
struct ThreadSlotOwner {
  size_t slot = kNoThreadSlot;
  ThreadSlotOwner() {
    SlotRegistry& r = Registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    if (!r.returned.empty()) {
      slot = r.returned.back();
      r.returned.pop_back();
    } else if (r.next < kThreadSlots) {
      slot = r.next++;
    }
  }
  ~ThreadSlotOwner() {
    if (slot == kNoThreadSlot) return;
    SlotRegistry& r = Registry();
    std::lock_guard<std::mutex> lock(r.mutex);
    r.returned.push_back(slot);
  }
};

}  // namespace

size_t ThreadSlot() {
  thread_local ThreadSlotOwner owner;
  return owner.slot;
}

}  // namespace jigsaw
