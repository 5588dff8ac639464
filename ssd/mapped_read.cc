#include "ssd/mapped_read.h"

#include <atomic>
#include <csetjmp>
#include <csignal>
#include <mutex>

namespace jigsaw::ssd {

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

}  // namespace jigsaw::ssd
