#include "util/guarded_read.h"

#include <algorithm>
#include <atomic>
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <mutex>

namespace jigsaw {

namespace {

struct sigaction previous_action;
std::once_flag installed;

// The jump target of this thread's innermost guarded read, or null. Initial
// exec TLS: the handler reads it without calling into the TLS resolver.
__attribute__((tls_model("initial-exec"))) thread_local sigjmp_buf* guarded_read = nullptr;

void OnSigbus(int signo, siginfo_t* info, void* context) {
  // si_code > 0: raised by the kernel for this thread's access; <= 0: sent
  // (kill, raise, sigqueue), which no guarded read should swallow.
  const bool fault = info != nullptr && info->si_code > 0;
  if (sigjmp_buf* target = guarded_read; target != nullptr && fault) siglongjmp(*target, 1);
  // Not from a guarded read: what would have happened without the guard.
  if ((previous_action.sa_flags & SA_SIGINFO) != 0) {
    previous_action.sa_sigaction(signo, info, context);
  } else if (previous_action.sa_handler == SIG_IGN && !fault) {
    // A sent SIGBUS the application ignores.
  } else if (previous_action.sa_handler == SIG_DFL || previous_action.sa_handler == SIG_IGN) {
    // The default action, which a fault's SIGBUS gets even when ignored:
    // a fault repeats its access when the handler returns; a sent signal is
    // raised again.
    std::signal(SIGBUS, SIG_DFL);
    if (!fault) std::raise(SIGBUS);
  } else {
    previous_action.sa_handler(signo);
  }
}

void Install() {
  struct sigaction action = {};
  action.sa_sigaction = OnSigbus;
  // NODEFER: the handler leaves by siglongjmp without restoring the signal
  // mask (sigsetjmp(.., 0) saves none: a system call less per read), so
  // SIGBUS must not be blocked while it runs.
  action.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  sigaction(SIGBUS, &action, &previous_action);
}

}  // namespace

bool RunGuardedRead(void (*fn)(void*), void* arg) {
  std::call_once(installed, Install);
  sigjmp_buf target;
  sigjmp_buf* const outer = guarded_read;
  if (sigsetjmp(target, 0) != 0) {
    guarded_read = outer;
    return false;
  }
  guarded_read = &target;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  try {
    fn(arg);
  } catch (...) {
    // An exception (std::bad_alloc of a copy, say) leaves the read: the
    // thread must not jump back into this frame on a later SIGBUS.
    guarded_read = outer;
    throw;
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);
  guarded_read = outer;
  return true;
}

std::string DescribeUnreadable(const char* data, size_t size) {
  constexpr size_t kPage = 4096;
  std::string ranges;
  size_t bad_begin = 0;
  bool in_bad = false;
  // Pages as the mapping aligns them: the first and last may be partial.
  const uintptr_t start = reinterpret_cast<uintptr_t>(data);
  for (size_t at = 0; at < size;) {
    const size_t next = std::min(size, static_cast<size_t>((start + at) / kPage * kPage + kPage - start));
    const bool bad = !ProbeReadable(data + at, next - at);
    if (bad && !in_bad) bad_begin = at;
    if (!bad && in_bad) ranges += (ranges.empty() ? "[" : ", [") + std::to_string(bad_begin) + ", " + std::to_string(at) + ")";
    in_bad = bad;
    at = next;
  }
  if (in_bad) ranges += (ranges.empty() ? "[" : ", [") + std::to_string(bad_begin) + ", " + std::to_string(size) + ")";
  return ranges;
}

bool GuardedCopy(char* to, const char* from, size_t size) {
  return GuardedRead([&] { std::memcpy(to, from, size); });
}

}  // namespace jigsaw
