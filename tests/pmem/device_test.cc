#include "pmem/device.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/support/db_test_util.h"

namespace jigsaw {
namespace {

TEST(DeviceTest, DiscoveryDegradesGracefully) {
  // Machines without NVDIMMs (CI) report no devices; machines with them
  // report well-formed ones.
  const std::set<std::string> modes = {"fsdax", "devdax", "sector", "raw", "unknown"};
  for (const pmem::PmemDevice& d : pmem::ListPmemDevices()) {
    EXPECT_FALSE(d.namespace_name.empty());
    EXPECT_EQ(modes.count(d.mode), 1u) << d.mode;
    EXPECT_GE(d.numa_node, -1);
  }
  EXPECT_GE(pmem::NumaNodeCount(), 1);
}

TEST(DeviceTest, NumaNodeOfPaths) {
  test::ScratchDir dir;
  if (dir.path().rfind("/dev/shm", 0) == 0) {
    EXPECT_EQ(pmem::NumaNodeForPath(dir.path()), -1);  // tmpfs has no device
  }
  EXPECT_EQ(pmem::NumaNodeForPath(dir.path() + "/missing"), -1);
  EXPECT_FALSE(pmem::BindThreadToNode(-1));
}

}  // namespace
}  // namespace jigsaw
