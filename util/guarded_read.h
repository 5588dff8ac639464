// Guarded reads of mapped memory: an SSD table's file mapping, a pmem pool.
//
// Reading through a mapping costs no system call and no copy, but the
// kernel reports a page it cannot supply -- an I/O error, a page past the
// end of a file truncated behind the engine's back, a poisoned line of
// persistent memory (a media error) -- with SIGBUS, which by default ends
// the process. A guarded read turns that signal into a failed call, so the
// caller can return an IOError or Corruption Status instead.
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
#ifndef JIGSAW_UTIL_GUARDED_READ_H_
#define JIGSAW_UTIL_GUARDED_READ_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

namespace jigsaw {

// Runs fn(arg); false if it was abandoned on a SIGBUS, true otherwise.
bool RunGuardedRead(void (*fn)(void*), void* arg);

// Runs read(); false if a SIGBUS abandoned it, true otherwise.
template <typename Read>
bool GuardedRead(Read&& read) {
  using R = std::remove_reference_t<Read>;
  return RunGuardedRead([](void* r) { (*static_cast<R*>(r))(); }, static_cast<void*>(&read));
}

// Loads one byte of every 64-byte line of [data, data + size): inside a
// guarded read, makes a line that cannot be read fault there rather than
// later, in a caller that reads the bytes unguarded. (A line poisoned after
// the probe is not caught.)
inline void ProbeLines(const char* data, size_t size) {
  if (size == 0) return;
  const volatile char* p = data;
  for (size_t i = 0; i < size; i += 64) (void)p[i];
  (void)p[size - 1];
}

// True if every line of [data, data + size) can be read now.
inline bool ProbeReadable(const char* data, size_t size) {
  return GuardedRead([&] { ProbeLines(data, size); });
}

// The stretches of [data, data + size) that cannot be read, a 4 KiB page
// (the unit a mapping faults in) at a time, as "[begin, end)" offsets from
// data, comma-separated; empty if every byte can be read. For error
// messages: each unreadable page costs a signal.
std::string DescribeUnreadable(const char* data, size_t size);

// Copies [from, from + size) to `to` (which must not fault); false if a
// line of `from` could not be read (`to` then holds an unspecified prefix).
bool GuardedCopy(char* to, const char* from, size_t size);

}  // namespace jigsaw

#endif  // JIGSAW_UTIL_GUARDED_READ_H_
