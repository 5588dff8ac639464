// PowerFailureSimulator: a persistence domain for crash tests on emulated
// pmem (docs/emulation.md).
//
// While armed for a pool file, it keeps that file's *durable image*: the bytes
// a power failure would leave for certain. The image changes only when a
// cache line is flushed and then drained (fenced) by the thread that flushed
// it -- the x86 persistence rules -- or msync'ed; a line's content is taken
// when it is flushed.
//
// The simulator sits at libpmem's API (emulation/libpmem_interpose.cc, linked
// only into crash-test binaries, defines pmem_flush, pmem_drain, pmem_msync,
// pmem_memcpy... and reports to it). That is below both the engine's
// pmem::Region and libpmemobj, whose own persists (allocator metadata, redo
// logs, the root pointer swing) would bypass a Region-level hook.
//
// Every drain (fence) is a *persist point*; so is every AddExternalPoint (a
// durability event outside the pool, such as an fsync of an SSD table). The
// simulator logs the lines each point makes durable, so one run of a workload
// yields the image at every point: ImageCursor replays the log. Caller-
// supplied labels (e.g. how many writes were acknowledged, how long a file
// journal is) are sampled at every point.
//
// Early eviction: a dirty cache line may be written back at any time, flushed
// or not. The simulator cannot see stores, so with `track_dirty_lines` it
// compares, at every point, the live mapping with the durable image: each
// line that differs is *evictable* there, with the content it has at that
// moment (also the lines other threads flushed and have not yet drained).
// ImageCursor builds images where a random subset of them, or of their 8-byte
// words (x86 promises no more atomicity than that), reached the medium.
//
// Thread-safety: the interposed calls and AddExternalPoint may come from any
// thread; Arm/Disarm and the accessors must not run concurrently with a
// workload.
#ifndef JIGSAW_EMULATION_POWER_FAILURE_H_
#define JIGSAW_EMULATION_POWER_FAILURE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "jigsaw/status.h"

namespace jigsaw::emulation {

inline constexpr size_t kLineSize = 64;

struct ArmOptions {
  // Sampled at every persist point (and at Arm): label_at().
  std::function<uint64_t()> label;
  // Sampled likewise: file_events_at() (hybrid mode: the length of the
  // file system's journal, tests/support/fault_injection_fs.h).
  std::function<uint64_t()> file_events;
  // Record the evictable lines at every point (early eviction). Costs a
  // comparison of the whole mapping with the image per point.
  bool track_dirty_lines = false;
};

class PowerFailureSimulator {
 public:
  // The process-wide simulator the interposed libpmem calls report to.
  static PowerFailureSimulator& Instance();

  // Starts tracking shared mappings of the file at `path` (mapped now or
  // later); the durable image starts as the file's current bytes. Clears any
  // earlier log.
  Status Arm(const std::string& path, ArmOptions options);
  Status Arm(const std::string& path, std::function<uint64_t()> label) {
    ArmOptions options;
    options.label = std::move(label);
    return Arm(path, std::move(options));
  }
  // Stops tracking; the log stays for inspection.
  void Disarm();
  bool armed() const { return armed_.load(std::memory_order_acquire); }

  // Persist points logged since Arm.
  size_t persist_points() const { return points_.size(); }
  // Of them, points added by AddExternalPoint.
  size_t external_points() const { return external_points_; }
  // Labels sampled at point `point` (1-based; 0 = at Arm).
  uint64_t label_at(size_t point) const { return point == 0 ? initial_.label : points_[point - 1].label; }
  uint64_t file_events_at(size_t point) const {
    return point == 0 ? initial_.file_events : points_[point - 1].file_events;
  }
  // Lines made durable by point `point` (1-based).
  size_t lines_at(size_t point) const;
  // Lines evictable just after point `point` (0 = at Arm); 0 unless armed
  // with track_dirty_lines.
  size_t evictable_at(size_t point) const { return EvictEnd(point) - EvictBegin(point); }
  // Distinct (line, content) pairs ever evictable: the memory the eviction
  // log holds, in lines.
  size_t evictable_contents() const { return evictable_.size(); }
  const std::vector<char>& initial_image() const { return initial_image_; }

