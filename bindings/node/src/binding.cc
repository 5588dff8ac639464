// jigsaw-level's native half: the engine's C++ API on N-API
// (node-addon-api). index.js wraps it as an abstract-level database.
//
// Threads: every call that may read or write the storage at length runs on
// libuv's thread pool (Napi::AsyncWorker) and settles a promise on the
// JavaScript thread; getSync, seek, getProperty, taking a snapshot and
// making an iterator (also clear's) run on the calling thread, and so does
// closing a database its finalizer or Node's environment teardown closes.
// Arguments are copied before work is queued.
//
// Lifetimes: a Database's engine handle lives in a shared DbState that its
// iterators and snapshots also hold. Closing the state (close(), the
// Database's finalizer, or Node's environment teardown for a database left
// open) first ends every iterator and releases every snapshot, then closes
// the engine. A worker keeps the JavaScript object it runs for alive, and
// index.js waits for a database's pending calls before it closes it, so no
// worker outlives the engine it uses.
#include <napi.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "jigsaw/db.h"
#include "jigsaw/iterator.h"
#include "jigsaw/options.h"
#include "jigsaw/slice.h"
#include "jigsaw/status.h"
#include "jigsaw/version.h"
#include "jigsaw/write_batch.h"

namespace {

using jigsaw::DB;
using jigsaw::Slice;
using jigsaw::Status;

// ---- Errors ----

// The abstract-level error code of a Status (README.md, "Errors").
const char* ErrorCode(const Status& s) {
  if (s.IsCorruption()) return "LEVEL_CORRUPTION";
  if (s.IsNotSupported()) return "LEVEL_NOT_SUPPORTED";
  if (s.IsInvalidArgument()) return "LEVEL_INVALID_ARGUMENT";
  if (s.IsNoSpace()) return "LEVEL_NO_SPACE";
  if (s.IsNotFound()) return "LEVEL_NOT_FOUND";
  if (s.ToString().find("in use by") != std::string::npos) return "LEVEL_LOCKED";
  return "LEVEL_IO_ERROR";
}

Napi::Error CodeError(Napi::Env env, const std::string& message, const char* code) {
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("code", Napi::String::New(env, code));
  return error;
}

Napi::Error StatusError(Napi::Env env, const Status& s) { return CodeError(env, s.ToString(), ErrorCode(s)); }

// ---- Bytes in and out ----

// What a read returns: abstract-level's keyEncoding / valueEncoding format
// ('utf8': a string; 'buffer' and 'view': a Buffer, which is a Uint8Array).
enum class Encoding { kUtf8, kBytes };

Encoding ToEncoding(const Napi::Value& v) {
  return v.IsString() && v.As<Napi::String>().Utf8Value() == "utf8" ? Encoding::kUtf8 : Encoding::kBytes;
}

// A Uint8Array's (a Buffer's too) bytes in place, honouring its offset and
// length, valid during the call; nullopt for any other value. One N-API
// call, where IsTypedArray and As<Uint8Array> make three: a read's key
// costs one.
std::optional<std::span<char>> Uint8ArrayBytes(const Napi::Value& v) {
  napi_typedarray_type type;
  size_t length = 0;
  void* data = nullptr;
  if (napi_get_typedarray_info(v.Env(), v, &type, &length, &data, nullptr, nullptr) != napi_ok ||
      type != napi_uint8_array) {
    return std::nullopt;  // no exception is pending
  }
  return std::span<char>(static_cast<char*>(data), length);
}

// The bytes of a key or value: a Uint8Array's in place, a string's UTF-8
// bytes in *scratch. A TypeError for anything else.
Slice BytesOf(const Napi::Value& v, std::string* scratch) {
  if (const auto bytes = Uint8ArrayBytes(v)) return Slice(bytes->data(), bytes->size());
  if (!v.IsString()) throw Napi::TypeError::New(v.Env(), "a key or value must be a string, a Buffer or a Uint8Array");
  *scratch = v.As<Napi::String>().Utf8Value();
  return Slice(*scratch);
}

// A copy of those bytes, for work that outlives the call.
std::string ToBytes(const Napi::Value& v) {
  std::string scratch;
  const Slice bytes = BytesOf(v, &scratch);
  return bytes.data() == scratch.data() ? std::move(scratch) : bytes.ToString();
}

Napi::Value FromBytes(Napi::Env env, const Slice& bytes, Encoding encoding) {
  if (encoding == Encoding::kUtf8) return Napi::String::New(env, bytes.data(), bytes.size());
  return Napi::Buffer<char>::Copy(env, bytes.data(), bytes.size());
}

bool Flag(const Napi::Object& options, const char* name, bool fallback) {
  Napi::Value v = options.Get(name);
  return v.IsBoolean() ? v.As<Napi::Boolean>().Value() : fallback;
}

std::optional<uint64_t> Size(const Napi::Object& options, const char* name) {
  Napi::Value v = options.Get(name);
  if (v.IsUndefined() || v.IsNull()) return std::nullopt;
  const double d = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : -1;
  if (!(d >= 0 && d <= 9007199254740991.0)) {
    throw Napi::TypeError::New(options.Env(), std::string(name) + " must be a non-negative integer");
  }
  return static_cast<uint64_t>(v.As<Napi::Number>().Int64Value());
}

// ---- Promises from the thread pool ----

// Runs work() on the thread pool, then settles a promise on the JavaScript
// thread: rejected with the Status when it is not OK, else resolved with
// done(env). Keeps `owner` alive meanwhile.
template <typename Work, typename Done>
class PromiseWorker final : public Napi::AsyncWorker {
 public:
  PromiseWorker(const Napi::Object& owner, Work work, Done done)
      : Napi::AsyncWorker(owner.Env(), "jigsaw-level"),
        owner_(Napi::Persistent(owner)),
        work_(std::move(work)),
        done_(std::move(done)) {
    NAPI_THROW_IF_FAILED_VOID(owner.Env(), napi_create_promise(owner.Env(), &deferred_, &promise_));
  }

