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

// A cache and the object it caches, replaced by Publish; Latest() counts
// the slot fills.
class PerThreadCacheTest : public ::testing::Test {
 protected:
  PerThreadCache<Object>::Lease Acquire() {
    return cache_.Acquire([this] {
      ++fills_;
      return latest_;
    });
  }
  void Publish(int version) {
    latest_ = std::make_shared<const Object>(Object{version});
    cache_.Invalidate();
  }

  PerThreadCache<Object> cache_;
  std::shared_ptr<const Object> latest_ = std::make_shared<const Object>(Object{1});
  int fills_ = 0;
};

TEST_F(PerThreadCacheTest, ALeaseIsFilledOnceFromTheLatest) {
  for (int i = 0; i < 3; ++i) {
    const auto lease = Acquire();
    ASSERT_NE(lease.get(), nullptr);
    EXPECT_EQ(lease.get(), latest_.get());
  }
  EXPECT_EQ(fills_, 1);
  EXPECT_EQ(latest_.use_count(), 2);  // ours and the slot's
}

TEST_F(PerThreadCacheTest, InvalidateReleasesTheHeldObjectAndTheNextLeaseSeesTheNewOne) {
  { const auto lease = Acquire(); }
  const std::weak_ptr<const Object> old = latest_;
  latest_ = std::make_shared<const Object>(Object{2});
  EXPECT_FALSE(old.expired());  // the slot holds it
  cache_.Invalidate();
  EXPECT_TRUE(old.expired());
  const auto lease = Acquire();
  EXPECT_EQ(lease.get()->version, 2);
}

TEST_F(PerThreadCacheTest, AnObjectLeasedDuringInvalidateIsReleasedWhenTheLeaseEnds) {
  const std::weak_ptr<const Object> old = latest_;
  {
    const auto lease = Acquire();
    Publish(2);
    EXPECT_EQ(lease.get()->version, 1);  // still usable
    EXPECT_FALSE(old.expired());
  }
  EXPECT_TRUE(old.expired());
  const auto lease = Acquire();
  EXPECT_EQ(lease.get()->version, 2);
}

TEST_F(PerThreadCacheTest, ALeaseTakenUnderAnotherOnTheSameThreadIsEmpty) {
  const auto outer = Acquire();
  ASSERT_NE(outer.get(), nullptr);
  {
    const auto inner = Acquire();
    EXPECT_EQ(inner.get(), nullptr);
  }
  EXPECT_EQ(outer.get(), latest_.get());
}

TEST(PerThreadCacheSlotTest, SlotsAreUniqueAmongLiveThreadsAndReusedAfterTheyExit) {
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
TEST(PerThreadCacheConcurrencyTest, ConcurrentReadersSeeNoVersionOlderThanTheOnePublishedBeforeThem) {
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
