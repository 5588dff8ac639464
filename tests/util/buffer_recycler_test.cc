#include "util/buffer_recycler.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <thread>
#include <vector>

namespace jigsaw {
namespace {

TEST(BufferRecyclerTest, AReturnedBufferIsTheNextOneTaken) {
  BufferRecycler recycler(4096, /*max_kept=*/2);
  EXPECT_EQ(recycler.buffer_bytes(), 4096u);
  uint64_t* first = nullptr;
  {
    BufferRecycler::Buffer b = recycler.Take();
    first = b.get();
    std::memset(b.get(), 0xab, recycler.buffer_bytes());  // the whole buffer is writable
  }
  BufferRecycler::Buffer again = recycler.Take();
  EXPECT_EQ(again.get(), first);
  BufferRecycler::Buffer other = recycler.Take();  // none idle: a new one
  EXPECT_NE(other.get(), first);
}

TEST(BufferRecyclerTest, KeepsAtMostMaxKeptIdleBuffers) {
  BufferRecycler recycler(64, /*max_kept=*/2);
  std::set<uint64_t*> kept;
  {
    std::vector<BufferRecycler::Buffer> held;
    for (int i = 0; i < 5; ++i) held.push_back(recycler.Take());
    // Returned in order: the first two are kept, the other three freed.
    for (int i = 0; i < 2; ++i) kept.insert(held[i].get());
  }
  EXPECT_EQ(recycler.idle(), 2u);
  BufferRecycler::Buffer a = recycler.Take();
  BufferRecycler::Buffer b = recycler.Take();
  EXPECT_TRUE(kept.count(a.get()) == 1 && kept.count(b.get()) == 1);
  EXPECT_NE(a.get(), b.get());
}

// A buffer larger than the recycler's is made for the taker and freed when
// returned: it is never handed out again.
TEST(BufferRecyclerTest, ALargerBufferIsNotKept) {
  BufferRecycler recycler(64, /*max_kept=*/2);
  {
    BufferRecycler::Buffer b = recycler.Take(1000);
    std::memset(b.get(), 0xcd, 1000);  // all of it is writable
  }
  EXPECT_EQ(recycler.idle(), 0u);
  uint64_t* kept = nullptr;
  {
    BufferRecycler::Buffer small = recycler.Take(64);
    kept = small.get();
  }
  EXPECT_EQ(recycler.idle(), 1u);
  BufferRecycler::Buffer again = recycler.Take(10);
  EXPECT_EQ(again.get(), kept);  // a smaller request gets a buffer of buffer_bytes()
  EXPECT_EQ(recycler.idle(), 0u);
}

// Under ThreadSanitizer (scripts/test.sh): takers on several threads never
// share a buffer they both hold.
TEST(BufferRecyclerConcurrencyTest, ThreadsNeverHoldTheSameBuffer) {
  BufferRecycler recycler(256, /*max_kept=*/3);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&recycler, t] {
      for (int i = 0; i < 2000; ++i) {
        BufferRecycler::Buffer b = recycler.Take();
        const uint64_t mark = (uint64_t(t) << 32) | uint64_t(i);
        for (size_t w = 0; w < 256 / 8; ++w) b[w] = mark;
        for (size_t w = 0; w < 256 / 8; ++w) ASSERT_EQ(b[w], mark);
      }
    });
  }
  for (auto& th : threads) th.join();
}

}  // namespace
}  // namespace jigsaw
