// Clocks for the compaction profile.
//
// ProfileClock reads the CPU's time-stamp counter, converted to nanoseconds
// with a rate measured once against steady_clock (steady_clock off x86).
// A read is not free: on the virtual machines this project is measured on,
// one costs ~25 ns -- as much as the per-entry work it would time. So
// per-entry phases are sampled (SampledPhase): a pseudo-random 1 in 16 calls
// is timed and the sum scaled up, and the clock's own cost is measured and
// taken out (docs/performance.md, "How the profiler measures").
#ifndef JIGSAW_UTIL_PROFILE_CLOCK_H_
#define JIGSAW_UTIL_PROFILE_CLOCK_H_

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <utility>

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
  // Runs both calibrations (~6 ms) now rather than inside the first timed
  // interval. Thread-safe.
  static void Calibrate() {
    (void)NanosPerTick();
    (void)IntervalOverhead();
  }
  // Nanoseconds in `ticks` (thread-safe; calibrates on first use).
  static uint64_t ToNanos(uint64_t ticks) { return static_cast<uint64_t>(static_cast<double>(ticks) * NanosPerTick()); }
  static double ToNanosExact(double ticks) { return ticks * NanosPerTick(); }

  // What timing one interval costs (thread-safe; calibrated on first use):
  // `inside_ticks` is the part that shows up between the two reads (the
  // median difference of two back-to-back reads), `wall_ns` the whole cost
  // of the two reads to the thread that makes them.
  struct Overhead {
    double inside_ticks;
    double wall_ns;
  };
  static const Overhead& IntervalOverhead() {
    static const Overhead overhead = [] {
      std::array<uint64_t, 2001> differences;
      for (uint64_t& d : differences) {
        const uint64_t a = Ticks();
        d = Ticks() - a;
      }
      std::nth_element(differences.begin(), differences.begin() + differences.size() / 2, differences.end());
      constexpr int kPairs = 20000;
      uint64_t sink = 0;
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < kPairs; ++i) sink += Ticks() - Ticks();
      const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
      asm volatile("" : : "r"(sink));
      return Overhead{static_cast<double>(differences[differences.size() / 2]), ns / kPairs};
    }();
    return overhead;
  }

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

// Parts of the work inside a timed call, in the paper's words
// (docs/performance.md, "Phases in the paper's words"): code that a
// SampledPhase may be timing marks its plain copies (bytes moved unchanged),
// its filter and checksum work (hashing keys for a Bloom filter, setting
// its bits, CRCs: the same work on the same bytes in every format) and,
// when reading, its conversion out of a block format (varints parsed, keys
// rebuilt from shared prefixes) with TimePart. The phase adds each part's
// time, scaled like the call's, to the part's total.
enum class WorkPart : int { kCopy = 0, kFilterChecksum = 1, kConvert = 2 };
inline constexpr int kWorkParts = 3;

// The parts of the call being timed on this thread, if any.
struct PartTimes {
  double ns[kWorkParts] = {};
  uint32_t intervals = 0;  // parts timed (each two clock reads)
};
inline thread_local PartTimes* t_part_times = nullptr;

// Runs `work`, adding its time to `part` of the call a SampledPhase is
// timing on this thread; outside a timed call (profiling off, a call not
// sampled) it only runs the work, after one thread-local load. Parts do not
// nest.
template <typename Work>
inline decltype(auto) TimePart(WorkPart part, Work&& work) {
  PartTimes* times = t_part_times;
  if (times == nullptr) return work();
  struct Charge {
    PartTimes* times;
    WorkPart part;
    uint64_t start;
    ~Charge() {
      const double ticks = static_cast<double>(ProfileClock::Ticks() - start);
      times->ns[static_cast<int>(part)] +=
          ProfileClock::ToNanosExact(ticks - ProfileClock::IntervalOverhead().inside_ticks);
      ++times->intervals;
    }
  } charge{times, part, 0};
  charge.start = ProfileClock::Ticks();
  return work();
}

// Time spent in one per-entry phase of a compaction (decoding inputs,
// building outputs), estimated from a pseudo-random 1 in kSampleEvery of its
// calls; rare heavy calls (opening an input, finishing a block) go through
// RunExact. `excluded` returns a running total of nanoseconds that belong to
// another phase and are measured exactly there (block reads, table appends);
// what it grows by during a timed call is taken out of that call.
//
// The parts of the phase (TimePart) are measured on other sampled calls
// than its total: sampled calls alternate between timing the call whole,
// with part timers off (the phase's total), and timing only its parts. Part
// timers inside a small call cost more than their calibrated clock reads
// (they disturb the work around them), which would otherwise inflate the
// total. Exact calls time both (their parts are few and large).
// Not thread-safe: one per compaction, used by its thread.
class SampledPhase {
 public:
  static constexpr uint32_t kSampleEvery = 16;
  using ExcludedNanos = uint64_t (*)(const void* context);

