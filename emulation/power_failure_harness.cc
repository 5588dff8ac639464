#include "emulation/power_failure_harness.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <thread>

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
  std::string range_end;  // a range delete of [key, range_end) when not empty
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
      if (std::uniform_real_distribution<double>(0, 1)(rng) < w.range_delete_fraction) {
        std::snprintf(key, sizeof(key), "key%05d", static_cast<int>(rng() % static_cast<uint64_t>(w.keys)) + 1);
        op.range_end = std::max(op.key, std::string(key));
        op.key = std::min(op.key, std::string(key));
        b.ops.push_back(std::move(op));
        continue;
      }
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
      if (!op.range_end.empty()) {
        batch.DeleteRange(op.key, op.range_end);
      } else if (op.is_delete) {
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

// Makes `check_dir` hold the pool `image` and, through `write_files`, the
// other files of the same moment (IDENTITY, SSD tables); opens it as a
// database and checks it; "" if it passes.
std::string CheckImage(const std::string& check_dir, const std::vector<char>& image,
                       const std::function<Status(const std::string&)>& write_files, const Options& options,
                       const std::vector<State>& states, const std::vector<std::string>& keys,
                       uint64_t durable_floor) {
  std::error_code ec;
  std::filesystem::create_directories(check_dir, ec);
  // Whatever the previous check's recovery left, but the pool (rewritten in
  // place below, page by page).
  std::vector<std::filesystem::path> leftovers;
  for (const auto& entry : std::filesystem::directory_iterator(check_dir, ec)) {
    if (entry.path().filename() != "pool") leftovers.push_back(entry.path());
  }
  for (const auto& path : leftovers) std::filesystem::remove_all(path, ec);
  Status s = WriteImage(check_dir + "/pool", image);
  if (!s.ok()) return s.ToString();
  if (write_files) {
    s = write_files(check_dir);
    if (!s.ok()) return "writing the files beside the pool: " + s.ToString();
  }
  Options open_options = options;
  open_options.create_if_missing = false;
  open_options.file_system = nullptr;  // the rebuilt files are plain files
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

uint64_t NumericProperty(DB* db, const char* name) {
  std::string value;
  return db->GetProperty(name, &value) ? std::stoull(value) : 0;
}

// The number after "<field> " in a property's text; 0 if absent.
uint64_t PropertyField(DB* db, const char* property, const std::string& field) {
  std::string value;
  if (!db->GetProperty(property, &value)) return 0;
  const size_t pos = value.find(field + " ");
  return pos == std::string::npos ? 0 : std::stoull(value.substr(pos + field.size() + 1));
}

// Waits (a minute at most) until no memtable waits for its flush, L0 is
// below its compaction trigger and no compaction waits for its syncs: the
// background work the writes so far started has run. Returns either way.
void WaitForBackgroundWork(DB* db, const Options& options) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
  while (std::chrono::steady_clock::now() < deadline) {
    if (PropertyField(db, "jigsaw.stats", "memtables") <= 1 &&
        NumericProperty(db, "jigsaw.num-blocks-at-level0") < static_cast<uint64_t>(options.level0_compaction_trigger) &&
        PropertyField(db, "jigsaw.sync-stats", "pending_compactions") == 0) {
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

// Checks the workload's settings the harness relies on; OK if it can run.
Status CheckWorkload(const PowerFailureWorkload& workload) {
  if (!workload.options.pmem_path.empty()) return Status::InvalidArgument("pmem_path", "must be empty");
  if (workload.batches_before_arming > workload.batches) {
    return Status::InvalidArgument("batches_before_arming", "exceeds batches");
  }
  if (workload.files != nullptr && workload.options.file_system == nullptr) {
    return Status::InvalidArgument("files", "must be options.file_system");
  }
  return Status::OK();
}

// The contents after each prefix of `batches`: element n is the state after the first n batches (n = 0..size).
std::vector<State> StatesAfterEachPrefix(const std::vector<Batch>& batches) {
  std::vector<State> states(1);
  for (const Batch& b : batches) {
    State next = states.back();
    for (const Op& op : b.ops) {
      if (!op.range_end.empty()) {
        next.erase(next.lower_bound(op.key), next.lower_bound(op.range_end));
      } else if (op.is_delete) {
        next.erase(op.key);
      } else {
        next[op.key] = op.value;
      }
    }
    states.push_back(std::move(next));
  }
  return states;
}

// Every key the batches write or delete, sorted, each once.
std::vector<std::string> DistinctKeys(const std::vector<Batch>& batches) {
  std::vector<std::string> keys;
  for (const Batch& b : batches) {
    for (const Op& op : b.ops) keys.push_back(op.key);
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

// Empties `dir`, creates the database in `db_dir` (inside it) and writes batches [0, before) with nothing tracked;
// the clean close at the end makes every one of them durable.
Status WriteUntrackedPrefix(const std::string& dir, const std::string& db_dir, const Options& options,
                            const std::vector<Batch>& batches, size_t before, std::atomic<uint64_t>* durable_floor) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError(dir, ec.message());
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, db_dir, &db);
  if (s.ok()) s = WriteBatches(db.get(), batches, 0, before, durable_floor);
  return s;
}

// The files beside the pool: name and contents of each.
using StaticFiles = std::vector<std::pair<std::string, std::string>>;

// Reads the regular files of `db_dir` but the pool and LOCK (the database's IDENTITY), as they are now: without a
// file crash model, every check rebuilds them so.
Status ReadStaticFiles(const std::string& db_dir, StaticFiles* static_files) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(db_dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || name == "pool" || name == "LOCK") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    static_files->emplace_back(name, std::string(std::istreambuf_iterator<char>(in), {}));
  }
  if (ec) return Status::IOError(db_dir, ec.message());
  return Status::OK();
}

// Starts tracking: the file journal (with a file crash model, its durability events made persist points) or else
// the static files, then the simulator on the pool, each point labelled with *durable_floor. On an error, what was
// started stays started.
Status StartTracking(PowerFailureSimulator& sim, const PowerFailureWorkload& workload, const std::string& db_dir,
           std::atomic<uint64_t>* durable_floor, StaticFiles* static_files) {
  FileCrashModel* const files = workload.files;
  ArmOptions arm;
  arm.label = [durable_floor] { return durable_floor->load(); };
  arm.track_dirty_lines = workload.early_eviction;
  if (files != nullptr) {
    // The clean close synced every table: the journal starts from them.
    Status s = files->StartJournal(db_dir, {"pool", "LOCK"});
    if (!s.ok()) return s;
    arm.file_events = [files] { return files->JournalEvents(); };
    files->SetDurabilityListener([&sim] { sim.AddExternalPoint(); });
  }
  // Without a file crash model, the directory's other files (the
  // database's IDENTITY) are taken as they are now, for every check.
  if (files == nullptr) {
    Status s = ReadStaticFiles(db_dir, static_files);
    if (!s.ok()) return s;
  }
  return sim.Arm(db_dir + "/pool", std::move(arm));
}

// Stops the tracking StartTracking started.
void StopTracking(PowerFailureSimulator& sim, FileCrashModel* files) {
  sim.Disarm();
  if (files != nullptr) {
    files->SetDurabilityListener(nullptr);
    files->StopJournal();
  }
}

// Records in `report` the database's flushes and compactions so far and its deepest level holding data.
void RecordShape(DB* db, PowerFailureReport* report) {
  report->flushes = NumericProperty(db, "jigsaw.flushes");
  report->compactions = NumericProperty(db, "jigsaw.compactions");
  for (int level = 1; level < 10; ++level) {
    const std::string property = "jigsaw.num-blocks-at-level" + std::to_string(level);
    std::string blocks;
    if (!db->GetProperty(property, &blocks)) break;
    if (std::stoull(blocks) > 0) report->deepest_level = level;
  }
}

// Reopens the database in `db_dir` and writes batches [before, size), settling after every workload.settle_every
// of them; records the database's shape in `report` and closes it cleanly. Run armed: the recovery, the writes and
// the close are all tracked.
Status WriteTrackedBatches(const std::string& db_dir, const Options& options, const PowerFailureWorkload& workload,
                           const std::vector<Batch>& batches, size_t before, std::atomic<uint64_t>* durable_floor,
                           PowerFailureReport* report) {
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, db_dir, &db);  // recovery is tracked too
  const size_t chunk = workload.settle_every > 0 ? static_cast<size_t>(workload.settle_every) : batches.size();
  for (size_t begin = before; s.ok() && begin < batches.size(); begin += chunk) {
    const size_t end = std::min(batches.size(), begin + chunk);
    s = WriteBatches(db.get(), batches, begin, end, durable_floor);
    if (s.ok() && end < batches.size()) WaitForBackgroundWork(db.get(), options);
  }
  if (db != nullptr) RecordShape(db.get(), report);
  return s;  // the clean close is tracked too
}

// Simulates power failures at the persist points the tracked run recorded and checks the database each leaves,
// counting the checks and their failures in the report.
class PersistPointChecker {
 public:
  PersistPointChecker(const std::string& dir, const PowerFailureWorkload& workload, const Options& options,
                      const std::vector<State>& states, const std::vector<std::string>& keys,
                      const StaticFiles& static_files, const PowerFailureSimulator& sim, PowerFailureReport* report)
      : dir_(dir),
        workload_(workload),
        options_(options),
        states_(states),
        keys_(keys),
        static_files_(static_files),
        sim_(sim),
        report_(report),
        points_(sim.persist_points()),
        rng_(workload.seed),
        cursor_(sim) {}

  // Checks every point, or every k-th when there are more than workload.max_checks, and the last one.
  void CheckPoints() {
    const size_t checks = workload_.max_checks;
    const size_t stride = checks == 0 ? 1 : std::max<size_t>(1, (points_ + checks - 1) / checks);
    for (size_t point = 0; point <= points_; point += stride) CheckPoint(point);
    if (points_ % stride != 0) CheckPoint(points_);
  }

 private:
  // The files beside the pool at `point`: strict (unsynced data lost) or,
  // with `random`, any outcome the file system allows.
  std::function<Status(const std::string&)> FilesAt(size_t point, bool random) {
    FileCrashModel* const files = workload_.files;
    if (files == nullptr) {
      return [this](const std::string& to_dir) {
        for (const auto& [name, contents] : static_files_) {
          std::ofstream out(to_dir + "/" + name, std::ios::binary | std::ios::trunc);
          out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
          if (!out.good()) return Status::IOError(to_dir + "/" + name, "cannot write");
        }
        return Status::OK();
      };
    }
    const uint64_t events = sim_.file_events_at(point);
    return [files, events, random, this](const std::string& to_dir) {
      return files->WriteCrashState(events, to_dir, random ? &rng_ : nullptr);
    };
  }

  // Checks one image of `point` (described by `what` in a failure), with the files beside it strict or random.
  void Check(const std::vector<char>& image, size_t point, bool random_files, const char* what) {
    ++report_->checks;
    std::string failure = CheckImage(dir_ + "/check", image, FilesAt(point, random_files), options_, states_, keys_,
                                     sim_.label_at(point));
    if (failure.empty()) return;
    ++report_->failed_checks;
    if (report_->failures.size() < 20) {
      report_->failures.push_back(std::string(what) + " at persist point " + std::to_string(point) + "/" +
                                  std::to_string(points_) + ": " + failure);
    }
  }

  // Checks the image a power failure just after `point` leaves, and the workload's variants of it.
  void CheckPoint(size_t point) {
    cursor_.AdvanceTo(point);
    Check(cursor_.image(), point, false, "power failure");
    report_->max_evictable = std::max(report_->max_evictable, sim_.evictable_at(point));
    if (workload_.reorder && point < points_ && sim_.lines_at(point + 1) > 0) {  // one line may be torn too
      ++report_->reorder_checks;
      Check(cursor_.ImageWithPartialNextPoint(&rng_), point, false, "power failure with reordered lines");
    }
    const bool evicted = workload_.early_eviction && sim_.evictable_at(point) > 0;
    FileCrashModel* const files = workload_.files;
    if (evicted || files != nullptr) {
      ++report_->eviction_checks;
      const char* what = !evicted                ? "power failure with random file outcomes"
                         : files != nullptr      ? "power failure with early eviction and random file outcomes"
                                                 : "power failure with early eviction";
      Check(evicted ? cursor_.ImageWithEarlyEviction(&rng_) : cursor_.image(), point, true, what);
    }
  }

  const std::string& dir_;
  const PowerFailureWorkload& workload_;
  const Options& options_;
  const std::vector<State>& states_;
  const std::vector<std::string>& keys_;
  const StaticFiles& static_files_;
  const PowerFailureSimulator& sim_;
  PowerFailureReport* const report_;
  const size_t points_;
  std::mt19937_64 rng_;
  PowerFailureSimulator::ImageCursor cursor_;
};

}  // namespace

