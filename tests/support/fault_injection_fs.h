// A FileSystem for crash tests, in the spirit of LevelDB's fault-injection
// Env: it forwards to the POSIX file system and remembers, per file, how many
// bytes were synced and whether its directory entry was synced.
// DropUnsyncedData() then does what a power failure does to a page cache:
// files lose their unsynced tails, files whose creation was never made
// durable disappear. SetActive(false) makes every later sync fail, freezing
// the durable state at that moment (a crash the process does not notice).
// Optionally, appends fail with NoSpace after a byte budget (a full disk).
//
// For the power-failure harness (emulation/power_failure_harness.h) it is
// also a FileCrashModel: it journals the file events of one directory, with
// every byte appended, so that the files a power failure leaves can be
// rebuilt as of any moment of a workload, without stopping it.
#ifndef JIGSAW_TESTS_FAULT_INJECTION_FS_H_
#define JIGSAW_TESTS_FAULT_INJECTION_FS_H_

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "emulation/power_failure_harness.h"
#include "jigsaw/file_system.h"

namespace jigsaw::test {

class FaultInjectionFileSystem final : public FileSystem, public emulation::FileCrashModel {
 public:
  FaultInjectionFileSystem() : base_(FileSystem::Default()) {}

  void SetActive(bool active) {
    std::lock_guard<std::mutex> lock(mu_);
    active_ = active;
  }
  // While set, file syncs fail with NoSpace (a device that filled up between
  // write and writeback).
  void SetSyncNoSpace(bool no_space) {
    std::lock_guard<std::mutex> lock(mu_);
    sync_no_space_ = no_space;
  }
  // While set, file syncs succeed but make nothing durable (a device that
  // drops cache flushes): for tests that the crash model bites.
  void SetSyncsLie(bool lie) {
    std::lock_guard<std::mutex> lock(mu_);
    syncs_lie_ = lie;
  }
  // While cleared, SyncFileSystem is NotSupported (a file system that can
  // only sync file by file).
  void SetWholeSyncSupported(bool supported) {
    std::lock_guard<std::mutex> lock(mu_);
    whole_sync_supported_ = supported;
  }
  // Appends beyond `bytes` more fail with NoSpace (-1: unlimited).
  void SetSpaceLeft(int64_t bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    space_left_ = bytes;
  }
  // Truncates every tracked file to its synced size and removes files whose
  // directory entry was never synced.
  void DropUnsyncedData() {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [path, state] : files_) {
      if (!state.entry_synced) {
        (void)base_->RemoveFile(path);
      } else if (truncate(path.c_str(), static_cast<off_t>(state.synced)) != 0) {
        // already removed by the engine
      }
    }
    files_.clear();
  }