  // The promise, in the handle scope the worker was made in.
  Napi::Value Promise() const { return Napi::Value(Env(), promise_); }

  void Execute() override { status_ = work_(); }
  // Settling never throws: while a worker thread's environment is torn
  // down JavaScript cannot run, and the promise is dropped with it.
  void OnOK() override {
    Napi::Env env = Env();
    try {
      if (!status_.ok()) {
        Settle(false, StatusError(env, status_).Value());
      } else {
        Settle(true, done_(env));
      }
    } catch (const Napi::Error& e) {
      Settle(false, e.Value());
    } catch (const std::exception& e) {
      Settle(false, Napi::Error::New(env, e.what()).Value());
    } catch (...) {
    }
  }
  void OnError(const Napi::Error& e) override { Settle(false, e.Value()); }

 private:
  void Settle(bool resolve, napi_value value) {
    (void)(resolve ? napi_resolve_deferred(Env(), deferred_, value) : napi_reject_deferred(Env(), deferred_, value));
  }

  Napi::ObjectReference owner_;
  napi_deferred deferred_ = nullptr;
  napi_value promise_ = nullptr;
  Work work_;
  Done done_;
  Status status_;
};

template <typename Work, typename Done>
Napi::Value RunAsync(const Napi::Object& owner, Work work, Done done) {
  auto* worker = new PromiseWorker<Work, Done>(owner, std::move(work), std::move(done));
  Napi::Value promise = worker->Promise();
  worker->Queue();
  return promise;
}

// ---- The engine handle and what hangs on it ----

class IteratorWrap;
class SnapshotWrap;

// The classes this addon defines and getSync's slab, per Node environment
// (the main thread and each worker thread that loads the addon has its
// own).
struct AddonData {
  Napi::FunctionReference snapshot;
  Napi::FunctionReference iterator;
  // The Uint8Array getSync copies values into (setSlab), referenced so its
  // bytes stay where slab_bytes says; empty until set.
  Napi::Reference<Napi::Uint8Array> slab;
  std::span<char> slab_bytes;
};

AddonData& Classes(Napi::Env env) { return *env.GetInstanceData<AddonData>(); }

// setSlab(slab): the Uint8Array getSync copies values into from now on
// (index.js sets a new one when the last is full).
void SetSlab(const Napi::CallbackInfo& info) {
  const auto bytes = Uint8ArrayBytes(info[0]);
  if (!bytes) throw Napi::TypeError::New(info.Env(), "setSlab takes a Uint8Array");
  AddonData& data = Classes(info.Env());
  data.slab = Napi::Persistent(info[0].As<Napi::Uint8Array>());
  data.slab_bytes = *bytes;
}

// One open engine and its live iterators and snapshots (JavaScript thread
// only, but for the engine calls workers make between open and close).
struct DbState {
  std::unique_ptr<DB> db;
  std::set<IteratorWrap*> iterators;
  std::set<SnapshotWrap*> snapshots;
  bool cleanup_hook = false;

  void EndReaders();  // ends the iterators and releases the snapshots
  void Close() {      // then closes the engine
    EndReaders();
    db.reset();
  }
};

class SnapshotWrap final : public Napi::ObjectWrap<SnapshotWrap> {
 public:
  static Napi::FunctionReference Define(Napi::Env env) {
    return Napi::Persistent(DefineClass(env, "Snapshot", {InstanceMethod("close", &SnapshotWrap::Close)}));
  }
  explicit SnapshotWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<SnapshotWrap>(info) {}
  ~SnapshotWrap() override { Release(); }

