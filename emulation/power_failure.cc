#include "emulation/power_failure.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace jigsaw::emulation {

namespace {

// Lines this thread has flushed and not yet drained, for the arming
// `generation` (lines of an earlier arming are dropped).
struct PendingLines {
  uint64_t generation = 0;
  std::vector<std::pair<uint64_t, std::array<char, kLineSize>>> lines;
};
thread_local PendingLines pending;
std::atomic<uint64_t> arm_generation{0};

}  // namespace

PowerFailureSimulator& PowerFailureSimulator::Instance() {
  static PowerFailureSimulator* sim = new PowerFailureSimulator();  // never destroyed: used until exit
  return *sim;
}

Status PowerFailureSimulator::Arm(const std::string& path, ArmOptions options) {
  std::lock_guard<std::mutex> lock(mu_);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Status::IOError(path, std::strerror(errno));
  std::ifstream in(path, std::ios::binary);
  initial_image_.assign(static_cast<size_t>(st.st_size), 0);
  if (!in.read(initial_image_.data(), st.st_size)) return Status::IOError(path, "cannot read");
  durable_ = initial_image_;
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  options_ = std::move(options);
  initial_ = SampleLabels();
  log_.clear();
  points_.clear();
  external_points_ = 0;
  evictable_.clear();
  latest_evictable_.clear();
  evict_index_.clear();
  mappings_.clear();
  if (options_.track_dirty_lines) RecordEvictableLines();
  initial_evict_end_ = evict_index_.size();
  arm_generation.fetch_add(1);
  armed_.store(true, std::memory_order_release);
  return Status::OK();
}

void PowerFailureSimulator::Disarm() {
  armed_.store(false, std::memory_order_release);
  std::lock_guard<std::mutex> lock(mu_);
  mappings_.clear();
  durable_.clear();
  durable_.shrink_to_fit();
  latest_evictable_.clear();
}

size_t PowerFailureSimulator::lines_at(size_t point) const {
  const size_t begin = point >= 2 ? points_[point - 2].log_end : 0;
  return points_[point - 1].log_end - begin;
}

void PowerFailureSimulator::ScanMappings() {
  mappings_.clear();
  FILE* maps = std::fopen("/proc/self/maps", "re");
  if (maps == nullptr) return;
  char line[4096];
  while (std::fgets(line, sizeof(line), maps) != nullptr) {
    // begin-end perms offset major:minor inode [path]
    unsigned long long begin = 0, end = 0, offset = 0, inode = 0;
    unsigned major_number = 0, minor_number = 0;
    char perms[8] = {};
    if (std::sscanf(line, "%llx-%llx %7s %llx %x:%x %llu", &begin, &end, perms, &offset, &major_number,
                    &minor_number, &inode) != 7 ||
        std::strlen(perms) < 4) {
      continue;
    }
    Mapping m;
    m.begin = begin;
    m.end = end;
    m.file_offset = offset;
    m.tracked = perms[3] == 's' && inode == ino_ && makedev(major_number, minor_number) == dev_;
    m.readable = perms[0] == 'r';
    mappings_.push_back(m);
  }
  std::fclose(maps);
}

const PowerFailureSimulator::Mapping* PowerFailureSimulator::FindMapping(uintptr_t addr) {
  auto find = [&]() -> const Mapping* {
    for (const Mapping& m : mappings_) {
      if (addr >= m.begin && addr < m.end) return &m;
    }
    return nullptr;
  };
  const Mapping* m = find();
  if (m == nullptr || !m->tracked) {
    // Mappings change: libpmemobj reserves address space and maps the pool
    // over it. Flushes outside the pool are rare (copy-on-write inspection).
    ScanMappings();
    m = find();
  }
  return m != nullptr && m->tracked ? m : nullptr;
}

PowerFailureSimulator::Labels PowerFailureSimulator::SampleLabels() const {
  Labels labels;
  labels.label = options_.label ? options_.label() : 0;
  labels.file_events = options_.file_events ? options_.file_events() : 0;
  return labels;
}

void PowerFailureSimulator::OnFlush(const void* addr, size_t len) {
  if (len == 0 || !armed()) return;
  const uint64_t generation = arm_generation.load();
  if (pending.generation != generation) {
    pending.generation = generation;
    pending.lines.clear();
  }
  const uintptr_t first = reinterpret_cast<uintptr_t>(addr) & ~uintptr_t{kLineSize - 1};
  const uintptr_t last = reinterpret_cast<uintptr_t>(addr) + len;
  std::lock_guard<std::mutex> lock(mu_);
  const Mapping* m = nullptr;
  for (uintptr_t line = first; line < last; line += kLineSize) {
    if (m == nullptr || line < m->begin || line >= m->end) m = FindMapping(line);
    if (m == nullptr) continue;
    const uint64_t file_offset = m->file_offset + (line - m->begin);
    if (file_offset + kLineSize > initial_image_.size()) continue;
    auto& entry = pending.lines.emplace_back();
    entry.first = file_offset;
    std::memcpy(entry.second.data(), reinterpret_cast<const void*>(line), kLineSize);
  }
}

void PowerFailureSimulator::OnDrain() {
  if (!armed()) return;
  if (pending.generation != arm_generation.load()) pending.lines.clear();
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [file_offset, bytes] : pending.lines) {
    LineWrite& w = log_.emplace_back();
    w.file_offset = file_offset;
    std::memcpy(w.bytes, bytes.data(), kLineSize);
    std::memcpy(durable_.data() + file_offset, bytes.data(), kLineSize);
  }
  pending.lines.clear();
  EndPoint();
}