  Status NewWritableFile(const std::string& path, std::unique_ptr<WritableFile>* file) override {
    std::unique_ptr<WritableFile> base;
    Status s = base_->NewWritableFile(path, &base);
    if (!s.ok()) return s;
    std::lock_guard<std::mutex> lock(mu_);
    files_[path] = FileState();
    int journal_file = -1;
    std::string name;
    if (JournalName(path, &name)) {
      journal_file = static_cast<int>(journal_files_.size());
      journal_files_.push_back(JournalFile{name, {}});
      Record(Event{EventKind::kCreate, static_cast<uint32_t>(journal_file), 0, {}});
      journal_names_[name] = static_cast<uint32_t>(journal_file);
    }
    *file = std::make_unique<File>(this, path, std::move(base), journal_file, journal_generation_);
    return Status::OK();
  }
  Status NewRandomAccessFile(const std::string& path, std::unique_ptr<RandomAccessFile>* file) override {
    return base_->NewRandomAccessFile(path, file);
  }
  Status RemoveFile(const std::string& path) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      files_.erase(path);
    }
    Status s = base_->RemoveFile(path);
    if (s.ok()) {
      std::unique_lock<std::mutex> lock(mu_);
      std::string name;
      auto it = JournalName(path, &name) ? journal_names_.find(name) : journal_names_.end();
      if (it != journal_names_.end()) {
        Record(Event{EventKind::kRemove, it->second, 0, {}});
        journal_names_.erase(it);
        NotifyDurability(&lock);
      }
    }
    return s;
  }
  // A rename is modelled as durable at once (the engine syncs the directory
  // right after each one): the new name survives DropUnsyncedData even if
  // the file's creation was never synced -- the old file under that name is
  // gone, so a model that dropped the new one would leave neither, which no
  // real file system does (a crash between the rename and the directory
  // sync leaves the old file or the new one). After the simulated crash
  // (SetActive(false)) a rename fails and changes nothing: it would
  // otherwise replace a durable file with one the crash must drop.
  Status RenameFile(const std::string& from, const std::string& to) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (!active_) return Status::IOError(to, "file system inactive (simulated crash)");
    Status s = base_->RenameFile(from, to);
    auto it = files_.find(from);
    if (s.ok() && it != files_.end()) {
      FileState state = it->second;
      state.entry_synced = true;
      files_.erase(it);
      files_[to] = state;
    }
    std::string from_name, to_name;
    if (s.ok() && JournalName(from, &from_name) && JournalName(to, &to_name)) {
      auto j = journal_names_.find(from_name);
      if (j != journal_names_.end()) {
        const uint32_t id = j->second;
        journal_names_.erase(j);
        journal_names_[to_name] = id;
        Record(Event{EventKind::kRename, id, 0, to_name});
        NotifyDurability(&lock);
      }
    }
    return s;
  }
  Status GetChildren(const std::string& dir, std::vector<std::string>* names) override {
    return base_->GetChildren(dir, names);
  }
  Status CreateDirIfMissing(const std::string& dir) override { return base_->CreateDirIfMissing(dir); }
  Status SyncDir(const std::string& dir) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (!active_) return Status::IOError(dir, "file system inactive (simulated crash)");
    for (auto& [path, state] : files_) {
      if (path.rfind(dir + "/", 0) == 0) state.entry_synced = true;
    }
    ++syncs_;
    if (journaling_ && dir == journal_dir_) {
      Record(Event{EventKind::kSyncDir, 0, 0, {}});
      NotifyDurability(&lock);
    }
    return Status::OK();
  }
  Status SyncFile(const std::string& path) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (!active_) return Status::IOError(path, "file system inactive (simulated crash)");
    ++syncs_;
    std::string name;
    auto it = JournalName(path, &name) && !syncs_lie_ ? journal_names_.find(name) : journal_names_.end();
    if (it != journal_names_.end()) {
      Record(Event{EventKind::kSync, it->second, 0, {}});
      NotifyDurability(&lock);
    }
    return Status::OK();
  }
  // Like a sync of every file written so far and of every directory.
  Status SyncFileSystem(const std::string& dir) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (!whole_sync_supported_) return FileSystem::SyncFileSystem(dir);
    if (!active_) return Status::IOError(dir, "file system inactive (simulated crash)");
    if (sync_no_space_) return Status::NoSpace(dir, "no space left on device (injected at sync)");
    ++syncs_;
    if (syncs_lie_) return Status::OK();
    for (auto& [path, state] : files_) {
      state.synced = state.size;
      state.entry_synced = true;
    }
    if (journaling_) {
      for (const auto& [name, id] : journal_names_) Record(Event{EventKind::kSync, id, 0, {}});
      Record(Event{EventKind::kSyncDir, 0, 0, {}});
      NotifyDurability(&lock);
    }
    return Status::OK();
  }
  Status GetFileSize(const std::string& path, uint64_t* size) override { return base_->GetFileSize(path, size); }
  bool FileExists(const std::string& path) override { return base_->FileExists(path); }

  int syncs() {
    std::lock_guard<std::mutex> lock(mu_);
    return syncs_;
  }

  // --- emulation::FileCrashModel ------------------------------------------
  // Only files directly in the journaled directory are journaled. The model:
  // a sync makes the data appended so far durable, a directory sync the
  // entries (creations, removals) made so far; a rename is durable at once.

  Status StartJournal(const std::string& dir, const std::vector<std::string>& untracked) override {
    std::vector<std::pair<std::string, std::string>> existing;  // name, contents
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (!entry.is_regular_file() || std::find(untracked.begin(), untracked.end(), name) != untracked.end()) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      existing.emplace_back(name, std::string(std::istreambuf_iterator<char>(in), {}));
      if (!in.good() && !in.eof()) return Status::IOError(entry.path().string(), "cannot read");
    }
    if (ec) return Status::IOError(dir, ec.message());
    std::lock_guard<std::mutex> lock(mu_);
    journal_files_.clear();
    journal_names_.clear();
    journal_.clear();
    journal_events_ = 0;
    journal_dir_ = dir;
    journaling_ = true;
    ++journal_generation_;
    for (auto& [name, contents] : existing) {
      const auto id = static_cast<uint32_t>(journal_files_.size());
      const uint64_t size = contents.size();
      journal_files_.push_back(JournalFile{name, std::move(contents)});
      journal_names_[name] = id;
      Record(Event{EventKind::kCreate, id, 0, {}});
      Record(Event{EventKind::kAppend, id, size, {}});
      Record(Event{EventKind::kSync, id, 0, {}});
    }
    Record(Event{EventKind::kSyncDir, 0, 0, {}});
    return Status::OK();
  }
  void StopJournal() override {
    std::lock_guard<std::mutex> lock(mu_);
    journaling_ = false;
  }
  uint64_t JournalEvents() override { return journal_events_.load(std::memory_order_acquire); }
  void SetDurabilityListener(std::function<void()> listener) override {
    std::lock_guard<std::mutex> lock(mu_);
    listener_ = std::move(listener);
  }
  Status WriteCrashState(uint64_t events, const std::string& to_dir, std::mt19937_64* rng) override {
    std::lock_guard<std::mutex> lock(mu_);
    // Replays the journal's first `events` events.
    struct Replayed {
      bool linked = false;           // has a name in the directory
      bool entry_durable = false;    // that name survives a crash for sure
      bool removal_pending = false;  // unlinked, but the removal is not durable yet
      uint64_t written = 0, synced = 0;
      std::string name;
    };
    std::vector<Replayed> files(journal_files_.size());
    std::map<std::string, uint32_t> names;
    auto unlink = [&](uint32_t id, bool durably) {
      files[id].linked = false;
      files[id].removal_pending = !durably;
      names.erase(files[id].name);
    };
    for (size_t i = 0; i < std::min<uint64_t>(events, journal_.size()); ++i) {
      const Event& e = journal_[i];
      Replayed& f = files[e.file];
      switch (e.kind) {
        case EventKind::kCreate: {
          auto old = names.find(journal_files_[e.file].name);
          if (old != names.end()) unlink(old->second, /*durably=*/false);  // truncated: a new incarnation
          f.linked = true;
          f.name = journal_files_[e.file].name;
          names[f.name] = e.file;
          break;
        }
        case EventKind::kAppend:
          f.written = e.size;
          break;
        case EventKind::kSync:
          f.synced = f.written;
          break;
        case EventKind::kSyncDir:
          for (Replayed& g : files) {
            if (g.linked) g.entry_durable = true;
            g.removal_pending = false;
          }
          break;
        case EventKind::kRemove:
          unlink(e.file, /*durably=*/false);
          break;
        case EventKind::kRename: {
          auto old = names.find(e.name);
          if (old != names.end()) unlink(old->second, /*durably=*/true);
          names.erase(f.name);
          f.name = e.name;
          f.entry_durable = true;
          names[f.name] = e.file;
          break;
        }
      }
    }
    std::map<std::string, std::string> out;  // name -> contents
    auto contents = [&](uint32_t id) {
      const Replayed& f = files[id];
      const std::string& data = journal_files_[id].data;
      uint64_t keep = f.synced;
      if (rng != nullptr && f.written > f.synced) {
        // Unsynced data: none, all, or a prefix of it reached the disk; or
        // the file size did and some of its pages hold zeros.
        const uint64_t unsynced = f.written - f.synced;
        switch ((*rng)() % 4) {
          case 0:
            break;
          case 1:
            keep = f.written;
            break;
          case 2:
            keep = f.synced + (*rng)() % (unsynced + 1);
            break;
          default: {
            std::string result = data.substr(0, f.written);
            const uint64_t first_page = f.synced / 4096, last_page = (f.written - 1) / 4096;
            const uint64_t page = first_page + (*rng)() % (last_page - first_page + 1);
            const uint64_t begin = std::max(f.synced, page * 4096);
            const uint64_t end = std::min(f.written, (page + 1) * 4096);
            std::fill(result.begin() + static_cast<std::ptrdiff_t>(begin),
                      result.begin() + static_cast<std::ptrdiff_t>(end), '\0');
            return result;
          }
        }
      }
      return data.substr(0, keep);
    };
    for (uint32_t id = 0; id < files.size(); ++id) {
      const Replayed& f = files[id];
      if (f.linked && (f.entry_durable || (rng != nullptr && (*rng)() % 2 == 0))) out[f.name] = contents(id);
    }
    if (rng != nullptr) {
      // Removals not yet durable may be undone, where the name is free.
      for (uint32_t id = 0; id < files.size(); ++id) {
        const Replayed& f = files[id];
        if (f.removal_pending && out.count(f.name) == 0 && names.count(f.name) == 0 && (*rng)() % 2 == 0) {
          out[f.name] = contents(id);
        }
      }
    }
    for (const auto& [name, data] : out) {
      std::ofstream file(to_dir + "/" + name, std::ios::binary | std::ios::trunc);
      file.write(data.data(), static_cast<std::streamsize>(data.size()));
      if (!file.good()) return Status::IOError(to_dir + "/" + name, "cannot write");
    }
    return Status::OK();
  }
  // Files (incarnations) and bytes the journal holds.
  size_t journal_files() {
    std::lock_guard<std::mutex> lock(mu_);
    return journal_files_.size();
  }
  uint64_t journal_bytes() {
    std::lock_guard<std::mutex> lock(mu_);
    uint64_t bytes = 0;
    for (const JournalFile& f : journal_files_) bytes += f.data.size();
    return bytes;
  }

 private:
  struct FileState {
    uint64_t size = 0;
    uint64_t synced = 0;
    bool entry_synced = false;
  };
  // One incarnation of a file of the journaled directory: every byte ever
  // appended to it.
  struct JournalFile {
    std::string name;
    std::string data;
  };
  enum class EventKind { kCreate, kAppend, kSync, kSyncDir, kRemove, kRename };
  struct Event {
    EventKind kind;
    uint32_t file;     // journal_files_ index (not for kSyncDir)
    uint64_t size;     // kAppend: bytes written to the file so far
    std::string name;  // kRename: the new name
  };

  class File final : public WritableFile {
   public:
    File(FaultInjectionFileSystem* fs, std::string path, std::unique_ptr<WritableFile> base, int journal_file,
         uint64_t journal_generation)
        : fs_(fs),
          path_(std::move(path)),
          base_(std::move(base)),
          journal_file_(journal_file),
          journal_generation_(journal_generation) {}
    Status Append(const Slice& data) override {
      {
        std::lock_guard<std::mutex> lock(fs_->mu_);
        if (fs_->space_left_ >= 0) {
          if (static_cast<int64_t>(data.size()) > fs_->space_left_) {
            return Status::NoSpace(path_, "no space left on device (injected)");
          }
          fs_->space_left_ -= static_cast<int64_t>(data.size());
        }
      }
      Status s = base_->Append(data);
      if (s.ok()) {
        std::lock_guard<std::mutex> lock(fs_->mu_);
        auto it = fs_->files_.find(path_);
        if (it != fs_->files_.end()) it->second.size += data.size();
        if (Journaled()) {
          std::string& journaled = fs_->journal_files_[static_cast<size_t>(journal_file_)].data;
          journaled.append(data.data(), data.size());
          fs_->Record(Event{EventKind::kAppend, static_cast<uint32_t>(journal_file_), journaled.size(), {}});
        }
      }
      return s;
    }
    Status Sync() override {
      std::unique_lock<std::mutex> lock(fs_->mu_);
      if (!fs_->active_) return Status::IOError(path_, "file system inactive (simulated crash)");
      if (fs_->sync_no_space_) return Status::NoSpace(path_, "no space left on device (injected at sync)");
      ++fs_->syncs_;
      if (fs_->syncs_lie_) return Status::OK();
      auto it = fs_->files_.find(path_);
      if (it != fs_->files_.end()) it->second.synced = it->second.size;
      if (Journaled()) {
        fs_->Record(Event{EventKind::kSync, static_cast<uint32_t>(journal_file_), 0, {}});
        fs_->NotifyDurability(&lock);
      }
      return Status::OK();  // the base file's data is in the page cache; only the bookkeeping matters
    }
    Status Close() override { return base_->Close(); }
    uint64_t Size() const override { return base_->Size(); }

   private:
    // Requires fs_->mu_.
    bool Journaled() const {
      return journal_file_ >= 0 && fs_->journaling_ && fs_->journal_generation_ == journal_generation_;
    }

    FaultInjectionFileSystem* const fs_;
    const std::string path_;
    std::unique_ptr<WritableFile> base_;
    const int journal_file_;  // journal_files_ index, or -1
    const uint64_t journal_generation_;
  };

  // True (with the name) for a file directly in the journaled directory,
  // while journaling. Requires mu_.
  bool JournalName(const std::string& path, std::string* name) const {
    if (!journaling_ || path.size() <= journal_dir_.size() + 1 || path.rfind(journal_dir_ + "/", 0) != 0) {
      return false;
    }
    *name = path.substr(journal_dir_.size() + 1);
    return name->find('/') == std::string::npos;
  }
  // Requires mu_.
  void Record(Event event) {
    journal_.push_back(std::move(event));
    journal_events_.store(journal_.size(), std::memory_order_release);
  }
  // Calls the durability listener without mu_ (it may call JournalEvents).
  void NotifyDurability(std::unique_lock<std::mutex>* lock) {
    std::function<void()> listener = listener_;
    lock->unlock();
    if (listener) listener();
  }

  FileSystem* const base_;
  std::mutex mu_;
  std::map<std::string, FileState> files_;
  bool active_ = true;
  bool sync_no_space_ = false;
  bool syncs_lie_ = false;
  bool whole_sync_supported_ = true;
  int64_t space_left_ = -1;
  int syncs_ = 0;
  // The journal (FileCrashModel).
  bool journaling_ = false;
  uint64_t journal_generation_ = 0;  // StartJournal calls so far
  std::string journal_dir_;
  std::vector<JournalFile> journal_files_;
  std::map<std::string, uint32_t> journal_names_;  // name -> its current incarnation
  std::vector<Event> journal_;
  std::atomic<uint64_t> journal_events_{0};
  std::function<void()> listener_;
};

}  // namespace jigsaw::test

#endif  // JIGSAW_TESTS_FAULT_INJECTION_FS_H_
