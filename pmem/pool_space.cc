#include "pmem/pool_space.h"

#include "pmem/pool_sizing.h"

namespace jigsaw::pmem {

PoolSpace::~PoolSpace() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Reservation& chunk : standby_) pool_->Cancel(&chunk);
  standby_.clear();
}

void PoolSpace::StartStandby(size_t chunks) {
  standby_chunks_.store(chunks, std::memory_order_relaxed);
  Refill();
}

Status PoolSpace::Reserve(ObjectType type, uint64_t size, bool zero, Reservation* reservation,
                          bool may_use_standby) {
  std::lock_guard<std::mutex> lock(mutex_);
  const size_t complete = complete_chunks();
  if (!may_use_standby && standby_.size() < complete) {
    // Space freed since the last refill (a compaction's inputs, released
    // by their last reader) goes back to the standby first; a write is
    // refused only while the pool really lacks it.
    RefillLocked();
    if (standby_.size() < complete) {
      return FullStatusLocked("writes that need new pool space wait until the space held back is complete again");
    }
  }
  Status s = pool_->Reserve(type, size, zero, reservation);
  // Release only as many standby chunks as this object needs, so that the
  // rest stays for the flushes and compaction steps that follow.
  uint64_t release = ObjectChunks(size);
  while (s.IsNoSpace() && may_use_standby && !standby_.empty()) {
    for (; release > 0 && !standby_.empty(); --release) {
      pool_->Cancel(&standby_.back());
      standby_.pop_back();
    }
    s = pool_->Reserve(type, size, zero, reservation);
    release = 1;  // fragmentation: free one more chunk per retry
  }
  if (s.IsNoSpace()) {
    const char* what = type == ObjectType::kBlock        ? "block"
                       : type == ObjectType::kWalSegment ? "WAL segment"
                                                         : "manifest";
    return FullStatusLocked("no room for a " + FormatBytes(ObjectChunks(size) * kPoolChunk) + " " + what);
  }
  return s;
}

void PoolSpace::Refill() {
  std::lock_guard<std::mutex> lock(mutex_);
  RefillLocked();
}

void PoolSpace::RefillLocked() {
  while (standby_.size() < complete_chunks()) {
    Reservation chunk;
    if (!pool_->Reserve(ObjectType::kBlock, kPoolChunk - kPoolChunkHeader, /*zero=*/false, &chunk).ok()) return;
    standby_.push_back(std::move(chunk));
  }
}

size_t PoolSpace::held() {
  std::lock_guard<std::mutex> lock(mutex_);
  return standby_.size();
}

std::string PoolSpace::State() {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::to_string(standby_.size()) + "/" + std::to_string(complete_chunks());
}

Status PoolSpace::FullStatus(const std::string& detail) {
  std::lock_guard<std::mutex> lock(mutex_);
  return FullStatusLocked(detail);
}

Status PoolSpace::FullStatusLocked(const std::string& detail) const {
  return Status::NoSpace("pmem pool full", detail + "; " + FormatBytes(pool_->pool_size()) + " pool (" +
                                               FormatBytes(PoolHeapChunks(pool_->pool_size()) * kPoolChunk) +
                                               " for objects), " + FormatBytes(pool_->used_bytes()) + " in use, " +
                                               FormatBytes(standby_.size() * kPoolChunk) +
                                               " held back for flush and compaction; see docs/sizing.md");
}

}  // namespace jigsaw::pmem