  // Called by the interposed libpmem functions.
  void OnFlush(const void* addr, size_t len);
  void OnDrain();
  // A persist point that makes no pool line durable: a durability event the
  // caller tracks itself (its label, e.g. file_events, records it). Ignored
  // unless armed.
  void AddExternalPoint();

 private:
  struct LineWrite {
    uint64_t file_offset;  // line-aligned
    char bytes[kLineSize];
  };

 public:
  // Replays the log onto a copy of the initial image.
  class ImageCursor {
   public:
    explicit ImageCursor(const PowerFailureSimulator& sim)
        : sim_(sim), image_(sim.initial_image_), variant_(sim.initial_image_) {}
    // Advances the image to just after persist point `point` (>= the current
    // point).
    void AdvanceTo(size_t point);
    size_t point() const { return point_; }
    const std::vector<char>& image() const { return image_; }
    // The image a power failure *during* point `point_ + 1` leaves: the
    // current image plus a random subset of the lines that point makes
    // durable (flushed but not yet fenced lines may reach the medium in any
    // order), some of them only in part (a random subset of their 8-byte
    // words). Requires point() < persist_points(). Valid until the next call
    // on this cursor.
    const std::vector<char>& ImageWithPartialNextPoint(std::mt19937_64* rng);
    // The image a power failure just after point() leaves when caches wrote
    // back dirty lines early: the current image plus a random subset of the
    // lines evictable there, some of them only in part (8-byte words). Valid
    // until the next call on this cursor.
    const std::vector<char>& ImageWithEarlyEviction(std::mt19937_64* rng);

   private:
    // Makes variant_ equal image_ again.
    void ResetVariant();
    void ApplyToVariant(const LineWrite& w, std::mt19937_64* rng);

    const PowerFailureSimulator& sim_;
    std::vector<char> image_;
    // image_ plus the lines of the last variant (at `variant_lines_`): kept
    // rather than copied per variant, as images are as large as the pool.
    std::vector<char> variant_;
    std::vector<uint64_t> variant_lines_;
    size_t point_ = 0;
  };

 private:
  struct Mapping {
    uintptr_t begin = 0, end = 0;
    uint64_t file_offset = 0;
    bool tracked = false;  // a shared mapping of the armed file
    bool readable = false;
  };
  struct Labels {
    uint64_t label = 0;
    uint64_t file_events = 0;
  };
  struct Point : Labels {
    size_t log_end;    // log_[previous log_end, log_end) made durable here
    size_t evict_end;  // evict_index_[previous evict_end, evict_end) evictable after it
  };

  // The tracked mapping containing addr (rescanning /proc/self/maps when the
  // cached scan does not show one there);
  // nullptr if none.
  const Mapping* FindMapping(uintptr_t addr);
  void ScanMappings();
  Labels SampleLabels() const;
  // Ends a persist point: logs it and, with track_dirty_lines, its evictable
  // lines. Requires mu_.
  void EndPoint();
  // Appends to evict_index_ the lines of tracked mappings that differ from
  // durable_. Requires mu_.
  void RecordEvictableLines();
  size_t EvictBegin(size_t point) const { return point == 0 ? 0 : EvictEnd(point - 1); }
  size_t EvictEnd(size_t point) const { return point == 0 ? initial_evict_end_ : points_[point - 1].evict_end; }
  // Applies `w` to `image`: wholly, or (with `rng`) each of its 8-byte words
  // with probability 1/2.
  static void ApplyLine(const LineWrite& w, std::vector<char>* image, std::mt19937_64* rng);

  std::atomic<bool> armed_{false};
  std::mutex mu_;
  uint64_t dev_ = 0, ino_ = 0;
  std::vector<Mapping> mappings_;
  std::vector<char> initial_image_;
  std::vector<char> durable_;  // the image after the last point
  ArmOptions options_;
  Labels initial_;
  std::vector<LineWrite> log_;
  std::vector<Point> points_;
  size_t external_points_ = 0;
  // Early eviction: distinct (line, content) pairs, the latest one per line,
  // and per point the indexes of those evictable after it.
  std::vector<LineWrite> evictable_;
  std::unordered_map<uint64_t, uint32_t> latest_evictable_;
  std::vector<uint32_t> evict_index_;
  size_t initial_evict_end_ = 0;
};

}  // namespace jigsaw::emulation

#endif  // JIGSAW_EMULATION_POWER_FAILURE_H_
