#include "emulation/power_failure_harness.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <random>

#include "emulation/power_failure.h"
#include "jigsaw/db.h"
#include "jigsaw/iterator.h"
#include "jigsaw/write_batch.h"

namespace jigsaw::emulation {

namespace {

struct Op {
  std::string key;
  std::string value;
  bool is_delete = false;
};
struct Batch {
  std::vector<Op> ops;
  bool sync = false;
};
using State = std::map<std::string, std::string>;

std::vector<Batch> MakeBatches(const PowerFailureWorkload& w) {
  std::mt19937_64 rng(w.seed);
  std::vector<Batch> batches(static_cast<size_t>(w.batches));
  for (size_t i = 0; i < batches.size(); ++i) {
    Batch& b = batches[i];
    b.sync = std::uniform_real_distribution<double>(0, 1)(rng) < w.sync_fraction;
    const int ops = 1 + static_cast<int>(rng() % 4);
    for (int j = 0; j < ops; ++j) {
      char key[32];
      std::snprintf(key, sizeof(key), "key%05d", static_cast<int>(rng() % static_cast<uint64_t>(w.keys)));
      Op op;
      op.key = key;
      op.is_delete = rng() % 10 == 0;
      if (!op.is_delete) {
        op.value = "batch" + std::to_string(i) + "-op" + std::to_string(j) + "-";
        op.value.resize(std::max<size_t>(op.value.size(), static_cast<size_t>(w.value_size)), 'v');
      }
      b.ops.push_back(std::move(op));
    }
  }
  return batches;
}

Status WriteBatches(DB* db, const std::vector<Batch>& batches, size_t begin, size_t end,
                    std::atomic<uint64_t>* durable_floor) {
  for (size_t i = begin; i < end; ++i) {
    WriteBatch batch;
    for (const Op& op : batches[i].ops) {
      if (op.is_delete) {
        batch.Delete(op.key);
      } else {
        batch.Put(op.key, op.value);
      }
    }
    WriteOptions wo;
    wo.sync = batches[i].sync;
    Status s = db->Write(wo, &batch);
    if (!s.ok()) return s;
    if (wo.sync) durable_floor->store(i + 1);  // everything up to i is now promised
  }
  return Status::OK();
}

// Makes the file at `path` hold `bytes`, rewriting only the pages that differ
// (the previous check left a similar pool there): cheaper than a rewrite.
Status WriteImage(const std::string& path, const std::vector<char>& bytes) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0600);
  if (fd < 0) return Status::IOError(path, std::strerror(errno));
  Status s;
  if (::ftruncate(fd, static_cast<off_t>(bytes.size())) != 0) s = Status::IOError(path, std::strerror(errno));
  void* map = s.ok() ? ::mmap(nullptr, bytes.size(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  ::close(fd);
  if (!s.ok()) return s;
  if (map == MAP_FAILED) return Status::IOError(path, std::strerror(errno));
  auto* dest = static_cast<char*>(map);
  constexpr size_t kPage = 4096;
  for (size_t offset = 0; offset < bytes.size(); offset += kPage) {
    const size_t n = std::min(kPage, bytes.size() - offset);
    if (std::memcmp(dest + offset, bytes.data() + offset, n) != 0) std::memcpy(dest + offset, bytes.data() + offset, n);
  }
  ::munmap(map, bytes.size());
  return Status::OK();
}

// Opens the image as a database and checks it; "" if it passes.
std::string CheckImage(const std::string& check_dir, const std::vector<char>& image, const Options& options,
                       const std::vector<State>& states, const std::vector<std::string>& keys,
                       uint64_t durable_floor) {
  std::error_code ec;
  std::filesystem::create_directories(check_dir, ec);
  Status s = WriteImage(check_dir + "/pool", image);
  if (!s.ok()) return s.ToString();
  Options open_options = options;
  open_options.create_if_missing = false;
  std::unique_ptr<DB> db;
  s = DB::Open(open_options, check_dir, &db);
  if (!s.ok()) return "open: " + s.ToString();
  s = db->VerifyIntegrity();
  if (!s.ok()) return "VerifyIntegrity: " + s.ToString();

  State forward;
  std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) forward[it->key().ToString()] = it->value().ToString();
  if (!it->status().ok()) return "forward scan: " + it->status().ToString();
  State reverse;
  for (it->SeekToLast(); it->Valid(); it->Prev()) reverse[it->key().ToString()] = it->value().ToString();
  if (!it->status().ok()) return "reverse scan: " + it->status().ToString();
  if (reverse != forward) return "forward and reverse scans differ";
  for (const std::string& key : keys) {
    std::string got;
    s = db->Get(ReadOptions(), key, &got);
    auto expected = forward.find(key);
    if (s.IsNotFound() ? expected != forward.end() : (!s.ok() || expected == forward.end() || got != expected->second)) {
      return "Get(" + key + ") disagrees with the scan: " + s.ToString();
    }
  }
  for (size_t n = durable_floor; n < states.size(); ++n) {
    if (states[n] == forward) return "";
  }
  // Describe the closest explanation for the report.
  size_t best = 0, best_diff = SIZE_MAX;
  for (size_t n = 0; n < states.size(); ++n) {
    size_t diff = 0;
    for (const auto& [k, v] : states[n]) {
      auto f = forward.find(k);
      if (f == forward.end() || f->second != v) ++diff;
    }
    for (const auto& [k, v] : forward) diff += states[n].count(k) == 0;
    if (diff < best_diff) best = n, best_diff = diff;
  }
  return "contents match no prefix of >= " + std::to_string(durable_floor) + " batches (closest: " +
         std::to_string(best) + " batches, " + std::to_string(best_diff) + " keys differ)";
}

}  // namespace

