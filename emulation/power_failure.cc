#include "emulation/power_failure.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <fstream>
#include <sstream>

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

Status PowerFailureSimulator::Arm(const std::string& path, std::function<uint64_t()> label) {
  std::lock_guard<std::mutex> lock(mu_);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Status::IOError(path, std::strerror(errno));
  std::ifstream in(path, std::ios::binary);
  initial_image_.assign(static_cast<size_t>(st.st_size), 0);
  if (!in.read(initial_image_.data(), st.st_size)) return Status::IOError(path, "cannot read");
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  label_ = std::move(label);
  initial_label_ = label_ ? label_() : 0;
  log_.clear();
  points_.clear();
  mappings_.clear();
  arm_generation.fetch_add(1);
  armed_.store(true, std::memory_order_release);
  return Status::OK();
}

void PowerFailureSimulator::Disarm() {
  armed_.store(false, std::memory_order_release);
  std::lock_guard<std::mutex> lock(mu_);
  mappings_.clear();
}

size_t PowerFailureSimulator::lines_at(size_t point) const {
  const size_t begin = point >= 2 ? points_[point - 2].log_end : 0;
  return points_[point - 1].log_end - begin;
}

void PowerFailureSimulator::ScanMappings() {
  mappings_.clear();
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    std::string range, perms, offset, dev;
    uint64_t inode = 0;
    fields >> range >> perms >> offset >> dev >> inode;
    Mapping m;
    const size_t dash = range.find('-');
    const size_t colon = dev.find(':');
    if (dash == std::string::npos || colon == std::string::npos || perms.size() < 4) continue;
    m.begin = std::stoull(range.substr(0, dash), nullptr, 16);
    m.end = std::stoull(range.substr(dash + 1), nullptr, 16);
    m.file_offset = std::stoull(offset, nullptr, 16);
    const auto major_number = static_cast<unsigned>(std::stoul(dev.substr(0, colon), nullptr, 16));
    const auto minor_number = static_cast<unsigned>(std::stoul(dev.substr(colon + 1), nullptr, 16));
    m.tracked = perms[3] == 's' && inode == ino_ && makedev(major_number, minor_number) == dev_;
    mappings_.push_back(m);
  }
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
  }
  pending.lines.clear();
  points_.push_back(Point{log_.size(), label_ ? label_() : 0});
}

void PowerFailureSimulator::ImageCursor::AdvanceTo(size_t point) {
  const size_t begin = point_ == 0 ? 0 : sim_.points_[point_ - 1].log_end;
  const size_t end = point == 0 ? 0 : sim_.points_[point - 1].log_end;
  for (size_t i = begin; i < end; ++i) {
    const LineWrite& w = sim_.log_[i];
    std::memcpy(image_.data() + w.file_offset, w.bytes, kLineSize);
  }
  point_ = std::max(point_, point);
}

std::vector<char> PowerFailureSimulator::ImageCursor::ImageWithPartialNextPoint(std::mt19937_64* rng) const {
  std::vector<char> image = image_;
  const size_t begin = point_ == 0 ? 0 : sim_.points_[point_ - 1].log_end;
  const size_t end = sim_.points_[point_].log_end;
  for (size_t i = begin; i < end; ++i) {
    if ((*rng)() & 1) {
      const LineWrite& w = sim_.log_[i];
      std::memcpy(image.data() + w.file_offset, w.bytes, kLineSize);
    }
  }
  return image;
}

}  // namespace jigsaw::emulation
