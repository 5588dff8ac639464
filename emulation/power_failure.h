// PowerFailureSimulator: a persistence domain for crash tests on emulated
// pmem (docs/emulation.md).
//
// While armed for a pool file, it keeps that file's *durable image*: the bytes
// a power failure would leave. The image changes only when a cache line is
// flushed and then drained (fenced) by the thread that flushed it -- the x86
// persistence rules -- or msync'ed; a line's content is taken when it is
// flushed. Unflushed stores never reach the image.
//
// The simulator sits at libpmem's API (emulation/libpmem_interpose.cc, linked
// only into crash-test binaries, defines pmem_flush, pmem_drain, pmem_msync,
// pmem_memcpy... and reports to it). That is below both the engine's
// pmem::Region and libpmemobj, whose own persists (allocator metadata, redo
// logs, the root pointer swing) would bypass a Region-level hook.
//
// Every drain (fence) is a *persist point*. The simulator logs the lines each
// point makes durable, so one run of a workload yields the image at every
// point: ImageCursor replays the log. A caller-supplied label (e.g. how many
// writes were acknowledged) is sampled at every point.
//
// Thread-safety: the interposed calls may come from any thread; Arm/Disarm and
// the accessors must not run concurrently with a workload.
#ifndef JIGSAW_EMULATION_POWER_FAILURE_H_
#define JIGSAW_EMULATION_POWER_FAILURE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "jigsaw/status.h"

namespace jigsaw::emulation {

inline constexpr size_t kLineSize = 64;

class PowerFailureSimulator {
 public:
  // The process-wide simulator the interposed libpmem calls report to.
  static PowerFailureSimulator& Instance();

  // Starts tracking shared mappings of the file at `path` (mapped now or
  // later); the durable image starts as the file's current bytes. `label`
  // is sampled at every persist point. Clears any earlier log.
  Status Arm(const std::string& path, std::function<uint64_t()> label);
  // Stops tracking; the log stays for inspection.
  void Disarm();
  bool armed() const { return armed_.load(std::memory_order_acquire); }

  // Persist points logged since Arm.
  size_t persist_points() const { return points_.size(); }
  // Label sampled at point `point` (1-based; 0 = at Arm).
  uint64_t label_at(size_t point) const { return point == 0 ? initial_label_ : points_[point - 1].label; }
  // Lines made durable by point `point` (1-based).
  size_t lines_at(size_t point) const;
  const std::vector<char>& initial_image() const { return initial_image_; }

  // Called by the interposed libpmem functions.
  void OnFlush(const void* addr, size_t len);
  void OnDrain();

  // Replays the log onto a copy of the initial image.
  class ImageCursor {
   public:
    explicit ImageCursor(const PowerFailureSimulator& sim) : sim_(sim), image_(sim.initial_image_) {}
    // Advances the image to just after persist point `point` (>= the current
    // point).
    void AdvanceTo(size_t point);
    size_t point() const { return point_; }
    const std::vector<char>& image() const { return image_; }
    // The image a power failure *during* point `point_ + 1` leaves: the
    // current image plus a random subset of the lines that point makes
    // durable (flushed but not yet fenced lines may reach the medium in any
    // order). Requires point() < persist_points().
    std::vector<char> ImageWithPartialNextPoint(std::mt19937_64* rng) const;

   private:
    const PowerFailureSimulator& sim_;
    std::vector<char> image_;
    size_t point_ = 0;
  };

 private:
  struct Mapping {
    uintptr_t begin = 0, end = 0;
    uint64_t file_offset = 0;
    bool tracked = false;  // a shared mapping of the armed file
  };
  struct LineWrite {
    uint64_t file_offset;  // line-aligned
    char bytes[kLineSize];
  };
  struct Point {
    size_t log_end;  // log_[previous log_end, log_end) made durable here
    uint64_t label;
  };

  // The tracked mapping containing addr (rescanning /proc/self/maps when the
  // cached scan does not show one there);
  // nullptr if none.
  const Mapping* FindMapping(uintptr_t addr);
  void ScanMappings();

  std::atomic<bool> armed_{false};
  std::mutex mu_;
  uint64_t dev_ = 0, ino_ = 0;
  std::vector<Mapping> mappings_;
  std::vector<char> initial_image_;
  uint64_t initial_label_ = 0;
  std::function<uint64_t()> label_;
  std::vector<LineWrite> log_;
  std::vector<Point> points_;
};

}  // namespace jigsaw::emulation

#endif  // JIGSAW_EMULATION_POWER_FAILURE_H_