  explicit SampledPhase(ExcludedNanos excluded = nullptr, const void* context = nullptr)
      : excluded_(excluded), context_(context) {}

  template <typename Work>
  decltype(auto) Run(Work&& work) {
    ++calls_;
    // xorshift32: a sample pattern with no period that entry layouts
    // (skiplist heights, block boundaries) could line up with.
    rng_ ^= rng_ << 13;
    rng_ ^= rng_ >> 17;
    rng_ ^= rng_ << 5;
    if ((rng_ & (kSampleEvery - 1)) != 0) return work();
    parts_turn_ = !parts_turn_;
    if (parts_turn_) {
      ++part_sampled_calls_;
      return TimeParts(&sampled_parts_, std::forward<Work>(work));
    }
    ++sampled_calls_;
    return Time(&sampled_ns_, nullptr, std::forward<Work>(work));
  }
  template <typename Work>
  decltype(auto) RunExact(Work&& work) {
    ++exact_calls_;
    return Time(&exact_ns_, &exact_parts_, std::forward<Work>(work));
  }

  // Estimated nanoseconds of all calls, net of the excluded time and of the
  // clock's own cost.
  uint64_t EstimatedNanos() const {
    const double scaled = sampled_calls_ == 0 ? 0.0 : sampled_ns_ * static_cast<double>(calls_) / sampled_calls_;
    return static_cast<uint64_t>(std::max(0.0, scaled + exact_ns_));
  }
  // Of EstimatedNanos, what the calls marked as `part` (TimePart).
  uint64_t EstimatedPartNanos(WorkPart part) const {
    const int i = static_cast<int>(part);
    const double scaled = part_sampled_calls_ == 0
                              ? 0.0
                              : sampled_parts_.ns[i] * static_cast<double>(calls_) / part_sampled_calls_;
    return static_cast<uint64_t>(std::max(0.0, scaled + exact_parts_.ns[i]));
  }
  // Wall time the timing itself cost the thread (to take out of the total).
  uint64_t InstrumentationNanos() const {
    return static_cast<uint64_t>(
        static_cast<double>(sampled_calls_ + exact_calls_ + sampled_parts_.intervals + exact_parts_.intervals) *
        ProfileClock::IntervalOverhead().wall_ns);
  }

 private:
  // Times `work` into *total_ns; with `parts`, its marked parts into *parts
  // too (the parts' own clock reads are taken out of the call's time);
  // without, part timers are off during the call.
  template <typename Work>
  decltype(auto) Time(double* total_ns, PartTimes* parts, Work&& work) {
    struct Charge {
      SampledPhase* phase;
      double* total_ns;
      PartTimes* parts;
      PartTimes* outer_parts;
      PartTimes call_parts;
      uint64_t excluded_before;
      uint64_t start;
      ~Charge() {
        const uint64_t ticks = ProfileClock::Ticks() - start;
        t_part_times = outer_parts;
        const uint64_t excluded = phase->Excluded() - excluded_before;
        const ProfileClock::Overhead& overhead = ProfileClock::IntervalOverhead();
        *total_ns += ProfileClock::ToNanosExact(static_cast<double>(ticks) - overhead.inside_ticks) -
                     static_cast<double>(excluded) - call_parts.intervals * overhead.wall_ns;
        if (parts != nullptr) {
          for (int i = 0; i < kWorkParts; ++i) parts->ns[i] += call_parts.ns[i];
          parts->intervals += call_parts.intervals;
        }
      }
    } charge{this, total_ns, parts, t_part_times, PartTimes(), Excluded(), 0};
    t_part_times = parts != nullptr ? &charge.call_parts : nullptr;
    charge.start = ProfileClock::Ticks();
    return work();
  }
  // Runs `work` with its marked parts timed into *parts; the call itself is
  // not timed.
  template <typename Work>
  decltype(auto) TimeParts(PartTimes* parts, Work&& work) {
    struct Restore {
      PartTimes* parts;
      PartTimes* outer_parts;
      PartTimes call_parts;
      ~Restore() {
        t_part_times = outer_parts;
        for (int i = 0; i < kWorkParts; ++i) parts->ns[i] += call_parts.ns[i];
        parts->intervals += call_parts.intervals;
      }
    } restore{parts, t_part_times, PartTimes()};
    t_part_times = &restore.call_parts;
    return work();
  }
  uint64_t Excluded() const { return excluded_ == nullptr ? 0 : excluded_(context_); }

  const ExcludedNanos excluded_;
  const void* const context_;
  uint32_t rng_ = 0x9E3779B9u;
  bool parts_turn_ = false;
  uint64_t calls_ = 0, sampled_calls_ = 0, part_sampled_calls_ = 0, exact_calls_ = 0;
  double sampled_ns_ = 0, exact_ns_ = 0;
  PartTimes sampled_parts_, exact_parts_;
};

}  // namespace jigsaw

#endif  // JIGSAW_UTIL_PROFILE_CLOCK_H_
