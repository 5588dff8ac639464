// PoolSpace: how the engine allocates pool objects without letting writes
// take the room that flushes and compactions need to empty a full pool.
//
// It holds standby space -- chunks reserved but never committed, so a crash
// returns them to the pool -- and hands them back only to callers that may
// use them (flushes, compactions, deletes). docs/sizing.md explains the
// amounts; pmem/pool_sizing.h computes them.
//
// Thread-safety: every method may be called concurrently.
#ifndef JIGSAW_PMEM_POOL_SPACE_H_
#define JIGSAW_PMEM_POOL_SPACE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "jigsaw/status.h"
#include "pmem/pool.h"

namespace jigsaw::pmem {

class PoolSpace {
 public:
  // `pool` must outlive the PoolSpace. Until StartStandby no standby is
  // kept (a complete standby is 0 chunks).
  explicit PoolSpace(Pool* pool) : pool_(pool) {}
  ~PoolSpace();  // cancels the standby's reservations
  PoolSpace(const PoolSpace&) = delete;
  PoolSpace& operator=(const PoolSpace&) = delete;

  // From now on a complete standby is `chunks` chunks; reserves them as far
  // as the pool allows.
  void StartStandby(size_t chunks);

  // Reserves a pool object (see Pool::Reserve). With may_use_standby a full
  // pool gives up standby chunks, as few as the object needs, and retries;
  // without it the reservation is refused (NoSpace) while the standby is not
  // complete -- after first refilling it from space freed since.
  Status Reserve(ObjectType type, uint64_t size, bool zero, Reservation* reservation, bool may_use_standby);

  // Re-reserves standby chunks until the standby is complete or the pool is
  // out of space.
  void Refill();

  size_t held();  // standby chunks held now
  size_t complete_chunks() const { return standby_chunks_.load(std::memory_order_relaxed); }
  std::string State();  // "held/complete"

  // NoSpace for a full pool: `detail` (what did not fit), then the pool's
  // size, the bytes in use and the bytes held back (docs/sizing.md).
  Status FullStatus(const std::string& detail);

 private:
  void RefillLocked();
  Status FullStatusLocked(const std::string& detail) const;

  Pool* const pool_;
  std::atomic<size_t> standby_chunks_{0};
  std::mutex mutex_;
  std::vector<Reservation> standby_;  // guarded by mutex_
};

}  // namespace jigsaw::pmem

#endif  // JIGSAW_PMEM_POOL_SPACE_H_