Status RunPowerFailureHarness(const std::string& dir, const PowerFailureWorkload& workload,
                              PowerFailureReport* report) {
  *report = PowerFailureReport();
  Status s = CheckWorkload(workload);
  if (!s.ok()) return s;
  const std::vector<Batch> batches = MakeBatches(workload);
  const std::vector<State> states = StatesAfterEachPrefix(batches);
  const std::vector<std::string> keys = DistinctKeys(batches);

  const std::string db_dir = dir + "/db";
  Options options = workload.options;
  options.create_if_missing = true;
  std::atomic<uint64_t> durable_floor{0};
  const auto before = static_cast<size_t>(workload.batches_before_arming);
  s = WriteUntrackedPrefix(dir, db_dir, options, batches, before, &durable_floor);
  if (!s.ok()) return s;
  durable_floor = before;

  PowerFailureSimulator& sim = PowerFailureSimulator::Instance();
  StaticFiles static_files;
  s = StartTracking(sim, workload, db_dir, &durable_floor, &static_files);
  if (!s.ok()) return s;
  s = WriteTrackedBatches(db_dir, options, workload, batches, before, &durable_floor, report);
  StopTracking(sim, workload.files);
  if (!s.ok()) return s;

  report->persist_points = sim.persist_points();
  report->external_points = sim.external_points();
  PersistPointChecker(dir, workload, options, states, keys, static_files, sim, report).CheckPoints();
  std::error_code ec;
  std::filesystem::remove_all(dir + "/check", ec);
  return Status::OK();
}

}  // namespace jigsaw::emulation
