// A cheap clock for the compaction profile: the CPU's time-stamp counter,
// converted to nanoseconds with a rate measured once against steady_clock.
// Two reads cost a few nanoseconds, so timing every entry of a compaction
// stays affordable. Falls back to steady_clock off x86.
#ifndef JIGSAW_SRC_PROFILE_CLOCK_H_
#define JIGSAW_SRC_PROFILE_CLOCK_H_

#include <chrono>
#include <cstdint>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace jigsaw {

// Steady-clock nanoseconds (for timings that happen per block, not per entry).
inline uint64_t SteadyNanos() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

class ProfileClock {
 public:
  static uint64_t Ticks() {
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#else
    return static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
  }
  // Nanoseconds in `ticks` (thread-safe; calibrates on first use).
  static uint64_t ToNanos(uint64_t ticks) { return static_cast<uint64_t>(static_cast<double>(ticks) * NanosPerTick()); }

 private:
  static double NanosPerTick() {
    static const double rate = [] {
#if defined(__x86_64__) || defined(__i386__)
      const auto t0 = std::chrono::steady_clock::now();
      const uint64_t c0 = __rdtsc();
      while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(5)) {
      }
      const uint64_t c1 = __rdtsc();
      const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
      return c1 > c0 ? ns / static_cast<double>(c1 - c0) : 1.0;
#else
      return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::duration(1)).count();
#endif
    }();
    return rate;
  }
};

}  // namespace jigsaw

#endif  // JIGSAW_SRC_PROFILE_CLOCK_H_
