// PerThreadCache: a lease returns the slot's object, filled once from the
// latest; Invalidate empties every slot, releases what they held (a leased
// one when its lease ends), and later acquires see the newer object;
// nested leases are empty; slots are unique among live threads and given
// back at exit. Concurrent readers and a publisher run under TSan.
#include "util/per_thread_cache.h"

#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <memory>
#include <set>
#include <thread>
#include <vector>

namespace jigsaw {
namespace {

struct Object {
  int version = 0;
};

TEST(PerThreadCacheTest, ALeaseIsFilledOnceFromTheLatest) {
  PerThreadCache<Object> cache;
  auto latest = std::make_shared<const Object>(Object{1});
  int calls = 0;
  auto get_latest = [&] {
    ++calls;
    return latest;
  };
  for (int i = 0; i < 3; ++i) {
    const PerThreadCache<Object>::Lease lease = cache.Acquire(get_latest);
    ASSERT_NE(lease.get(), nullptr);
    EXPECT_EQ(lease.get(), latest.get());
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(latest.use_count(), 2);  // ours and the slot's
}

TEST(PerThreadCacheTest, InvalidateReleasesTheHeldObjectAndTheNextLeaseSeesTheNewOne) {
  PerThreadCache<Object> cache;
  auto latest = std::make_shared<const Object>(Object{1});
  auto get_latest = [&] { return latest; };
  { const auto lease = cache.Acquire(get_latest); }
  std::weak_ptr<const Object> old = latest;
  latest = std::make_shared<const Object>(Object{2});
  EXPECT_FALSE(old.expired());  // the slot holds it
  cache.Invalidate();
  EXPECT_TRUE(old.expired());
  const auto lease = cache.Acquire(get_latest);
  EXPECT_EQ(lease.get()->version, 2);
}

TEST(PerThreadCacheTest, AnObjectLeasedDuringInvalidateIsReleasedWhenTheLeaseEnds) {
  PerThreadCache<Object> cache;
  auto latest = std::make_shared<const Object>(Object{1});
  auto get_latest = [&] { return latest; };
  std::weak_ptr<const Object> old = latest;
  {
    const auto lease = cache.Acquire(get_latest);
    latest = std::make_shared<const Object>(Object{2});
    cache.Invalidate();
    EXPECT_EQ(lease.get()->version, 1);  // still usable
    EXPECT_FALSE(old.expired());
  }
  EXPECT_TRUE(old.expired());
  const auto lease = cache.Acquire(get_latest);
  EXPECT_EQ(lease.get()->version, 2);
}

TEST(PerThreadCacheTest, ALeaseTakenUnderAnotherOnTheSameThreadIsEmpty) {
  PerThreadCache<Object> cache;
  auto latest = std::make_shared<const Object>(Object{1});
  auto get_latest = [&] { return latest; };
  const auto outer = cache.Acquire(get_latest);
  ASSERT_NE(outer.get(), nullptr);
  {
    const auto inner = cache.Acquire(get_latest);
    EXPECT_EQ(inner.get(), nullptr);
  }
  EXPECT_EQ(outer.get(), latest.get());
}

TEST(PerThreadCacheTest, SlotsAreUniqueAmongLiveThreadsAndReusedAfterTheyExit) {
  constexpr size_t kThreads = kThreadSlots + 4;
  std::vector<size_t> slots(kThreads);
  std::barrier all_have_one(static_cast<std::ptrdiff_t>(kThreads));
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      slots[t] = ThreadSlot();
      EXPECT_EQ(ThreadSlot(), slots[t]);  // fixed for the thread's life
      all_have_one.arrive_and_wait();
    });
  }
  for (auto& thread : threads) thread.join();
  std::set<size_t> seen;
  size_t without = 0;
  for (size_t slot : slots) {
    if (slot == kNoThreadSlot) {
      ++without;
    } else {
      EXPECT_LT(slot, kThreadSlots);
      EXPECT_TRUE(seen.insert(slot).second) << "slot " << slot << " given to two live threads";
    }
  }
  EXPECT_GE(without, 4u);  // this thread may hold one too
  size_t later = kNoThreadSlot;
  std::thread([&] { later = ThreadSlot(); }).join();
  EXPECT_NE(later, kNoThreadSlot);
}

// Readers lease while a publisher replaces the object and invalidates:
// a lease begun after a publication sees that version or a newer one, and
// at the end nothing but the latest is alive.
TEST(PerThreadCacheTest, ConcurrentReadersSeeNoVersionOlderThanTheOnePublishedBeforeThem) {
  PerThreadCache<Object> cache;
  std::mutex mutex;
  auto latest = std::make_shared<const Object>(Object{0});
  std::atomic<int> published{0};
  auto get_latest = [&] {
    std::lock_guard<std::mutex> lock(mutex);
    return latest;
  };
  std::vector<std::weak_ptr<const Object>> all{latest};
  std::atomic<bool> stop{false};
  std::atomic<int> stale{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        const int before = published.load(std::memory_order_acquire);
        const auto lease = cache.Acquire(get_latest);
        std::shared_ptr<const Object> fallback;
        if (lease.get() == nullptr) fallback = get_latest();
        const Object* object = lease.get() != nullptr ? lease.get() : fallback.get();
        if (object->version < before) stale.fetch_add(1);
      }
    });
  }
  for (int version = 1; version <= 2000; ++version) {
    auto next = std::make_shared<const Object>(Object{version});
    all.push_back(next);
    {
      std::lock_guard<std::mutex> lock(mutex);
      latest.swap(next);
    }
    cache.Invalidate();
    published.store(version, std::memory_order_release);
    if (version % 64 == 0) std::this_thread::yield();
  }
  stop = true;
  for (auto& reader : readers) reader.join();
  EXPECT_EQ(stale.load(), 0);
  cache.Invalidate();
  for (size_t i = 0; i + 1 < all.size(); ++i) EXPECT_TRUE(all[i].expired()) << "version " << i << " still held";
}

}  // namespace
}  // namespace jigsaw