  void Bind(std::shared_ptr<DbState> state) {
    state_ = std::move(state);
    snapshot_ = state_->db->GetSnapshot();
    state_->snapshots.insert(this);
  }
  // Null once released; reads through a released snapshot are refused by
  // index.js (abstract-level's reference counting) before they get here.
  const jigsaw::Snapshot* get() const { return snapshot_; }
  const DbState* state() const { return state_.get(); }
  void Release() {
    if (snapshot_ == nullptr) return;
    state_->db->ReleaseSnapshot(snapshot_);
    snapshot_ = nullptr;
    state_->snapshots.erase(this);
  }

 private:
  Napi::Value Close(const Napi::CallbackInfo& info) {
    Release();
    return info.Env().Undefined();
  }

  std::shared_ptr<DbState> state_;
  const jigsaw::Snapshot* snapshot_ = nullptr;
};

// The snapshot `v` is (a native Snapshot of the database `state`), or null
// (none, or released). A snapshot of another database is a TypeError.
const jigsaw::Snapshot* SnapshotOf(const Napi::Value& v, const DbState* state) {
  if (!v.IsObject()) return nullptr;
  Napi::Object o = v.As<Napi::Object>();
  if (!o.InstanceOf(Classes(v.Env()).snapshot.Value()) || SnapshotWrap::Unwrap(o)->state() != state) {
    throw Napi::TypeError::New(v.Env(), "snapshot must come from this database");
  }
  // Released: only an iterator is made with it, whose reads index.js
  // (abstract-level) refuses.
  return SnapshotWrap::Unwrap(o)->get();
}

// A key range: lower and upper bounds, each inclusive or not (gte takes
// precedence over gt, lte over lt).
struct KeyRange {
  std::optional<std::string> lower, upper;
  bool lower_inclusive = true, upper_inclusive = true;

  static KeyRange From(const Napi::Object& options) {
    KeyRange r;
    if (options.Has("gte")) {
      r.lower = ToBytes(options.Get("gte"));
    } else if (options.Has("gt")) {
      r.lower = ToBytes(options.Get("gt"));
      r.lower_inclusive = false;
    }
    if (options.Has("lte")) {
      r.upper = ToBytes(options.Get("lte"));
    } else if (options.Has("lt")) {
      r.upper = ToBytes(options.Get("lt"));
      r.upper_inclusive = false;
    }
    return r;
  }
  bool AboveLower(const Slice& key) const {
    if (!lower) return true;
    const int c = key.compare(*lower);
    return lower_inclusive ? c >= 0 : c > 0;
  }
  bool BelowUpper(const Slice& key) const {
    if (!upper) return true;
    const int c = key.compare(*upper);
    return upper_inclusive ? c <= 0 : c < 0;
  }
  bool Contains(const Slice& key) const { return AboveLower(key) && BelowUpper(key); }
};

// A cursor over a key range in one direction, counting toward a limit:
// the engine iterator plus the range rules abstract-level gives. Positioned
// lazily: the first read starts at the range's edge, a seek anywhere.
class RangeCursor {
 public:
  RangeCursor(std::unique_ptr<jigsaw::Iterator> it, KeyRange range, bool reverse, int64_t limit)
      : it_(std::move(it)), range_(std::move(range)), reverse_(reverse), limit_(limit) {}

  // The entry to emit next, or false at the end (of the range, the limit
  // or the data; status() tells an error).
  bool Valid() {
    if (!positioned_) Start();
    return !out_of_range_seek_ && it_->Valid() && range_.Contains(it_->key()) && (limit_ < 0 || count_ < limit_);
  }
  Slice key() const { return it_->key(); }
  Slice value() const { return it_->value(); }
  void Advance() {
    ++count_;
    if (reverse_) it_->Prev(); else it_->Next();
  }
  // Moves to the first entry at or after target (at or before it in
  // reverse); a target outside the range ends the cursor.
  void Seek(const Slice& target) {
    positioned_ = true;
    if (!range_.Contains(target)) {
      out_of_range_seek_ = true;
      return;
    }
    out_of_range_seek_ = false;
    it_->Seek(target);
    if (reverse_) {
      if (!it_->Valid() && it_->status().ok()) it_->SeekToLast();
      else if (it_->Valid() && it_->key().compare(target) > 0) it_->Prev();
    }
  }
  Status status() const { return it_->status(); }

 private:
  void Start() {
    positioned_ = true;
    out_of_range_seek_ = false;
    if (!reverse_) {
      if (range_.lower) {
        it_->Seek(*range_.lower);
        if (it_->Valid() && !range_.AboveLower(it_->key())) it_->Next();
      } else {
        it_->SeekToFirst();
      }
    } else if (range_.upper) {
      it_->Seek(*range_.upper);
      if (!it_->Valid() && it_->status().ok()) it_->SeekToLast();
      else if (it_->Valid() && !range_.BelowUpper(it_->key())) it_->Prev();
    } else {
      it_->SeekToLast();
    }
  }

