// jigsawdb._jigsawdb: the Python binding's native module (pybind11). The
// Python package (jigsawdb/__init__.py) re-exports it; its API follows
// plyvel's, so a LevelDB user from Python recognises it
// (bindings/python/README.md).
//
// Every call into the engine runs with the GIL released. A database's
// handle is shared by the DB object and by every iterator, snapshot and
// write batch made from it; close() waits for calls in flight (a shared
// lock each, the close an exclusive one), closes what was made from it and
// makes every later call raise jigsawdb.Error.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <stdexcept>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "jigsaw/db.h"
#include "jigsaw/iterator.h"
#include "jigsaw/version.h"
#include "jigsaw/write_batch.h"

namespace py = pybind11;

namespace jigsaw::python {

namespace {

// The exception classes, made in the module init: jigsawdb.Error and one
// subclass per Status code.
struct Errors {
  py::object base, not_found, corruption, not_supported, invalid_argument, io_error, no_space;
};
Errors* errors = nullptr;

[[noreturn]] void Raise(const Status& s) {
  py::object type = s.IsCorruption()        ? errors->corruption
                    : s.IsNotSupported()    ? errors->not_supported
                    : s.IsInvalidArgument() ? errors->invalid_argument
                    : s.IsIOError()         ? errors->io_error
                    : s.IsNoSpace()         ? errors->no_space
                    : s.IsNotFound()        ? errors->not_found
                                            : errors->base;
  PyErr_SetString(type.ptr(), s.ToString().c_str());
  throw py::error_already_set();
}

void Check(const Status& s) {
  if (!s.ok()) Raise(s);
}

// A call on a closed database or a released snapshot: raised as
// jigsawdb.Error by the module's translator, once the GIL is held again.
class UseError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

void SetUseError(const UseError& e) { PyErr_SetString(errors->base.ptr(), e.what()); }

Slice AsSlice(const py::bytes& b) {
  char* data = nullptr;
  Py_ssize_t size = 0;
  if (PyBytes_AsStringAndSize(b.ptr(), &data, &size) != 0) throw py::error_already_set();
  return Slice(data, static_cast<size_t>(size));
}

// The smallest key after every key with `prefix`; "" if there is none (the
// prefix is all 0xff bytes).
std::string PrefixSuccessor(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xff) prefix.pop_back();
  if (!prefix.empty()) prefix.back() = static_cast<char>(static_cast<unsigned char>(prefix.back()) + 1);
  return prefix;
}

class Closable {
 public:
  virtual ~Closable() = default;
  // Frees the engine objects; called with the handle's lock held
  // exclusively, before the DB goes.
  virtual void CloseWithDb() = 0;
};

// What the DB object and everything made from it share.
struct Handle {
  std::unique_ptr<DB> db;  // null once closed
  std::shared_mutex mutex;
  std::vector<std::weak_ptr<Closable>> children;
  std::mutex children_mutex;

  void Adopt(const std::shared_ptr<Closable>& child) {
    std::lock_guard<std::mutex> lock(children_mutex);
    std::erase_if(children, [](const std::weak_ptr<Closable>& c) { return c.expired(); });
    children.push_back(child);
  }
};

// A shared lock on an open handle for one call, taken with the GIL
// released (close takes the exclusive lock with the GIL released too, so
// neither waits for the other's GIL). UseError if the handle is closed.
class Use {
 public:
  explicit Use(Handle& h) : lock_(h.mutex) {
    if (h.db == nullptr) throw UseError("the database is closed");
    db_ = h.db.get();
  }
  DB* operator->() const { return db_; }
  DB* get() const { return db_; }

