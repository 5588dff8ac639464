// Interposes libpmem's persistence calls for crash-test binaries: each call
// does the real work through libpmem and reports flushes and drains to the
// PowerFailureSimulator. Linked (as an object library) only into tests; the
// dynamic linker then binds both the engine's and libpmemobj's calls here.
#include <dlfcn.h>
#include <libpmem.h>

#include <cstdio>
#include <cstdlib>

#include "emulation/power_failure.h"

namespace {

using jigsaw::emulation::PowerFailureSimulator;

template <typename Fn>
Fn Real(const char* name) {
  void* fn = dlvsym(RTLD_NEXT, name, "LIBPMEM_1.0");
  if (fn == nullptr) fn = dlsym(RTLD_NEXT, name);
  if (fn == nullptr) {
    std::fprintf(stderr, "libpmem_interpose: libpmem has no %s\n", name);
    std::abort();
  }
  return reinterpret_cast<Fn>(fn);
}

// libpmem's own functions call each other through exported symbols, so they
// come back here: only the outermost call of a thread reports.
thread_local int depth = 0;

template <typename Fn>
class RealFunction {
 public:
  explicit RealFunction(const char* name) : fn_(Real<Fn>(name)) {}
  template <typename... Args>
  auto operator()(Args... args) const {
    ++depth;
    struct Leave {
      ~Leave() { --depth; }
    } leave;
    return fn_(args...);
  }

 private:
  Fn fn_;
};

#define REAL(name) static const RealFunction<decltype(&name)> real(#name)

void Flushed(const void* addr, size_t len) {
  if (depth == 0) PowerFailureSimulator::Instance().OnFlush(addr, len);
}
void Drained() {
  if (depth == 0) PowerFailureSimulator::Instance().OnDrain();
}

void Stored(const void* dest, size_t len, unsigned flags) {
  if ((flags & PMEM_F_MEM_NOFLUSH) == 0) Flushed(dest, len);
  if ((flags & PMEM_F_MEM_NODRAIN) == 0) Drained();
}

}  // namespace

extern "C" {
#pragma GCC visibility push(default)

void pmem_flush(const void* addr, size_t len) {
  REAL(pmem_flush);
  real(addr, len);
  Flushed(addr, len);
}

void pmem_drain(void) {
  REAL(pmem_drain);
  real();
  Drained();
}

void pmem_persist(const void* addr, size_t len) {
  REAL(pmem_persist);
  real(addr, len);
  Flushed(addr, len);
  Drained();
}

int pmem_msync(const void* addr, size_t len) {
  REAL(pmem_msync);
  const int result = real(addr, len);
  Flushed(addr, len);
  Drained();
  return result;
}

void pmem_deep_flush(const void* addr, size_t len) {
  REAL(pmem_deep_flush);
  real(addr, len);
  Flushed(addr, len);
}

int pmem_deep_drain(const void* addr, size_t len) {
  REAL(pmem_deep_drain);
  const int result = real(addr, len);
  Drained();
  return result;
}

int pmem_deep_persist(const void* addr, size_t len) {
  REAL(pmem_deep_persist);
  const int result = real(addr, len);
  Flushed(addr, len);
  Drained();
  return result;
}

void* pmem_memcpy(void* dest, const void* src, size_t len, unsigned flags) {
  REAL(pmem_memcpy);
  void* result = real(dest, src, len, flags);
  Stored(dest, len, flags);
  return result;
}

void* pmem_memmove(void* dest, const void* src, size_t len, unsigned flags) {
  REAL(pmem_memmove);
  void* result = real(dest, src, len, flags);
  Stored(dest, len, flags);
  return result;
}

void* pmem_memset(void* dest, int c, size_t len, unsigned flags) {
  REAL(pmem_memset);
  void* result = real(dest, c, len, flags);
  Stored(dest, len, flags);
  return result;
}

void* pmem_memcpy_nodrain(void* dest, const void* src, size_t len) {
  REAL(pmem_memcpy_nodrain);
  void* result = real(dest, src, len);
  Stored(dest, len, PMEM_F_MEM_NODRAIN);
  return result;
}

void* pmem_memmove_nodrain(void* dest, const void* src, size_t len) {
  REAL(pmem_memmove_nodrain);
  void* result = real(dest, src, len);
  Stored(dest, len, PMEM_F_MEM_NODRAIN);
  return result;
}

void* pmem_memset_nodrain(void* dest, int c, size_t len) {
  REAL(pmem_memset_nodrain);
  void* result = real(dest, c, len);
  Stored(dest, len, PMEM_F_MEM_NODRAIN);
  return result;
}

void* pmem_memcpy_persist(void* dest, const void* src, size_t len) {
  REAL(pmem_memcpy_persist);
  void* result = real(dest, src, len);
  Stored(dest, len, 0);
  return result;
}

void* pmem_memmove_persist(void* dest, const void* src, size_t len) {
  REAL(pmem_memmove_persist);
  void* result = real(dest, src, len);
  Stored(dest, len, 0);
  return result;
}

void* pmem_memset_persist(void* dest, int c, size_t len) {
  REAL(pmem_memset_persist);
  void* result = real(dest, c, len);
  Stored(dest, len, 0);
  return result;
}

#pragma GCC visibility pop
}  // extern "C"