Status RunPowerFailureHarness(const std::string& dir, const PowerFailureWorkload& workload,
                              PowerFailureReport* report) {
  *report = PowerFailureReport();
  if (!workload.options.pmem_path.empty()) return Status::InvalidArgument("pmem_path", "must be empty");
  if (workload.batches_before_arming > workload.batches) {
    return Status::InvalidArgument("batches_before_arming", "exceeds batches");
  }
  const std::vector<Batch> batches = MakeBatches(workload);
  std::vector<State> states(1);
  for (const Batch& b : batches) {
    State next = states.back();
    for (const Op& op : b.ops) {
      if (op.is_delete) {
        next.erase(op.key);
      } else {
        next[op.key] = op.value;
      }
    }
    states.push_back(std::move(next));
  }
  std::vector<std::string> keys;
  for (const Batch& b : batches) {
    for (const Op& op : b.ops) keys.push_back(op.key);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());

  const std::string db_dir = dir + "/db";
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError(dir, ec.message());
  Options options = workload.options;
  options.create_if_missing = true;
  std::atomic<uint64_t> durable_floor{0};
  const auto before = static_cast<size_t>(workload.batches_before_arming);
  {
    std::unique_ptr<DB> db;
    Status s = DB::Open(options, db_dir, &db);
    if (s.ok()) s = WriteBatches(db.get(), batches, 0, before, &durable_floor);
    if (!s.ok()) return s;
  }  // a clean close makes every batch so far durable
  durable_floor = before;

  PowerFailureSimulator& sim = PowerFailureSimulator::Instance();
  Status s = sim.Arm(db_dir + "/pool", [&durable_floor] { return durable_floor.load(); });
  if (!s.ok()) return s;
  {
    std::unique_ptr<DB> db;
    s = DB::Open(options, db_dir, &db);  // recovery is tracked too
    if (s.ok()) s = WriteBatches(db.get(), batches, before, batches.size(), &durable_floor);
  }
  sim.Disarm();
  if (!s.ok()) return s;

  const size_t points = sim.persist_points();
  report->persist_points = points;
  const size_t stride = workload.max_checks == 0 ? 1 : std::max<size_t>(1, (points + workload.max_checks - 1) / workload.max_checks);
  std::mt19937_64 rng(workload.seed);
  PowerFailureSimulator::ImageCursor cursor(sim);
  auto check = [&](const std::vector<char>& image, size_t point, const char* what) {
    ++report->checks;
    std::string failure = CheckImage(dir + "/check", image, options, states, keys, sim.label_at(point));
    if (failure.empty()) return;
    ++report->failed_checks;
    if (report->failures.size() < 20) {
      report->failures.push_back(std::string(what) + " at persist point " + std::to_string(point) + "/" +
                                 std::to_string(points) + ": " + failure);
    }
  };
  for (size_t point = 0; point <= points; point += stride) {
    cursor.AdvanceTo(point);
    check(cursor.image(), point, "power failure");
    if (workload.reorder && point < points && sim.lines_at(point + 1) > 1) {
      check(cursor.ImageWithPartialNextPoint(&rng), point, "power failure with reordered lines");
    }
  }
  if (points % stride != 0) {
    cursor.AdvanceTo(points);
    check(cursor.image(), points, "power failure");
  }
  std::filesystem::remove_all(dir + "/check", ec);
  return Status::OK();
}

}  // namespace jigsaw::emulation