 private:
  std::shared_lock<std::shared_mutex> lock_;
  DB* db_ = nullptr;
};

// A snapshot is released once: by release(), by its database's close, or
// when the Python object goes -- whichever comes first takes it.
class PySnapshot final : public Closable, public std::enable_shared_from_this<PySnapshot> {
 public:
  PySnapshot(std::shared_ptr<Handle> handle, const Snapshot* snapshot)
      : handle_(std::move(handle)), sequence_(snapshot->sequence()), snapshot_(snapshot) {}
  ~PySnapshot() override { Release(); }
  void CloseWithDb() override {
    if (const Snapshot* s = snapshot_.exchange(nullptr)) handle_->db->ReleaseSnapshot(s);
  }
  // Exclusive: no read that uses the snapshot (each holds the shared lock
  // from before it takes the snapshot until it is done) is in flight.
  void Release() {
    if (snapshot_.load() == nullptr) return;
    py::gil_scoped_release nogil;
    std::unique_lock<std::shared_mutex> lock(handle_->mutex);
    const Snapshot* s = snapshot_.exchange(nullptr);
    if (s != nullptr && handle_->db != nullptr) handle_->db->ReleaseSnapshot(s);
  }
  // The snapshot for a read that holds the handle's shared lock (Use);
  // UseError if released.
  const Snapshot* get() const {
    const Snapshot* s = snapshot_.load();
    if (s == nullptr) throw UseError("the snapshot is released (or its database closed)");
    return s;
  }
  uint64_t sequence() const { return sequence_; }
  const std::shared_ptr<Handle>& handle() const { return handle_; }

 private:
  std::shared_ptr<Handle> handle_;
  const uint64_t sequence_;
  std::atomic<const Snapshot*> snapshot_;
};

py::object Get(const std::shared_ptr<Handle>& handle, const py::bytes& key, const py::object& default_value,
               bool verify_checksums, const PySnapshot* snapshot) {
  ReadOptions options;
  options.verify_checksums = verify_checksums;
  const Slice k = AsSlice(key);
  // One value buffer per thread, its capacity kept between reads (up to
  // 1 MiB).
  thread_local std::string value;
  Status s;
  {
    py::gil_scoped_release nogil;
    Use db(*handle);
    if (snapshot != nullptr) options.snapshot = snapshot->get();
    s = db->Get(options, k, &value);
  }
  if (s.IsNotFound()) return default_value;
  Check(s);
  py::bytes result(value);
  if (value.capacity() > (1u << 20)) value = std::string();
  return result;
}

struct RangeArgs {
  std::optional<std::string> start, stop;
  bool include_start = true, include_stop = false;
};

// A Python iterator over a range of the database: (key, value) pairs,
// keys or values, forwards or backwards.
class PyIterator final : public Closable, public std::enable_shared_from_this<PyIterator> {
 public:
  PyIterator(std::shared_ptr<Handle> handle, RangeArgs range, bool reverse, bool include_key, bool include_value,
             std::shared_ptr<PySnapshot> snapshot)
      : handle_(std::move(handle)),
        range_(std::move(range)),
        reverse_(reverse),
        include_key_(include_key),
        include_value_(include_value),
        snapshot_(std::move(snapshot)) {}

  void Open() {
    ReadOptions options;
    py::gil_scoped_release nogil;
    Use db(*handle_);
    if (snapshot_ != nullptr) options.snapshot = snapshot_->get();
    // The engine's bounds: [lower, upper); inclusive stops and exclusive
    // starts are applied here.
    if (range_.start.has_value()) {
      lower_ = *range_.start;
      options.iterate_lower_bound = &lower_slice_;
      lower_slice_ = Slice(lower_);
    }
    if (range_.stop.has_value() && !range_.include_stop) {
      upper_ = *range_.stop;
      upper_slice_ = Slice(upper_);
      options.iterate_upper_bound = &upper_slice_;
    }
    it_ = db->NewIterator(options);
    PositionAtEdge(reverse_);
  }

  // The next item is the first in the iteration's direction at or past
  // `target` (forwards: the first key >= target; backwards: the last key
  // <= target), within the range.
  void Seek(const py::bytes& target_bytes) {
    const std::string target = AsSlice(target_bytes).ToString();
    WithIterator([&] {
      if (!reverse_) {
        // Below the range the engine's lower bound seeks to the start, and
        // Next steps over an excluded start.
        it_->Seek(target);
        return;
      }
      if (range_.stop.has_value() && target.compare(*range_.stop) >= 0) return PositionAtEdge(true);
      SeekAtOrBefore(target);
    });
  }

  // The next item is the range's first (seek_to_start) or last
  // (seek_to_stop) in key order; iterating from there goes on in the
  // iterator's direction.
  void SeekToEdge(bool last) {
    WithIterator([&] { PositionAtEdge(last); });
  }

