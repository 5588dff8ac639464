// Deliberate persistence bugs, compiled in only by the test-only build of the
// engine (target jigsaw_persist_bug, define JIGSAW_PERSIST_BUG_HOOKS) to prove
// that the power-failure harness catches a dropped or reordered persist
// (tests/emulation/persist_bug_test.cc). In every other build JIGSAW_PERSIST_BUG(n)
// is the constant false.
#ifndef JIGSAW_UTIL_PERSIST_BUG_H_
#define JIGSAW_UTIL_PERSIST_BUG_H_

namespace jigsaw::testing {

enum PersistBug {
  kNoPersistBug = 0,
  kDropWalPersist = 1,         // WalWriter::Sync persists nothing
  kManifestAfterCommit = 2,    // the manifest is persisted after the root points to it
  kDropFlushBlockPersist = 3,  // a flushed L0 block is committed unpersisted
};

#ifdef JIGSAW_PERSIST_BUG_HOOKS
extern PersistBug persist_bug;  // selected by the test
#define JIGSAW_PERSIST_BUG(bug) (::jigsaw::testing::persist_bug == ::jigsaw::testing::bug)
#else
#define JIGSAW_PERSIST_BUG(bug) false
#endif

}  // namespace jigsaw::testing

#endif  // JIGSAW_UTIL_PERSIST_BUG_H_
