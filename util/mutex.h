// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable with
// clang's thread-safety annotations, so that the compiler checks which
// state a lock guards (-Wthread-safety, on in every clang build:
// CMakeLists.txt). GUARDED_BY(mu) on a member says it is read and written
// only with mu held; REQUIRES(mu) on a function, that callers hold mu;
// EXCLUDES(mu), that they must not.
#ifndef JIGSAW_UTIL_MUTEX_H_
#define JIGSAW_UTIL_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define JIGSAW_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define JIGSAW_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) JIGSAW_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY JIGSAW_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) JIGSAW_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) JIGSAW_THREAD_ANNOTATION(pt_guarded_by(x))
#define REQUIRES(...) JIGSAW_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) JIGSAW_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) JIGSAW_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define EXCLUDES(...) JIGSAW_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) JIGSAW_THREAD_ANNOTATION(assert_capability(x))

namespace jigsaw {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  // Tells the analysis the caller holds the mutex (no run-time check).
  void AssertHeld() ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds a Mutex for its scope; may be released and taken again inside it.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mu_->Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() {
    mu_->Unlock();
    held_ = false;
  }
  void Lock() ACQUIRE() {
    mu_->Lock();
    held_ = true;
  }

 private:
  Mutex* const mu_;
  bool held_ = true;
};

// A condition variable bound to one Mutex, which callers of Wait hold.
class CondVar {
 public:
  explicit CondVar(Mutex* mu) : mu_(mu) {}
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  // Releases the mutex while waiting; holds it again on return.
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // The same, returning after `timeout` at the latest.
  void WaitFor(std::chrono::milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_->mu_, std::adopt_lock);
    cv_.wait_for(lock, timeout);
    lock.release();
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  Mutex* const mu_;
  std::condition_variable cv_;
};

}  // namespace jigsaw

#endif  // JIGSAW_UTIL_MUTEX_H_