  // Reads the database as a new iterator with the same arguments would now
  // (a snapshot's iterator goes on reading at its snapshot), and starts
  // again at the range's edge.
  void Refresh() {
    Status status;
    WithIterator([&] {
      status = it_->Refresh();
      if (status.ok()) PositionAtEdge(reverse_);
    });
    Check(status);
  }

  void CloseWithDb() override { it_.reset(); }

  py::object Next() {
    std::string key, value;
    bool done = false;
    Status status;
    {
      py::gil_scoped_release nogil;
      std::shared_lock<std::shared_mutex> lock(handle_->mutex);
      if (handle_->db == nullptr || it_ == nullptr) {
        done = true;
      } else {
        for (;;) {
          if (!it_->Valid()) {
            status = it_->status();
            done = true;
            break;
          }
          const Slice k = it_->key();
          if (range_.stop.has_value() && range_.include_stop && !reverse_ && k.compare(*range_.stop) > 0) {
            done = true;
            break;
          }
          if (range_.start.has_value() && !range_.include_start && k.compare(*range_.start) == 0) {
            Step();
            continue;
          }
          key.assign(k.data(), k.size());
          if (include_value_) value.assign(it_->value().data(), it_->value().size());
          Step();
          break;
        }
      }
    }
    Check(status);
    if (done) throw py::stop_iteration();
    if (include_key_ && include_value_) return py::make_tuple(py::bytes(key), py::bytes(value));
    if (include_key_) return py::bytes(key);
    if (include_value_) return py::bytes(value);
    return py::none();
  }

  void Close() {
    py::gil_scoped_release nogil;
    std::shared_lock<std::shared_mutex> lock(handle_->mutex);
    it_.reset();
  }

 private:
  // Runs `move` on the engine iterator with the GIL released; UseError if
  // the database or the iterator is closed.
  template <typename Move>
  void WithIterator(Move move) {
    py::gil_scoped_release nogil;
    std::shared_lock<std::shared_mutex> lock(handle_->mutex);
    if (handle_->db == nullptr) throw UseError("the database is closed");
    if (it_ == nullptr) throw UseError("the iterator is closed");
    move();
  }

  // Positions at the range's last key (last) or first key.
  void PositionAtEdge(bool last) {
    if (!last) {
      it_->SeekToFirst();
      // An exclusive start: the engine bound is closed; step over it (in
      // key order, whatever the iterator's direction).
      if (range_.start.has_value() && !range_.include_start && it_->Valid() &&
          it_->key().compare(*range_.start) == 0) {
        it_->Next();
      }
      return;
    }
    // An inclusive stop: the engine bound is open; start at the stop.
    if (range_.stop.has_value() && range_.include_stop) {
      SeekAtOrBefore(*range_.stop);
    } else {
      it_->SeekToLast();
    }
  }

  // Positions at the last key <= target.
  void SeekAtOrBefore(const Slice& target) {
    it_->Seek(target);
    if (!it_->Valid()) {
      if (it_->status().ok()) it_->SeekToLast();
    } else if (it_->key().compare(target) > 0) {
      it_->Prev();
    }
  }

  void Step() {
    if (reverse_) {
      it_->Prev();
    } else {
      it_->Next();
    }
  }