  std::unique_ptr<jigsaw::Iterator> it_;
  KeyRange range_;
  bool reverse_;
  int64_t limit_;
  int64_t count_ = 0;
  bool positioned_ = false;
  bool out_of_range_seek_ = false;
};

jigsaw::ReadOptions ReadOptionsFrom(const Napi::Object& options, const DbState* state) {
  jigsaw::ReadOptions ro;
  ro.snapshot = SnapshotOf(options.Get("snapshot"), state);
  ro.verify_checksums = Flag(options, "verifyChecksums", false);
  return ro;
}

// A cursor over the range, direction and limit an iterator's or clear's
// options give, reading the database (or options.snapshot) as of now.
std::unique_ptr<RangeCursor> NewCursor(const DbState& state, const Napi::Object& options) {
  const Napi::Value limit = options.Get("limit");
  return std::make_unique<RangeCursor>(state.db->NewIterator(ReadOptionsFrom(options, &state)),
                                       KeyRange::From(options), Flag(options, "reverse", false),
                                       limit.IsNumber() ? limit.As<Napi::Number>().Int64Value() : -1);
}

class IteratorWrap final : public Napi::ObjectWrap<IteratorWrap> {
 public:
  static Napi::FunctionReference Define(Napi::Env env) {
    return Napi::Persistent(DefineClass(env, "Iterator",
                                        {InstanceMethod("nextv", &IteratorWrap::Nextv),
                                         InstanceMethod("seek", &IteratorWrap::Seek),
                                         InstanceMethod("close", &IteratorWrap::Close)}));
  }
  explicit IteratorWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<IteratorWrap>(info) {}
  ~IteratorWrap() override { End(); }

  // Takes the engine iterator (and with it the snapshot it reads) now.
  void Bind(const Napi::Object& database, std::shared_ptr<DbState> state, const Napi::Object& options) {
    cursor_ = NewCursor(*state, options);
    keys_ = Flag(options, "keys", true);
    values_ = Flag(options, "values", true);
    key_encoding_ = ToEncoding(options.Get("keyEncoding"));
    value_encoding_ = ToEncoding(options.Get("valueEncoding"));
    state_ = std::move(state);
    database_ = Napi::Persistent(database);
    state_->iterators.insert(this);
  }
  // Ends the engine iterator (before its database closes).
  void End() {
    if (cursor_ == nullptr) return;
    cursor_.reset();
    state_->iterators.erase(this);
    database_.Reset();
  }

 private:
  struct Batch {
    std::vector<std::string> keys, values;
  };

  // nextv(size): a promise of up to `size` entries as a flat array
  // [key, value, key, value, ...] (an undefined where keys or values are
  // not asked for); an empty array at the end.
  Napi::Value Nextv(const Napi::CallbackInfo& info) {
    if (cursor_ == nullptr) throw CodeError(info.Env(), "the iterator is closed", "LEVEL_ITERATOR_NOT_OPEN");
    const int64_t size = std::max<int64_t>(1, info[0].As<Napi::Number>().Int64Value());
    auto batch = std::make_shared<Batch>();
    RangeCursor* cursor = cursor_.get();
    const bool keys = keys_, values = values_;
    const Encoding ke = key_encoding_, ve = value_encoding_;
    return RunAsync(
        Value(),
        [=]() {
          size_t bytes = 0;
          // At most `size` entries and about 64 KiB of them per call.
          while (static_cast<int64_t>(batch->keys.size()) < size && bytes < (64 << 10) && cursor->Valid()) {
            batch->keys.emplace_back(keys ? cursor->key().ToString() : std::string());
            batch->values.emplace_back(values ? cursor->value().ToString() : std::string());
            bytes += batch->keys.back().size() + batch->values.back().size();
            cursor->Advance();
          }
          return cursor->status();
        },
        [=](Napi::Env env) -> Napi::Value {
          Napi::Array out = Napi::Array::New(env, batch->keys.size() * 2);
          for (size_t i = 0; i < batch->keys.size(); i++) {
            out.Set(2 * i, keys ? FromBytes(env, batch->keys[i], ke) : env.Undefined());
            out.Set(2 * i + 1, values ? FromBytes(env, batch->values[i], ve) : env.Undefined());
          }
          return out;
        });
  }
  Napi::Value Seek(const Napi::CallbackInfo& info) {
    std::string scratch;
    if (cursor_ != nullptr) cursor_->Seek(BytesOf(info[0], &scratch));
    return info.Env().Undefined();
  }
  Napi::Value Close(const Napi::CallbackInfo& info) {
    End();
    return info.Env().Undefined();
  }

