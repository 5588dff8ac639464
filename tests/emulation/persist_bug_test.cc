// The power-failure harness catches a dropped or reordered persist: this
// binary links the engine built with src/persist_bug.h's deliberate bugs, and
// each bug must make the harness report failed checks.
#include <gtest/gtest.h>

#include "emulation/power_failure_harness.h"
#include "util/persist_bug.h"
#include "tests/support/db_test_util.h"

namespace jigsaw::emulation {
namespace {

PowerFailureWorkload BugWorkload() {
  PowerFailureWorkload w;
  w.options = test::TinyPoolOptions();
  w.batches = 450;
  w.batches_before_arming = 50;
  w.max_checks = 0;  // every point: a reordering shows only between two persists
  w.reorder = false;
  return w;
}

class PersistBugTest : public ::testing::TestWithParam<testing::PersistBug> {
 protected:
  void TearDown() override { testing::persist_bug = testing::kNoPersistBug; }
};

TEST_P(PersistBugTest, HarnessDetectsTheBug) {
  test::ScratchDir dir;
  testing::persist_bug = GetParam();
  PowerFailureReport report;
  const Status s = RunPowerFailureHarness(dir.path(), BugWorkload(), &report);
  testing::persist_bug = testing::kNoPersistBug;
  ASSERT_TRUE(s.ok()) << s.ToString();
  std::printf("bug %d: %zu of %zu checks failed; first: %s\n", static_cast<int>(GetParam()), report.failed_checks,
              report.checks, report.failures.empty() ? "-" : report.failures[0].c_str());
  EXPECT_GT(report.failed_checks, 0u);
}

INSTANTIATE_TEST_SUITE_P(Bugs, PersistBugTest,
                         ::testing::Values(testing::kDropWalPersist, testing::kManifestAfterCommit,
                                           testing::kDropFlushBlockPersist));

// The same binary without a bug selected passes: the failures above come from
// the bugs, not from the build.
TEST(PersistBugBaselineTest, NoBugSelectedPasses) {
  test::ScratchDir dir;
  PowerFailureWorkload w = BugWorkload();
  w.max_checks = 100;
  PowerFailureReport report;
  ASSERT_TRUE(RunPowerFailureHarness(dir.path(), w, &report).ok());
  for (const std::string& f : report.failures) ADD_FAILURE() << f;
  EXPECT_EQ(report.failed_checks, 0u);
}

}  // namespace
}  // namespace jigsaw::emulation