  std::shared_ptr<Handle> handle_;
  RangeArgs range_;
  const bool reverse_, include_key_, include_value_;
  std::shared_ptr<PySnapshot> snapshot_;  // kept while the iterator reads at it
  std::string lower_, upper_;
  Slice lower_slice_, upper_slice_;
  std::unique_ptr<Iterator> it_;
};

RangeArgs MakeRange(const std::optional<py::bytes>& start, const std::optional<py::bytes>& stop, bool include_start,
                    bool include_stop, const std::optional<py::bytes>& prefix) {
  RangeArgs range;
  range.include_start = include_start;
  range.include_stop = include_stop;
  if (prefix.has_value()) {
    if (start.has_value() || stop.has_value()) {
      throw py::type_error("iterator: 'prefix' cannot be combined with 'start' or 'stop'");
    }
    std::string p = AsSlice(*prefix).ToString();
    range.start = p;
    range.include_start = true;
    std::string end = PrefixSuccessor(p);
    if (!end.empty()) range.stop = end;
    range.include_stop = false;
    return range;
  }
  if (start.has_value()) range.start = AsSlice(*start).ToString();
  if (stop.has_value()) range.stop = AsSlice(*stop).ToString();
  return range;
}

std::shared_ptr<PyIterator> NewIterator(const std::shared_ptr<Handle>& handle, bool reverse,
                                        const std::optional<py::bytes>& start, const std::optional<py::bytes>& stop,
                                        bool include_start, bool include_stop, const std::optional<py::bytes>& prefix,
                                        bool include_key, bool include_value, std::shared_ptr<PySnapshot> snapshot) {
  auto it = std::make_shared<PyIterator>(handle, MakeRange(start, stop, include_start, include_stop, prefix), reverse,
                                         include_key, include_value, std::move(snapshot));
  it->Open();
  handle->Adopt(it);
  return it;
}

class PyWriteBatch {
 public:
  PyWriteBatch(std::shared_ptr<Handle> handle, bool sync, bool transaction)
      : handle_(std::move(handle)), sync_(sync), transaction_(transaction) {}
  void Put(const py::bytes& key, const py::bytes& value) { batch_.Put(AsSlice(key), AsSlice(value)); }
  void Delete(const py::bytes& key) { batch_.Delete(AsSlice(key)); }
  void DeleteRange(const py::bytes& start, const py::bytes& stop) { batch_.DeleteRange(AsSlice(start), AsSlice(stop)); }
  void Clear() { batch_.Clear(); }
  size_t Count() const { return batch_.Count(); }
  size_t ApproximateSize() const { return batch_.ApproximateSize(); }
  void Write() {
    WriteOptions options;
    options.sync = sync_;
    Status s;
    {
      py::gil_scoped_release nogil;
      Use db(*handle_);
      s = db->Write(options, &batch_);
    }
    Check(s);
    batch_.Clear();
  }
  PyWriteBatch& Enter() { return *this; }
  // Writes the batch when the block ends; after an exception only without
  // `transaction` (plyvel's rule). Never swallows the exception.
  bool Exit(const py::object& type, const py::object&, const py::object&) {
    if (type.is_none() || !transaction_) Write();
    return false;
  }

 private:
  std::shared_ptr<Handle> handle_;
  const bool sync_, transaction_;
  WriteBatch batch_;
};

StorageMode ParseMode(const std::string& mode) {
  if (mode == "pmem") return StorageMode::kPmem;
  if (mode == "hybrid") return StorageMode::kHybrid;
  if (mode == "disk") return StorageMode::kDisk;
  throw py::value_error("mode must be 'pmem', 'hybrid' or 'disk', not '" + mode + "'");
}

// plyvel's compression argument: None for none, or a codec's name.
Compression ParseCompression(const std::optional<std::string>& compression) {
  if (!compression.has_value() || *compression == "none") return Compression::kNone;
  if (*compression == "lz4") return Compression::kLZ4;
  if (*compression == "zstd") return Compression::kZstd;
  throw py::value_error("compression must be None, 'lz4' or 'zstd', not '" + *compression + "'");
}

class PyDB {
 public:
  PyDB(const std::string& path, bool create_if_missing, bool error_if_exists, const std::string& mode,
       const std::optional<std::string>& pmem_path, std::optional<uint64_t> pool_size,
       std::optional<uint64_t> memtable_size, std::optional<uint64_t> pmem_budget, bool paranoid_checks,
       bool read_only, const std::optional<std::string>& compression)
      : handle_(std::make_shared<Handle>()) {
    Options options;
    options.create_if_missing = create_if_missing;
    options.error_if_exists = error_if_exists;
    options.storage_mode = ParseMode(mode);
    if (pmem_path.has_value()) options.pmem_path = *pmem_path;
    if (pool_size.has_value()) options.pmem_pool_size = *pool_size;
    if (memtable_size.has_value()) options.memtable_size = *memtable_size;
    if (pmem_budget.has_value()) options.pmem_budget = *pmem_budget;
    options.paranoid_checks = paranoid_checks;
    options.compression = ParseCompression(compression);
    Status s;
    {
      py::gil_scoped_release nogil;
      s = read_only ? DB::OpenForReadOnly(options, path, &handle_->db) : DB::Open(options, path, &handle_->db);
    }
    Check(s);
    name_ = path;
  }