  std::shared_ptr<DbState> state_;
  Napi::ObjectReference database_;  // keeps the Database alive
  std::unique_ptr<RangeCursor> cursor_;
  bool keys_ = true, values_ = true;
  Encoding key_encoding_ = Encoding::kBytes, value_encoding_ = Encoding::kBytes;
};

void DbState::EndReaders() {
  while (!iterators.empty()) (*iterators.begin())->End();
  while (!snapshots.empty()) (*snapshots.begin())->Release();
}

jigsaw::StorageMode ParseMode(Napi::Env env, const Napi::Value& v) {
  const std::string mode = v.IsString() ? v.As<Napi::String>().Utf8Value() : "pmem";
  if (mode == "pmem") return jigsaw::StorageMode::kPmem;
  if (mode == "hybrid") return jigsaw::StorageMode::kHybrid;
  if (mode == "disk") return jigsaw::StorageMode::kDisk;
  throw Napi::TypeError::New(env, "mode must be 'pmem', 'hybrid' or 'disk', not '" + mode + "'");
}

// classic-level's compression (a boolean: true is LZ4), or a codec's name.
jigsaw::Compression ParseCompression(Napi::Env env, const Napi::Value& v) {
  if (v.IsUndefined() || v.IsNull()) return jigsaw::Compression::kNone;
  if (v.IsBoolean()) return v.As<Napi::Boolean>().Value() ? jigsaw::Compression::kLZ4 : jigsaw::Compression::kNone;
  const std::string name = v.IsString() ? v.As<Napi::String>().Utf8Value() : "";
  if (name == "none") return jigsaw::Compression::kNone;
  if (name == "lz4") return jigsaw::Compression::kLZ4;
  if (name == "zstd") return jigsaw::Compression::kZstd;
  throw Napi::TypeError::New(env, "compression must be a boolean, 'none', 'lz4' or 'zstd'");
}

jigsaw::Options OpenOptionsFrom(const Napi::Object& o) {
  jigsaw::Options options;
  options.create_if_missing = Flag(o, "createIfMissing", true);
  options.error_if_exists = Flag(o, "errorIfExists", false);
  options.paranoid_checks = Flag(o, "paranoidChecks", true);
  options.storage_mode = ParseMode(o.Env(), o.Get("mode"));
  Napi::Value pmem_path = o.Get("pmemPath");
  if (pmem_path.IsString()) options.pmem_path = pmem_path.As<Napi::String>().Utf8Value();
  if (auto v = Size(o, "poolSize")) options.pmem_pool_size = *v;
  if (auto v = Size(o, "pmemBudget")) options.pmem_budget = *v;
  if (auto v = Size(o, "memtableSize")) options.memtable_size = *v;
  if (auto v = Size(o, "blockSize")) options.table_size = *v;  // tableSize's old name
  if (auto v = Size(o, "tableSize")) options.table_size = *v;
  if (auto v = Size(o, "blockCacheSize")) options.block_cache_capacity = *v;
  options.compression = ParseCompression(o.Env(), o.Get("compression"));
  return options;
}

class Database final : public Napi::ObjectWrap<Database> {
 public:
  static Napi::Object Init(Napi::Env env, Napi::Object exports) {
    Napi::Function f = DefineClass(
        env, "Database",
        {InstanceMethod("open", &Database::Open), InstanceMethod("close", &Database::Close),
         InstanceMethod("get", &Database::Get),
         InstanceMethod("getMany", &Database::GetMany), InstanceMethod("put", &Database::Put),
         InstanceMethod("del", &Database::Del), InstanceMethod("batch", &Database::Batch),
         InstanceMethod("clear", &Database::Clear), InstanceMethod("iterator", &Database::NewIterator),
         InstanceMethod("snapshot", &Database::NewSnapshot), InstanceMethod("getProperty", &Database::GetProperty),
         InstanceMethod("approximateSize", &Database::ApproximateSize),
         InstanceMethod("compactRange", &Database::CompactRange),
         InstanceMethod("cppGetLoop", &Database::CppGetLoop)});
    exports.Set("Database", f);
    return exports;
  }
  explicit Database(const Napi::CallbackInfo& info) : Napi::ObjectWrap<Database>(info) {
    auto* share = new std::shared_ptr<GetSyncCell>(get_sync_cell_);
    Napi::Function get_sync = Napi::Function::New<&Database::GetSyncOfCell>(info.Env(), "getSync", share);
    get_sync.AddFinalizer([](Napi::Env, std::shared_ptr<GetSyncCell>* cell) { delete cell; }, share);
    info.This().As<Napi::Object>().Set("getSync", get_sync);
  }
  ~Database() override {
    get_sync_cell_->db = nullptr;
    Shutdown();
  }

 private:
  // getSync is a function of each database's own, its data this cell,
  // rather than a method: a method call unwraps its receiver, a property
  // lookup that cost as much as any other step of the call. The database
  // and the function share the cell; the database clears it when it goes,
  // so a getSync that outlives its database throws.
  struct GetSyncCell {
    Database* db;
  };
  std::shared_ptr<GetSyncCell> get_sync_cell_ = std::make_shared<GetSyncCell>(GetSyncCell{this});