void PowerFailureSimulator::AddExternalPoint() {
  if (!armed()) return;
  std::lock_guard<std::mutex> lock(mu_);
  ++external_points_;
  EndPoint();
}

void PowerFailureSimulator::EndPoint() {
  if (options_.track_dirty_lines) RecordEvictableLines();
  Point point;
  static_cast<Labels&>(point) = SampleLabels();
  point.log_end = log_.size();
  point.evict_end = evict_index_.size();
  points_.push_back(point);
}

void PowerFailureSimulator::RecordEvictableLines() {
  // The mappings are rescanned every time: a cached range may have been
  // unmapped (the pool closed) since the last scan.
  ScanMappings();
  constexpr size_t kPage = 4096;
  for (const Mapping& m : mappings_) {
    if (!m.tracked || !m.readable || m.file_offset >= durable_.size()) continue;
    const size_t size = std::min<size_t>(m.end - m.begin, durable_.size() - m.file_offset);
    const char* live = reinterpret_cast<const char*>(m.begin);
    const char* image = durable_.data() + m.file_offset;
    // Other threads may store into the mapping meanwhile: each line is
    // copied once and the copy is what is compared and logged.
    for (size_t page = 0; page < size; page += kPage) {
      const size_t page_end = std::min(size, page + kPage);
      if (std::memcmp(live + page, image + page, page_end - page) == 0) continue;
      for (size_t line = page; line + kLineSize <= page_end; line += kLineSize) {
        LineWrite w;
        w.file_offset = m.file_offset + line;
        std::memcpy(w.bytes, live + line, kLineSize);
        if (std::memcmp(w.bytes, image + line, kLineSize) == 0) continue;
        auto latest = latest_evictable_.find(w.file_offset);
        if (latest == latest_evictable_.end() ||
            std::memcmp(evictable_[latest->second].bytes, w.bytes, kLineSize) != 0) {
          const auto index = static_cast<uint32_t>(evictable_.size());
          evictable_.push_back(w);
          latest = latest_evictable_.insert_or_assign(w.file_offset, index).first;
        }
        evict_index_.push_back(latest->second);
      }
    }
  }
}

void PowerFailureSimulator::ApplyLine(const LineWrite& w, std::vector<char>* image, std::mt19937_64* rng) {
  char* dest = image->data() + w.file_offset;
  if (rng == nullptr) {
    std::memcpy(dest, w.bytes, kLineSize);
    return;
  }
  const uint64_t words = (*rng)();
  for (size_t word = 0; word < kLineSize / 8; ++word) {
    if ((words >> word) & 1) std::memcpy(dest + word * 8, w.bytes + word * 8, 8);
  }
}

void PowerFailureSimulator::ImageCursor::AdvanceTo(size_t point) {
  ResetVariant();
  const size_t begin = point_ == 0 ? 0 : sim_.points_[point_ - 1].log_end;
  const size_t end = point == 0 ? 0 : sim_.points_[point - 1].log_end;
  for (size_t i = begin; i < end; ++i) {
    ApplyLine(sim_.log_[i], &image_, nullptr);
    ApplyLine(sim_.log_[i], &variant_, nullptr);
  }
  point_ = std::max(point_, point);
}

void PowerFailureSimulator::ImageCursor::ResetVariant() {
  for (uint64_t offset : variant_lines_) std::memcpy(variant_.data() + offset, image_.data() + offset, kLineSize);
  variant_lines_.clear();
}

void PowerFailureSimulator::ImageCursor::ApplyToVariant(const LineWrite& w, std::mt19937_64* rng) {
  variant_lines_.push_back(w.file_offset);
  ApplyLine(w, &variant_, rng);
}

namespace {

// Per line: left out (1/2), applied whole (1/4), or word by word (1/4).
enum class Fate { kLost, kWhole, kWords };
Fate PickFate(std::mt19937_64* rng) {
  switch ((*rng)() & 3) {
    case 2:
      return Fate::kWhole;
    case 3:
      return Fate::kWords;
    default:
      return Fate::kLost;
  }
}

}  // namespace

const std::vector<char>& PowerFailureSimulator::ImageCursor::ImageWithPartialNextPoint(std::mt19937_64* rng) {
  ResetVariant();
  const size_t begin = point_ == 0 ? 0 : sim_.points_[point_ - 1].log_end;
  const size_t end = sim_.points_[point_].log_end;
  for (size_t i = begin; i < end; ++i) {
    const Fate fate = PickFate(rng);
    if (fate != Fate::kLost) ApplyToVariant(sim_.log_[i], fate == Fate::kWords ? rng : nullptr);
  }
  return variant_;
}

const std::vector<char>& PowerFailureSimulator::ImageCursor::ImageWithEarlyEviction(std::mt19937_64* rng) {
  ResetVariant();
  for (size_t i = sim_.EvictBegin(point_); i < sim_.EvictEnd(point_); ++i) {
    const Fate fate = PickFate(rng);
    if (fate != Fate::kLost) {
      ApplyToVariant(sim_.evictable_[sim_.evict_index_[i]], fate == Fate::kWords ? rng : nullptr);
    }
  }
  return variant_;
}

}  // namespace jigsaw::emulation
