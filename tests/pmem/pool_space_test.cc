// The pool's standby space (pmem/pool_space.h): chunks held back from
// writes so that flushes and compactions can still run in a full pool.
#include "pmem/pool_space.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pmem/pool_sizing.h"
#include "tests/support/db_test_util.h"

namespace jigsaw {
namespace {

std::unique_ptr<pmem::Pool> OpenPool(const std::string& path) {
  pmem::PoolOptions o;
  o.path = path;
  o.size = 32 << 20;
  o.create_if_missing = true;
  o.comparator_name = "jigsaw.BytewiseComparator";
  std::unique_ptr<pmem::Pool> pool;
  EXPECT_TRUE(pmem::Pool::Open(o, &pool).ok());
  return pool;
}

// Reserves one-chunk objects until the pool refuses; returns them.
std::vector<pmem::Reservation> FillPool(pmem::PoolSpace* space, bool may_use_standby) {
  std::vector<pmem::Reservation> taken;
  for (;;) {
    pmem::Reservation r;
    if (!space->Reserve(pmem::ObjectType::kBlock, 100 << 10, false, &r, may_use_standby).ok()) break;
    taken.push_back(r);
  }
  return taken;
}

TEST(PoolSpaceTest, TheStandbyServesOnlyCallersThatMayUseIt) {
  test::ScratchDir dir;
  auto pool = OpenPool(dir.path() + "/pool");
  ASSERT_NE(pool, nullptr);
  pmem::PoolSpace space(pool.get());
  space.StartStandby(4);
  EXPECT_EQ(space.held(), 4u);
  EXPECT_EQ(space.State(), "4/4");

  // Writes fill the pool but never take the standby.
  std::vector<pmem::Reservation> writes = FillPool(&space, /*may_use_standby=*/false);
  EXPECT_FALSE(writes.empty());
  EXPECT_EQ(space.held(), 4u);
  pmem::Reservation refused;
  Status s = space.Reserve(pmem::ObjectType::kBlock, 100 << 10, false, &refused, false);
  EXPECT_TRUE(s.IsNoSpace()) << s.ToString();

  // A flush may: it gets standby chunks, as few as it needs.
  pmem::Reservation flush;
  ASSERT_TRUE(space.Reserve(pmem::ObjectType::kBlock, 100 << 10, false, &flush, true).ok());
  EXPECT_EQ(space.held(), 3u);
  EXPECT_EQ(space.State(), "3/4");

  // Space freed later refills the standby before writes get any of it.
  pool->Cancel(&flush);
  pool->Cancel(&writes.back());
  writes.pop_back();
  s = space.Reserve(pmem::ObjectType::kBlock, 100 << 10, false, &refused, false);
  EXPECT_EQ(space.held(), 4u);
  if (s.ok()) pool->Cancel(&refused);
  for (auto& r : writes) pool->Cancel(&r);
}

TEST(PoolSpaceTest, AFullPoolIsReportedWithItsNumbers) {
  test::ScratchDir dir;
  auto pool = OpenPool(dir.path() + "/pool");
  ASSERT_NE(pool, nullptr);
  pmem::PoolSpace space(pool.get());
  space.StartStandby(2);
  std::vector<pmem::Reservation> writes = FillPool(&space, /*may_use_standby=*/false);
  pmem::Reservation r;
  const Status s = space.Reserve(pmem::ObjectType::kBlock, 100 << 10, false, &r, false);
  ASSERT_TRUE(s.IsNoSpace());
  EXPECT_NE(s.ToString().find("pool"), std::string::npos) << s.ToString();
  const Status full = space.FullStatus("a test object");
  EXPECT_TRUE(full.IsNoSpace());
  EXPECT_NE(full.ToString().find("a test object"), std::string::npos) << full.ToString();
  for (auto& w : writes) pool->Cancel(&w);
}

}  // namespace
}  // namespace jigsaw