  static Napi::Value GetSyncOfCell(const Napi::CallbackInfo& info) {
    Database* db = static_cast<std::shared_ptr<GetSyncCell>*>(info.Data())->get()->db;
    if (db == nullptr) throw CodeError(info.Env(), "the database is not open", "LEVEL_DATABASE_NOT_OPEN");
    return db->GetSync(info);
  }

  // Closes the engine (if open) on this thread.
  void Shutdown() {
    if (state_ == nullptr) return;
    ForgetTeardown(state_.get());
    state_->Close();
    state_.reset();
  }
  void ForgetTeardown(DbState* state) {
    if (!state->cleanup_hook) return;
    napi_remove_env_cleanup_hook(Env(), &Database::Teardown, state);
    state->cleanup_hook = false;
  }
  static void Teardown(void* arg) {
    auto* state = static_cast<DbState*>(arg);
    state->cleanup_hook = false;
    state->Close();
  }

  DB* Engine(Napi::Env env) const {
    if (state_ == nullptr || state_->db == nullptr) {
      throw CodeError(env, "the database is not open", "LEVEL_DATABASE_NOT_OPEN");
    }
    return state_->db.get();
  }

  // open(location, options): a promise; opens (creating) the database.
  Napi::Value Open(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (state_ != nullptr || opening_) {
      throw CodeError(env, "the database is open or opening", "LEVEL_DATABASE_NOT_CLOSED");
    }
    const std::string location = info[0].As<Napi::String>().Utf8Value();
    const jigsaw::Options options = OpenOptionsFrom(info[1].As<Napi::Object>());
    auto opened = std::make_shared<std::unique_ptr<DB>>();
    auto status = std::make_shared<Status>();
    opening_ = true;
    return RunAsync(
        Value(),
        [=]() {
          *status = DB::Open(options, location, opened.get());
          return Status::OK();  // settled below, so that opening_ is reset either way
        },
        [this, opened, status](Napi::Env env) -> Napi::Value {
          opening_ = false;
          if (!status->ok()) throw StatusError(env, *status);
          state_ = std::make_shared<DbState>();
          state_->db = std::move(*opened);
          napi_add_env_cleanup_hook(env, &Database::Teardown, state_.get());
          state_->cleanup_hook = true;
          return env.Undefined();
        });
  }

  // close(): a promise. index.js calls it only once no call is pending and
  // every iterator and snapshot has closed (those left are ended here).
  Napi::Value Close(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (opening_) throw CodeError(env, "the database is opening", "LEVEL_DATABASE_NOT_OPEN");
    std::shared_ptr<DbState> state = std::move(state_);
    if (state == nullptr) return Resolved(env);
    ForgetTeardown(state.get());
    state->EndReaders();
    return RunAsync(
        Value(),
        [state]() {
          state->db.reset();  // flushes nothing the WAL does not hold; may wait for background work
          return Status::OK();
        },
        [](Napi::Env env) -> Napi::Value { return env.Undefined(); });
  }

  static Napi::Value Resolved(Napi::Env env) {
    Napi::Promise::Deferred d = Napi::Promise::Deferred::New(env);
    d.Resolve(env.Undefined());
    return d.Promise();
  }

  // get(key, options): a promise of the value, or undefined.
  Napi::Value Get(const Napi::CallbackInfo& info) {
    DB* db = Engine(info.Env());
    const Napi::Object options = info[1].As<Napi::Object>();
    const jigsaw::ReadOptions ro = ReadOptionsFrom(options, state_.get());
    const Encoding encoding = ToEncoding(options.Get("valueEncoding"));
    auto key = std::make_shared<std::string>(ToBytes(info[0]));
    auto value = std::make_shared<std::optional<std::string>>();
    return RunAsync(
        Value(),
        [=]() {
          std::string v;
          Status s = db->Get(ro, *key, &v);
          if (s.ok()) *value = std::move(v);
          return s.IsNotFound() ? Status::OK() : s;
        },
        [=](Napi::Env env) -> Napi::Value {
          return value->has_value() ? FromBytes(env, **value, encoding) : env.Undefined();
        });
  }

  // getSync(key, snapshot, offset): reads on this thread. -1 if the key is
  // not found; else the value's length, its bytes copied into the slab
  // (setSlab) at `offset` when they fit there, or else a Buffer of the
  // value. (index.js hands out views of the slab, as Node's own Buffer pool
  // does: no allocation per read.)
  Napi::Value GetSync(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    DB* db = Engine(env);
    jigsaw::ReadOptions ro;
    ro.snapshot = SnapshotOf(info[1], state_.get());
    std::string scratch;
    std::string& value = get_sync_value_;
    const Status s = db->Get(ro, BytesOf(info[0], &scratch), &value);
    if (s.IsNotFound()) return Napi::Number::New(env, -1);
    if (!s.ok()) throw StatusError(env, s);
    const std::span<char> slab = Classes(env).slab_bytes;
    const size_t offset = info[2].As<Napi::Number>().Uint32Value();
    if (offset <= slab.size() && value.size() <= slab.size() - offset) {
      std::memcpy(slab.data() + offset, value.data(), value.size());
      return Napi::Number::New(env, static_cast<double>(value.size()));
    }
    Napi::Value copy = Napi::Buffer<char>::Copy(env, value.data(), value.size());
    if (value.capacity() > (1u << 20)) value = std::string();
    return copy;
  }