  void Close() {
    py::gil_scoped_release nogil;
    std::unique_lock<std::shared_mutex> lock(handle_->mutex);
    if (handle_->db == nullptr) return;
    std::vector<std::shared_ptr<Closable>> children;
    {
      std::lock_guard<std::mutex> guard(handle_->children_mutex);
      for (auto& weak : handle_->children) {
        if (auto child = weak.lock()) children.push_back(std::move(child));
      }
      handle_->children.clear();
    }
    for (auto& child : children) child->CloseWithDb();
    handle_->db.reset();
  }
  bool closed() const {
    std::shared_lock<std::shared_mutex> lock(handle_->mutex);
    return handle_->db == nullptr;
  }
  const std::string& name() const { return name_; }

  void Put(const py::bytes& key, const py::bytes& value, bool sync) {
    const Slice k = AsSlice(key), v = AsSlice(value);
    Write(sync, [&](DB* db, const WriteOptions& o) { return db->Put(o, k, v); });
  }
  void Delete(const py::bytes& key, bool sync) {
    const Slice k = AsSlice(key);
    Write(sync, [&](DB* db, const WriteOptions& o) { return db->Delete(o, k); });
  }
  void DeleteRange(const py::bytes& start, const py::bytes& stop, bool sync) {
    const Slice b = AsSlice(start), e = AsSlice(stop);
    Write(sync, [&](DB* db, const WriteOptions& o) { return db->DeleteRange(o, b, e); });
  }
  py::object GetValue(const py::bytes& key, const py::object& default_value, bool verify_checksums) {
    return Get(handle_, key, default_value, verify_checksums, nullptr);
  }
  std::shared_ptr<PyWriteBatch> NewWriteBatch(bool sync, bool transaction) {
    {
      py::gil_scoped_release nogil;
      Use db(*handle_);  // raises if closed
    }
    return std::make_shared<PyWriteBatch>(handle_, sync, transaction);
  }
  std::shared_ptr<PySnapshot> NewSnapshot() {
    const Snapshot* snapshot;
    {
      py::gil_scoped_release nogil;
      Use db(*handle_);
      snapshot = db->GetSnapshot();
    }
    auto s = std::make_shared<PySnapshot>(handle_, snapshot);
    handle_->Adopt(s);
    return s;
  }
  const std::shared_ptr<Handle>& handle() const { return handle_; }

  // Runs write(db, options) with the GIL released; raises its Status.
  template <typename F>
  void Write(bool sync, F&& write) {
    WriteOptions options;
    options.sync = sync;
    Status s;
    {
      py::gil_scoped_release nogil;
      Use db(*handle_);
      s = write(db.get(), options);
    }
    Check(s);
  }

  py::object GetProperty(const std::string& name) {
    std::string value;
    bool known;
    {
      py::gil_scoped_release nogil;
      Use db(*handle_);
      known = db->GetProperty(name, &value);
    }
    if (!known) return py::none();
    return py::str(value);
  }
  std::vector<uint64_t> ApproximateSizes(const std::vector<std::pair<py::bytes, py::bytes>>& ranges) {
    std::vector<std::string> keys;
    for (const auto& [start, stop] : ranges) {
      keys.push_back(AsSlice(start).ToString());
      keys.push_back(AsSlice(stop).ToString());
    }
    std::vector<Range> engine_ranges;
    for (size_t i = 0; i < ranges.size(); ++i) engine_ranges.emplace_back(keys[2 * i], keys[2 * i + 1]);
    std::vector<uint64_t> sizes(ranges.size());
    py::gil_scoped_release nogil;
    Use db(*handle_);
    db->GetApproximateSizes(engine_ranges.data(), static_cast<int>(engine_ranges.size()), sizes.data());
    return sizes;
  }
  void CompactRange(const std::optional<py::bytes>& start, const std::optional<py::bytes>& stop) {
    std::optional<std::string> b, e;
    if (start.has_value()) b = AsSlice(*start).ToString();
    if (stop.has_value()) e = AsSlice(*stop).ToString();
    Status s;
    {
      py::gil_scoped_release nogil;
      Use db(*handle_);
      const Slice bs = b.has_value() ? Slice(*b) : Slice(), es = e.has_value() ? Slice(*e) : Slice();
      s = db->CompactRange(b.has_value() ? &bs : nullptr, e.has_value() ? &es : nullptr);
    }
    Check(s);
  }
  uint64_t LatestSequenceNumber() {
    py::gil_scoped_release nogil;
    Use db(*handle_);
    return db->GetLatestSequenceNumber();
  }
  void Checkpoint(const std::string& dir) {
    Status s;
    {
      py::gil_scoped_release nogil;
      Use db(*handle_);
      s = db->CreateCheckpoint(dir, nullptr);
    }
    Check(s);
  }

