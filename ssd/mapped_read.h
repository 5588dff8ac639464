// Guarded reads of a file's read-only mapping.
//
// Reading a table through mmap costs no system call and no copy, but the
// kernel reports a page it cannot supply -- an I/O error, or a page past the
// end of a file truncated behind the engine's back -- with SIGBUS, which by
// default ends the process. A guarded read turns that signal into a failed
// call, so the caller can return Status::IOError instead.
//
// How: the first guarded read installs a process-wide SIGBUS handler (the
// handler found before it is kept and called for every SIGBUS that does not
// come from a guarded read, so an application's own handling is unchanged;
// an application that replaces the handler afterwards must chain to it, or
// a read fault kills the process as without the guard). A guarded read
// marks its thread; the handler, on such a thread, jumps back out of the
// read -- for a SIGBUS the kernel raised for an access, not for one sent by
// kill or raise, which takes its usual course.
//
// Contract for `read`: it may read mapped pages and write memory the
// caller owns. A fault abandons it at any instruction that touches the
// mapping, skipping the destructors of its own locals: it must not hold
// locks; what it allocates should be owned by objects of the caller (which
// stay valid, in the state the last completed assignment left them), and
// what it had allocated and not yet handed over is leaked -- acceptable for
// a fault, which means an I/O error. Guarded reads may nest.
//
// Thread-safety: any thread, concurrently.
#ifndef JIGSAW_SSD_MAPPED_READ_H_
#define JIGSAW_SSD_MAPPED_READ_H_

#include <type_traits>

namespace jigsaw::ssd {

// Runs fn(arg); false if it was abandoned on a SIGBUS, true otherwise.
bool RunGuardedRead(void (*fn)(void*), void* arg);

// Runs read(); false if a SIGBUS abandoned it, true otherwise.
template <typename Read>
bool GuardedMappedRead(Read&& read) {
  using R = std::remove_reference_t<Read>;
  return RunGuardedRead([](void* r) { (*static_cast<R*>(r))(); }, static_cast<void*>(&read));
}

}  // namespace jigsaw::ssd

#endif  // JIGSAW_SSD_MAPPED_READ_H_
