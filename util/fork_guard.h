// The fork guard: a process-wide mutex for a library that forks a child
// while other threads of the process run (pmem::Pool inspects a pool in a
// child, docs/design/005-pmem-pool.md).
//
// A child forked from a multithreaded process has copies of every
// descriptor and a snapshot of every lock as it was at the fork. So:
//  - the fork happens under the guard, and the guard is held until the
//    child has closed the descriptors it inherited: a flock taken on
//    another descriptor of the same file (a database or pool the parent
//    closed and opens again) does not find the child's copy holding it
//    (a pool's mapping, which the child also copies, holds the pool's
//    flock until the child exits: pmem::Pool tries a locked pool again for
//    a while);
//  - every acquisition of a flock (FileSystem::LockFile, pmemobj_open and
//    pmemobj_create, DestroyPool) holds the guard;
//  - every call into libpmemobj that changes its process-wide state (its
//    registry of open pools, behind a mutex of its own; ctl settings such
//    as copy_on_write.at_open that apply to every later open) holds the
//    guard, so the child never inherits that mutex locked by a thread it
//    does not have, and one thread's setting never applies to another's
//    open.
// Held only for those short calls; never while waiting on anything else.
#ifndef JIGSAW_UTIL_FORK_GUARD_H_
#define JIGSAW_UTIL_FORK_GUARD_H_

#include <sys/file.h>

#include <cerrno>
#include <mutex>

namespace jigsaw {

inline std::mutex& ForkGuard() {
  static std::mutex mutex;
  return mutex;
}

// How long a lock that a forked child may still hold is tried again: the
// child of a process killed an instant ago, or of another thread's pool
// inspection, dies with it or soon after (pmem::Pool's opens and
// inspections, FileSystem::LockFile): 40 times 5 ms.
inline constexpr int kLockedRetries = 40;
inline constexpr unsigned kLockedRetryMicros = 5000;

// flock(fd, LOCK_EX | LOCK_NB) under the guard: 0, or flock's errno.
inline int LockExclusiveGuarded(int fd) {
  std::lock_guard<std::mutex> guard(ForkGuard());
  return ::flock(fd, LOCK_EX | LOCK_NB) == 0 ? 0 : errno;
}

}  // namespace jigsaw

#endif  // JIGSAW_UTIL_FORK_GUARD_H_