 private:
  std::shared_ptr<Handle> handle_;
  std::string name_;
};

// DB.get: its common calls, get(key) and get(key, default) with a bytes
// key, as a CPython fast-call method calling Get -- pybind11's argument
// dispatch was about a third of what the binding adds to a read. Every
// other call (keywords, another key type) goes to the pybind11 function
// (full_get), which checks and reports it as every other method does.
py::object* full_get = nullptr;  // lives as long as the interpreter

PyObject* FastGet(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  PyDB* pydb = nullptr;
  if (kwnames == nullptr && (nargs == 1 || nargs == 2) && PyBytes_CheckExact(args[0])) {
    py::detail::make_caster<PyDB> caster;
    if (caster.load(self, /*convert=*/false)) pydb = static_cast<PyDB*>(caster.value);
  }
  if (pydb == nullptr) {
    std::vector<PyObject*> with_self{self};
    const Py_ssize_t n = nargs + (kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0);
    with_self.insert(with_self.end(), args, args + n);
    return PyObject_Vectorcall(full_get->ptr(), with_self.data(), static_cast<size_t>(nargs) + 1, kwnames);
  }
  try {
    return Get(pydb->handle(), py::reinterpret_borrow<py::bytes>(args[0]),
               py::reinterpret_borrow<py::object>(nargs == 2 ? args[1] : Py_None), false, nullptr)
        .release()
        .ptr();
  } catch (py::error_already_set& e) {
    e.restore();
  } catch (const UseError& e) {
    SetUseError(e);
  }
  return nullptr;
}

// The baseline of bench.py: the C++ API's Get of each key, in order, on
// the same open database -- one ReadOptions and one value string reused,
// as a C++ program calls it -- timed in C++ with the GIL released. The
// slices point into the caller's bytes objects, so both loops read the
// same key bytes. Returns (keys found, seconds).
py::tuple CppGetLoop(const PyDB& pydb, const std::vector<py::bytes>& keys) {
  std::vector<Slice> slices;
  slices.reserve(keys.size());
  for (const py::bytes& k : keys) slices.push_back(AsSlice(k));
  size_t found = 0;
  double seconds = 0;
  Status s;
  {
    py::gil_scoped_release nogil;
    Use db(*pydb.handle());
    const ReadOptions options;
    std::string value;
    const auto start = std::chrono::steady_clock::now();
    for (const Slice& k : slices) {
      s = db->Get(options, k, &value);
      if (s.ok()) {
        found++;
      } else if (!s.IsNotFound()) {
        break;
      }
    }
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  if (!s.IsNotFound()) Check(s);
  return py::make_tuple(found, seconds);
}

}  // namespace

PYBIND11_MODULE(_jigsawdb, m) {
  m.doc() = "JigsawDB, an embedded key-value store for persistent memory (native module)";
  errors = new Errors;  // lives as long as the interpreter
  errors->base = py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(
      "jigsawdb.Error", "An error of the engine; `str(e)` is its Status.", PyExc_Exception, nullptr));
  auto sub = [&](const char* name, const char* doc) {
    return py::reinterpret_steal<py::object>(
        PyErr_NewExceptionWithDoc((std::string("jigsawdb.") + name).c_str(), doc, errors->base.ptr(), nullptr));
  };
  errors->not_found = sub("NotFoundError", "The database (or what was asked for) does not exist.");
  errors->corruption = sub("CorruptionError", "Stored data is damaged.");
  errors->not_supported = sub("NotSupportedError", "The call is not supported here (a read-only open's write).");
  errors->invalid_argument = sub("InvalidArgumentError", "A bad argument or option.");
  errors->io_error = sub("IOError", "The file system failed (or the database is open elsewhere).");
  errors->no_space = sub("NoSpaceError", "The pool or the device is full.");
  m.attr("Error") = errors->base;
  m.attr("NotFoundError") = errors->not_found;
  m.attr("CorruptionError") = errors->corruption;
  m.attr("NotSupportedError") = errors->not_supported;
  m.attr("InvalidArgumentError") = errors->invalid_argument;
  m.attr("IOError") = errors->io_error;
  m.attr("NoSpaceError") = errors->no_space;
  m.attr("__engine_version__") = JIGSAW_VERSION_STRING;
  m.def("_cpp_get_loop", &CppGetLoop, py::arg("db"), py::arg("keys"),
        "bench.py's baseline: DB::Get of each key on db, as C++ calls it; (found, seconds).");
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const UseError& e) {
      SetUseError(e);
    }
  });

  py::class_<PySnapshot, std::shared_ptr<PySnapshot>>(m, "Snapshot")
      .def(
          "get",
          [](const PySnapshot& s, const py::bytes& key, const py::object& default_value, bool verify_checksums) {
            return Get(s.handle(), key, default_value, verify_checksums, &s);
          },
          py::arg("key"), py::arg("default") = py::none(), py::arg("verify_checksums") = false)
      .def(
          "iterator",
          [](const std::shared_ptr<PySnapshot>& s, bool reverse, const std::optional<py::bytes>& start,
             const std::optional<py::bytes>& stop, bool include_start, bool include_stop,
             const std::optional<py::bytes>& prefix, bool include_key, bool include_value) {
            return NewIterator(s->handle(), reverse, start, stop, include_start, include_stop, prefix, include_key,
                               include_value, s);
          },
          py::kw_only(), py::arg("reverse") = false, py::arg("start") = py::none(), py::arg("stop") = py::none(),
          py::arg("include_start") = true, py::arg("include_stop") = false, py::arg("prefix") = py::none(),
          py::arg("include_key") = true, py::arg("include_value") = true)
      .def_property_readonly("sequence", &PySnapshot::sequence)
      .def("release", &PySnapshot::Release)
      .def("close", &PySnapshot::Release)
      .def("__enter__", [](const std::shared_ptr<PySnapshot>& s) { return s; })
      .def("__exit__", [](PySnapshot& s, const py::object&, const py::object&, const py::object&) {
        s.Release();
        return false;
      });

  py::class_<PyIterator, std::shared_ptr<PyIterator>>(m, "Iterator")
      .def("__iter__", [](const std::shared_ptr<PyIterator>& it) { return it; })
      .def("__next__", &PyIterator::Next)
      .def("seek", &PyIterator::Seek, py::arg("target"))
      .def("seek_to_start", [](PyIterator& it) { it.SeekToEdge(false); })
      .def("seek_to_stop", [](PyIterator& it) { it.SeekToEdge(true); })
      .def("refresh", &PyIterator::Refresh)
      .def("close", &PyIterator::Close)
      .def("__enter__", [](const std::shared_ptr<PyIterator>& it) { return it; })
      .def("__exit__", [](PyIterator& it, const py::object&, const py::object&, const py::object&) {
        it.Close();
        return false;
      });

  py::class_<PyWriteBatch, std::shared_ptr<PyWriteBatch>>(m, "WriteBatch")
      .def("put", &PyWriteBatch::Put, py::arg("key"), py::arg("value"))
      .def("delete", &PyWriteBatch::Delete, py::arg("key"))
      .def("delete_range", &PyWriteBatch::DeleteRange, py::arg("start"), py::arg("stop"))
      .def("clear", &PyWriteBatch::Clear)
      .def("write", &PyWriteBatch::Write)
      .def("__len__", &PyWriteBatch::Count)
      .def_property_readonly("approximate_size", &PyWriteBatch::ApproximateSize)
      .def("__enter__", &PyWriteBatch::Enter, py::return_value_policy::reference)
      .def("__exit__", &PyWriteBatch::Exit);

  py::class_<PyDB> db_class(m, "DB", "An open JigsawDB database (jigsawdb/__init__.py has an example).");
  db_class
      .def(py::init<const std::string&, bool, bool, const std::string&, const std::optional<std::string>&,
                    std::optional<uint64_t>, std::optional<uint64_t>, std::optional<uint64_t>, bool, bool,
                    const std::optional<std::string>&>(),
           py::arg("path"), py::kw_only(), py::arg("create_if_missing") = false, py::arg("error_if_exists") = false,
           py::arg("mode") = "pmem", py::arg("pmem_path") = py::none(), py::arg("pool_size") = py::none(),
           py::arg("memtable_size") = py::none(), py::arg("pmem_budget") = py::none(),
           py::arg("paranoid_checks") = true, py::arg("read_only") = false, py::arg("compression") = py::none())
      .def("close", &PyDB::Close,
           "Closes the database (after calls in flight), ending its iterators and releasing its snapshots.")
      .def_property_readonly("closed", &PyDB::closed)
      .def_property_readonly("name", &PyDB::name)
      .def("put", &PyDB::Put, py::arg("key"), py::arg("value"), py::kw_only(), py::arg("sync") = false,
           "Writes key -> value; with sync=True it is durable when the call returns.")
      .def("delete", &PyDB::Delete, py::arg("key"), py::kw_only(), py::arg("sync") = false,
           "Deletes key (a missing key is no error).")
      .def("delete_range", &PyDB::DeleteRange, py::arg("start"), py::arg("stop"), py::kw_only(),
           py::arg("sync") = false, "Deletes every key in [start, stop) with one range tombstone.")
      .def("write_batch", &PyDB::NewWriteBatch, py::kw_only(), py::arg("sync") = false,
           py::arg("transaction") = false,
           "A batch written atomically by write() or at the end of a with block (unless the block raised and "
           "transaction=True).")
      .def("snapshot", &PyDB::NewSnapshot, "A consistent view of the database as it is now; release() it when done.")
      .def(
          "iterator",
          [](PyDB& db, bool reverse, const std::optional<py::bytes>& start, const std::optional<py::bytes>& stop,
             bool include_start, bool include_stop, const std::optional<py::bytes>& prefix, bool include_key,
             bool include_value) {
            return NewIterator(db.handle(), reverse, start, stop, include_start, include_stop, prefix, include_key,
                               include_value, nullptr);
          },
          py::kw_only(), py::arg("reverse") = false, py::arg("start") = py::none(), py::arg("stop") = py::none(),
          py::arg("include_start") = true, py::arg("include_stop") = false, py::arg("prefix") = py::none(),
          py::arg("include_key") = true, py::arg("include_value") = true)
      .def("__iter__",
           [](PyDB& db) {
             return NewIterator(db.handle(), false, std::nullopt, std::nullopt, true, false, std::nullopt, true, true,
                                nullptr);
           })
      .def("get_property", &PyDB::GetProperty, py::arg("name"),
           "The text of an engine property (include/jigsaw/db.h), or None if unknown.")
      .def("approximate_sizes", &PyDB::ApproximateSizes, py::arg("ranges"),
           "For each (start, stop), about how many bytes the tables hold for its keys.")
      .def("compact_range", &PyDB::CompactRange, py::kw_only(), py::arg("start") = py::none(),
           py::arg("stop") = py::none(), "Compacts the keys in [start, stop] (all by default) into the last level.")
      .def_property_readonly("latest_sequence_number", &PyDB::LatestSequenceNumber)
      .def("checkpoint", &PyDB::Checkpoint, py::arg("directory"),
           "Writes a consistent disk-mode copy into a new directory while writers go on.")
      .def("__enter__", [](PyDB& db) -> PyDB& { return db; }, py::return_value_policy::reference)
      .def("__exit__", [](PyDB& db, const py::object&, const py::object&, const py::object&) {
        db.Close();
        return false;
      });
  full_get = new py::object(py::cpp_function(&PyDB::GetValue, py::name("get"), py::arg("self"), py::arg("key"),
                                             py::arg("default") = py::none(), py::kw_only(),
                                             py::arg("verify_checksums") = false));
  static PyMethodDef get_method = {
      "get", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&FastGet)), METH_FASTCALL | METH_KEYWORDS,
      "get($self, key, default=None, *, verify_checksums=False)\n--\n\nThe value of key, or default if it has none."};
  db_class.attr("get") = py::reinterpret_steal<py::object>(
      PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(db_class.ptr()), &get_method));
}

}  // namespace jigsaw::python