  // cppGetLoop(keys): the baseline of bench.js -- the C++ API's Get of each
  // key (Buffers, read in place) in order on this database, one
  // ReadOptions and one value string reused as a C++ program calls it,
  // timed in C++ on this thread. Returns [keys found, seconds].
  Napi::Value CppGetLoop(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    DB* db = Engine(env);
    if (!info[0].IsArray()) throw Napi::TypeError::New(env, "cppGetLoop takes an array of Buffers");
    const Napi::Array input = info[0].As<Napi::Array>();
    std::vector<Slice> keys;
    keys.reserve(input.Length());
    for (uint32_t i = 0; i < input.Length(); i++) {
      const auto k = Uint8ArrayBytes(input.Get(i));
      if (!k) throw Napi::TypeError::New(env, "cppGetLoop takes an array of Buffers");
      keys.emplace_back(k->data(), k->size());
    }
    const jigsaw::ReadOptions ro;
    std::string value;
    double found = 0;
    const auto start = std::chrono::steady_clock::now();
    for (const Slice& k : keys) {
      const Status s = db->Get(ro, k, &value);
      if (s.ok()) {
        found++;
      } else if (!s.IsNotFound()) {
        throw StatusError(env, s);
      }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Napi::Array out = Napi::Array::New(env, 2);
    out.Set(0u, Napi::Number::New(env, found));
    out.Set(1u, Napi::Number::New(env, seconds));
    return out;
  }

  // getMany(keys, options): a promise of an array of values (undefined for
  // a key not found), read at one sequence.
  Napi::Value GetMany(const Napi::CallbackInfo& info) {
    DB* db = Engine(info.Env());
    const Napi::Array input = info[0].As<Napi::Array>();
    const Napi::Object options = info[1].As<Napi::Object>();
    const jigsaw::ReadOptions ro = ReadOptionsFrom(options, state_.get());
    const Encoding encoding = ToEncoding(options.Get("valueEncoding"));
    auto keys = std::make_shared<std::vector<std::string>>();
    for (uint32_t i = 0; i < input.Length(); i++) keys->push_back(ToBytes(input.Get(i)));
    auto values = std::make_shared<std::vector<std::string>>();
    auto found = std::make_shared<std::vector<bool>>();
    return RunAsync(
        Value(),
        [=]() {
          std::vector<Slice> slices(keys->begin(), keys->end());
          std::vector<Status> statuses = db->MultiGet(ro, slices, values.get());
          for (const Status& s : statuses) {
            if (!s.ok() && !s.IsNotFound()) return s;
            found->push_back(s.ok());
          }
          return Status::OK();
        },
        [=](Napi::Env env) -> Napi::Value {
          Napi::Array out = Napi::Array::New(env, keys->size());
          for (size_t i = 0; i < keys->size(); i++) {
            out.Set(i, (*found)[i] ? FromBytes(env, (*values)[i], encoding) : env.Undefined());
          }
          return out;
        });
  }

  // Writes a batch built here, on the thread pool.
  Napi::Value Write(DB* db, bool sync, std::shared_ptr<jigsaw::WriteBatch> batch) {
    jigsaw::WriteOptions wo;
    wo.sync = sync;
    return RunAsync(
        Value(), [=]() { return db->Write(wo, batch.get()); },
        [](Napi::Env env) -> Napi::Value { return env.Undefined(); });
  }

  // put(key, value, sync), del(key, sync): promises.
  Napi::Value Put(const Napi::CallbackInfo& info) {
    DB* db = Engine(info.Env());
    auto batch = std::make_shared<jigsaw::WriteBatch>();
    std::string key, value;  // the batch copies the bytes
    batch->Put(BytesOf(info[0], &key), BytesOf(info[1], &value));
    return Write(db, info[2].ToBoolean(), std::move(batch));
  }
  Napi::Value Del(const Napi::CallbackInfo& info) {
    DB* db = Engine(info.Env());
    auto batch = std::make_shared<jigsaw::WriteBatch>();
    std::string key;
    batch->Delete(BytesOf(info[0], &key));
    return Write(db, info[1].ToBoolean(), std::move(batch));
  }

  // batch(operations, sync): a promise; the operations ({type: 'put' |
  // 'del', key, value}) written atomically.
  Napi::Value Batch(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    DB* db = Engine(env);
    const Napi::Array ops = info[0].As<Napi::Array>();
    auto batch = std::make_shared<jigsaw::WriteBatch>();
    std::string key, value;  // the batch copies the bytes
    for (uint32_t i = 0; i < ops.Length(); i++) {
      const Napi::Object op = ops.Get(i).As<Napi::Object>();
      const std::string type = op.Get("type").ToString().Utf8Value();
      if (type == "put") {
        batch->Put(BytesOf(op.Get("key"), &key), BytesOf(op.Get("value"), &value));
      } else if (type == "del") {
        batch->Delete(BytesOf(op.Get("key"), &key));
      } else {
        throw Napi::TypeError::New(env, "a batch operation's type must be 'put' or 'del'");
      }
    }
    return Write(db, info[1].ToBoolean(), std::move(batch));
  }

  // clear(options): a promise; deletes the keys of a range (gt/gte/lt/lte,
  // reverse, limit) as seen at options.snapshot or now, in batches of
  // about 64 KiB of keys.
  Napi::Value Clear(const Napi::CallbackInfo& info) {
    DB* db = Engine(info.Env());
    std::shared_ptr<RangeCursor> cursor = NewCursor(*state_, info[0].As<Napi::Object>());
    return RunAsync(
        Value(),
        [=]() {
          jigsaw::WriteOptions wo;
          while (true) {
            jigsaw::WriteBatch batch;
            size_t bytes = 0;
            for (; bytes < (64 << 10) && cursor->Valid(); cursor->Advance()) {
              batch.Delete(cursor->key());
              bytes += cursor->key().size() + 16;
            }
            if (!cursor->status().ok()) return cursor->status();
            if (bytes == 0) return Status::OK();
            Status s = db->Write(wo, &batch);
            if (!s.ok()) return s;
          }
        },
        [cursor](Napi::Env env) -> Napi::Value { return env.Undefined(); });
  }

  // iterator(options): a native Iterator reading the database as of now
  // (or options.snapshot).
  Napi::Value NewIterator(const Napi::CallbackInfo& info) {
    Engine(info.Env());
    Napi::Object it = Classes(info.Env()).iterator.New({});
    IteratorWrap::Unwrap(it)->Bind(Value(), state_, info[0].As<Napi::Object>());
    return it;
  }

  // snapshot(): a native Snapshot of the database as of now.
  Napi::Value NewSnapshot(const Napi::CallbackInfo& info) {
    Engine(info.Env());
    Napi::Object s = Classes(info.Env()).snapshot.New({});
    SnapshotWrap::Unwrap(s)->Bind(state_);
    return s;
  }

  // getProperty(name): the property's text (include/jigsaw/db.h), or
  // undefined.
  Napi::Value GetProperty(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    std::string value;
    if (!Engine(env)->GetProperty(info[0].ToString().Utf8Value(), &value)) return env.Undefined();
    return Napi::String::New(env, value);
  }

  // approximateSize(start, end): a promise of the bytes the tables hold
  // for [start, end).
  Napi::Value ApproximateSize(const Napi::CallbackInfo& info) {
    DB* db = Engine(info.Env());
    auto start = std::make_shared<std::string>(ToBytes(info[0]));
    auto end = std::make_shared<std::string>(ToBytes(info[1]));
    auto size = std::make_shared<uint64_t>(0);
    return RunAsync(
        Value(),
        [=]() {
          jigsaw::Range range(*start, *end);
          db->GetApproximateSizes(&range, 1, size.get());
          return Status::OK();
        },
        [=](Napi::Env env) -> Napi::Value { return Napi::Number::New(env, static_cast<double>(*size)); });
  }

  // compactRange(start, end): a promise; compacts [start, end] (a null
  // bound is open).
  Napi::Value CompactRange(const Napi::CallbackInfo& info) {
    DB* db = Engine(info.Env());
    auto start = info[0].IsNull() || info[0].IsUndefined() ? nullptr : std::make_shared<std::string>(ToBytes(info[0]));
    auto end = info[1].IsNull() || info[1].IsUndefined() ? nullptr : std::make_shared<std::string>(ToBytes(info[1]));
    return RunAsync(
        Value(),
        [=]() {
          const Slice b = start ? Slice(*start) : Slice(), e = end ? Slice(*end) : Slice();
          return db->CompactRange(start ? &b : nullptr, end ? &e : nullptr);
        },
        [](Napi::Env env) -> Napi::Value { return env.Undefined(); });
  }

  std::shared_ptr<DbState> state_;
  bool opening_ = false;  // an open is in flight
  std::string get_sync_value_;  // getSync's value, its capacity kept (up to 1 MiB)
};

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  env.SetInstanceData(new AddonData{SnapshotWrap::Define(env), IteratorWrap::Define(env), {}, {}});
  Database::Init(env, exports);
  exports.Set("engineVersion", Napi::String::New(env, JIGSAW_VERSION_STRING));
  exports.Set("setSlab", Napi::Function::New(env, SetSlab, "setSlab"));
  return exports;
}

}  // namespace

NODE_API_MODULE(jigsaw_level, Init)
