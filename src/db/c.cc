// The C API (include/jigsaw/c.h) over the C++ API. Every entry point catches
// whatever the C++ side may throw (std::bad_alloc, from std::string and
// containers): no exception crosses into C.

#include "jigsaw/c.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>

#include "jigsaw/db.h"
#include "jigsaw/iterator.h"
#include "jigsaw/options.h"
#include "jigsaw/slice.h"
#include "jigsaw/status.h"
#include "jigsaw/table_file_writer.h"
#include "jigsaw/version.h"
#include "jigsaw/write_batch.h"

using jigsaw::DB;
using jigsaw::Options;
using jigsaw::ReadOptions;
using jigsaw::Slice;
using jigsaw::Status;
using jigsaw::WriteBatch;
using jigsaw::WriteOptions;

struct jigsaw_t {
  std::unique_ptr<DB> rep;
};
struct jigsaw_options_t {
  Options rep;
  // Non-null: a setter was given a value it could not take; the open,
  // destroy or copy using these options fails with this message.
  const char* invalid = nullptr;
};
struct jigsaw_readoptions_t {
  ReadOptions rep;
  // The iterator bounds rep points to (copies of what the caller passed).
  std::string lower_bound, upper_bound;
  Slice lower_slice, upper_slice;
};
struct jigsaw_writeoptions_t {
  WriteOptions rep;
};
struct jigsaw_writebatch_t {
  WriteBatch rep;
  // An update could not be added (memory ran out): writing the batch fails.
  bool incomplete = false;
};
struct jigsaw_iterator_t {
  std::unique_ptr<jigsaw::Iterator> rep;
  // Non-null: a move threw; the iterator is reported not valid, with this.
  const char* failure = nullptr;
};
struct jigsaw_tablefilewriter_t {
  std::unique_ptr<jigsaw::TableFileWriter> rep;
};
struct jigsaw_updates_t {
  std::unique_ptr<jigsaw::TransactionLogIterator> rep;
};
struct jigsaw_snapshot_t {
  const jigsaw::Snapshot* rep;
};

namespace {

constexpr char kOutOfMemory[] = "IO error: out of memory";

// What *errptr is set to when even the copy of a message cannot be
// allocated: a static buffer that jigsaw_free (and SetError) recognise and
// never free.
char out_of_memory_message[] = "IO error: out of memory";

void FreeMessage(char* message) {
  if (message != out_of_memory_message) std::free(message);
}

// Replaces *errptr with a malloc'ed copy of `message`, freeing a previous
// message (LevelDB's rule).
void SetError(char** errptr, const char* message, size_t length) {
  char* copy = static_cast<char*>(std::malloc(length + 1));
  if (copy == nullptr) {
    copy = out_of_memory_message;
  } else {
    std::memcpy(copy, message, length);
    copy[length] = '\0';
  }
  FreeMessage(*errptr);
  *errptr = copy;
}

void SetError(char** errptr, const char* message) { SetError(errptr, message, std::strlen(message)); }

// True if `s` is OK; else its text goes to *errptr.
bool SaveError(char** errptr, const Status& s) {
  if (s.ok()) return true;
  try {
    const std::string text = s.ToString();
    SetError(errptr, text.data(), text.size());
  } catch (...) {
    SetError(errptr, s.message().data(), s.message().size());
  }
  return false;
}

// The error for an exception caught at the boundary.
void SaveException(char** errptr) {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    SetError(errptr, kOutOfMemory);
  } catch (const std::exception& e) {
    std::string text;
    try {
      text = std::string("IO error: ") + e.what();
    } catch (...) {
      SetError(errptr, kOutOfMemory);
      return;
    }
    SetError(errptr, text.data(), text.size());
  } catch (...) {
    SetError(errptr, "IO error: unknown exception");
  }
}

// Fails with the options' recorded invalid setting, if any.
bool CheckOptions(const jigsaw_options_t* options, char** errptr) {
  if (options->invalid == nullptr) return true;
  SetError(errptr, options->invalid);
  return false;
}

// A malloc'ed copy of `bytes` (+ a NUL byte, not counted), or nullptr.
char* CopyOut(const std::string& bytes) {
  char* result = static_cast<char*>(std::malloc(bytes.size() + 1));
  if (result == nullptr) return nullptr;
  std::memcpy(result, bytes.data(), bytes.size());
  result[bytes.size()] = '\0';
  return result;
}

Slice MakeSlice(const char* data, size_t length) { return length == 0 ? Slice() : Slice(data, length); }

// Runs a move of an iterator, turning an exception into the iterator's
// failure.
template <typename Move>
void IterMove(jigsaw_iterator_t* iter, Move move) {
  if (iter->failure != nullptr) return;
  try {
    move(iter->rep.get());
  } catch (...) {
    iter->failure = kOutOfMemory;
  }
}

}  // namespace

extern "C" {

// ---- Database ----

jigsaw_t* jigsaw_open(const jigsaw_options_t* options, const char* name, char** errptr) {
  if (!CheckOptions(options, errptr)) return nullptr;
  try {
    auto db = std::make_unique<jigsaw_t>();
    if (!SaveError(errptr, DB::Open(options->rep, name, &db->rep))) return nullptr;
    return db.release();
  } catch (...) {
    SaveException(errptr);
    return nullptr;
  }
}

jigsaw_t* jigsaw_open_for_read_only(const jigsaw_options_t* options, const char* name, char** errptr) {
  if (!CheckOptions(options, errptr)) return nullptr;
  try {
    auto db = std::make_unique<jigsaw_t>();
    if (!SaveError(errptr, DB::OpenForReadOnly(options->rep, name, &db->rep))) return nullptr;
    return db.release();
  } catch (...) {
    SaveException(errptr);
    return nullptr;
  }
}

jigsaw_t* jigsaw_open_as_secondary(const jigsaw_options_t* options, const char* name, char** errptr) {
  if (!CheckOptions(options, errptr)) return nullptr;
  try {
    auto db = std::make_unique<jigsaw_t>();
    if (!SaveError(errptr, DB::OpenAsSecondary(options->rep, name, &db->rep))) return nullptr;
    return db.release();
  } catch (...) {
    SaveException(errptr);
    return nullptr;
  }
}

void jigsaw_try_catch_up_with_primary(jigsaw_t* db, char** errptr) {
  try {
    SaveError(errptr, db->rep->TryCatchUpWithPrimary());
  } catch (...) {
    SaveException(errptr);
  }
}

// Destructors are noexcept: closing cannot throw into C.
void jigsaw_close(jigsaw_t* db) { delete db; }

void jigsaw_put(jigsaw_t* db, const jigsaw_writeoptions_t* options, const char* key, size_t keylen,
                const char* val, size_t vallen, char** errptr) {
  try {
    SaveError(errptr, db->rep->Put(options->rep, MakeSlice(key, keylen), MakeSlice(val, vallen)));
  } catch (...) {
    SaveException(errptr);
  }
}

void jigsaw_delete(jigsaw_t* db, const jigsaw_writeoptions_t* options, const char* key, size_t keylen,
                   char** errptr) {
  try {
    SaveError(errptr, db->rep->Delete(options->rep, MakeSlice(key, keylen)));
  } catch (...) {
    SaveException(errptr);
  }
}

void jigsaw_delete_range(jigsaw_t* db, const jigsaw_writeoptions_t* options, const char* begin, size_t beginlen,
                         const char* end, size_t endlen, char** errptr) {
  try {
    SaveError(errptr, db->rep->DeleteRange(options->rep, MakeSlice(begin, beginlen), MakeSlice(end, endlen)));
  } catch (...) {
    SaveException(errptr);
  }
}

void jigsaw_write(jigsaw_t* db, const jigsaw_writeoptions_t* options, jigsaw_writebatch_t* batch, char** errptr) {
  if (batch->incomplete) {
    SetError(errptr, "Invalid argument: write batch incomplete: memory ran out while adding an update");
    return;
  }
  try {
    SaveError(errptr, db->rep->Write(options->rep, &batch->rep));
  } catch (...) {
    SaveException(errptr);
  }
}

char* jigsaw_get(jigsaw_t* db, const jigsaw_readoptions_t* options, const char* key, size_t keylen,
                 size_t* vallen, char** errptr) {
  *vallen = 0;
  try {
    std::string value;
    const Status s = db->rep->Get(options->rep, MakeSlice(key, keylen), &value);
    if (s.IsNotFound()) return nullptr;
    if (!SaveError(errptr, s)) return nullptr;
    char* result = CopyOut(value);
    if (result == nullptr) {
      SetError(errptr, kOutOfMemory);
      return nullptr;
    }
    *vallen = value.size();
    return result;
  } catch (...) {
    SaveException(errptr);
    return nullptr;
  }
}

jigsaw_iterator_t* jigsaw_create_iterator(jigsaw_t* db, const jigsaw_readoptions_t* options) {
  try {
    auto iter = std::make_unique<jigsaw_iterator_t>();
    iter->rep = db->rep->NewIterator(options->rep);
    return iter.release();
  } catch (...) {
    return nullptr;
  }
}

const jigsaw_snapshot_t* jigsaw_create_snapshot(jigsaw_t* db) {
  auto* snapshot = new (std::nothrow) jigsaw_snapshot_t{nullptr};
  if (snapshot == nullptr) return nullptr;
  try {
    snapshot->rep = db->rep->GetSnapshot();
    return snapshot;
  } catch (...) {
    delete snapshot;
    return nullptr;
  }
}

void jigsaw_release_snapshot(jigsaw_t* db, const jigsaw_snapshot_t* snapshot) {
  if (snapshot == nullptr) return;
  try {
    db->rep->ReleaseSnapshot(snapshot->rep);
  } catch (...) {
    // Releasing frees; it has nothing to allocate. Nothing to report to.
  }
  delete snapshot;
}

uint64_t jigsaw_get_latest_sequence_number(jigsaw_t* db) { return db->rep->GetLatestSequenceNumber(); }

uint64_t jigsaw_snapshot_get_sequence_number(const jigsaw_snapshot_t* snapshot) { return snapshot->rep->sequence(); }

char* jigsaw_property_value(jigsaw_t* db, const char* propname) {
  try {
    std::string value;
    if (!db->rep->GetProperty(propname, &value)) return nullptr;
    return CopyOut(value);
  } catch (...) {
    return nullptr;
  }
}

void jigsaw_approximate_sizes(jigsaw_t* db, int num_ranges, const char* const* range_start_key,
                              const size_t* range_start_key_len, const char* const* range_limit_key,
                              const size_t* range_limit_key_len, uint64_t* sizes) {
  // One range per call: no array to allocate here.
  for (int i = 0; i < num_ranges; ++i) {
    const jigsaw::Range range(MakeSlice(range_start_key[i], range_start_key_len[i]),
                              MakeSlice(range_limit_key[i], range_limit_key_len[i]));
    sizes[i] = 0;
    try {
      db->rep->GetApproximateSizes(&range, 1, &sizes[i]);
    } catch (...) {
      sizes[i] = 0;
    }
  }
}

void jigsaw_compact_range(jigsaw_t* db, const char* start_key, size_t start_key_len, const char* limit_key,
                          size_t limit_key_len, char** errptr) {
  const Slice start = MakeSlice(start_key, start_key_len);
  const Slice limit = MakeSlice(limit_key, limit_key_len);
  try {
    SaveError(errptr, db->rep->CompactRange(start_key != nullptr ? &start : nullptr,
                                            limit_key != nullptr ? &limit : nullptr));
  } catch (...) {
    SaveException(errptr);
  }
}

void jigsaw_verify_integrity(jigsaw_t* db, char** errptr) {
  try {
    SaveError(errptr, db->rep->VerifyIntegrity());
  } catch (...) {
    SaveException(errptr);
  }
}

void jigsaw_create_checkpoint(jigsaw_t* db, const char* dir, uint64_t* sequence, char** errptr) {
  try {
    uint64_t at = 0;
    const Status s = db->rep->CreateCheckpoint(dir != nullptr ? dir : "", &at);
    if (s.ok() && sequence != nullptr) *sequence = at;
    SaveError(errptr, s);
  } catch (...) {
    SaveException(errptr);
  }
}

jigsaw_updates_t* jigsaw_get_updates_since(jigsaw_t* db, uint64_t sequence, char** errptr) {
  try {
    auto updates = std::make_unique<jigsaw_updates_t>();
    if (!SaveError(errptr, db->rep->GetUpdatesSince(sequence, &updates->rep))) return nullptr;
    return updates.release();
  } catch (...) {
    SaveException(errptr);
    return nullptr;
  }
}

unsigned char jigsaw_updates_valid(const jigsaw_updates_t* updates) { return updates->rep->Valid() ? 1 : 0; }

void jigsaw_updates_next(jigsaw_updates_t* updates) { updates->rep->Next(); }

jigsaw_writebatch_t* jigsaw_updates_get_batch(jigsaw_updates_t* updates, uint64_t* sequence) {
  try {
    auto batch = std::make_unique<jigsaw_writebatch_t>();
    jigsaw::BatchResult result = updates->rep->GetBatch();
    batch->rep = std::move(result.batch);
    if (sequence != nullptr) *sequence = result.sequence;
    return batch.release();
  } catch (...) {
    return nullptr;
  }
}

void jigsaw_updates_get_error(const jigsaw_updates_t* updates, char** errptr) {
  try {
    SaveError(errptr, updates->rep->status());
  } catch (...) {
    SaveException(errptr);
  }
}

void jigsaw_updates_destroy(jigsaw_updates_t* updates) { delete updates; }

void jigsaw_ingest_external_files(jigsaw_t* db, const char* const* files, size_t n, unsigned char move_files,
                                  char** errptr) {
  try {
    std::vector<std::string> paths;
    for (size_t i = 0; i < n; ++i) paths.emplace_back(files[i] != nullptr ? files[i] : "");
    jigsaw::IngestExternalFileOptions options;
    options.move_files = move_files != 0;
    SaveError(errptr, db->rep->IngestExternalFile(paths, options));
  } catch (...) {
    SaveException(errptr);
  }
}

jigsaw_tablefilewriter_t* jigsaw_tablefilewriter_create(const jigsaw_options_t* options) {
  try {
    auto writer = std::make_unique<jigsaw_tablefilewriter_t>();
    writer->rep = std::make_unique<jigsaw::TableFileWriter>(options->rep);
    return writer.release();
  } catch (...) {
    return nullptr;
  }
}

void jigsaw_tablefilewriter_destroy(jigsaw_tablefilewriter_t* writer) { delete writer; }

void jigsaw_tablefilewriter_open(jigsaw_tablefilewriter_t* writer, const char* path, char** errptr) {
  try {
    SaveError(errptr, writer->rep->Open(path != nullptr ? path : ""));
  } catch (...) {
    SaveException(errptr);
  }
}

void jigsaw_tablefilewriter_put(jigsaw_tablefilewriter_t* writer, const char* key, size_t klen, const char* val,
                                size_t vlen, char** errptr) {
  try {
    SaveError(errptr, writer->rep->Put(MakeSlice(key, klen), MakeSlice(val, vlen)));
  } catch (...) {
    SaveException(errptr);
  }
}

void jigsaw_tablefilewriter_delete(jigsaw_tablefilewriter_t* writer, const char* key, size_t klen, char** errptr) {
  try {
    SaveError(errptr, writer->rep->Delete(MakeSlice(key, klen)));
  } catch (...) {
    SaveException(errptr);
  }
}

void jigsaw_tablefilewriter_finish(jigsaw_tablefilewriter_t* writer, char** errptr) {
  try {
    SaveError(errptr, writer->rep->Finish());
  } catch (...) {
    SaveException(errptr);
  }
}

void jigsaw_destroy_db(const jigsaw_options_t* options, const char* name, char** errptr) {
  if (!CheckOptions(options, errptr)) return;
  try {
    SaveError(errptr, jigsaw::DestroyDB(name, options->rep));
  } catch (...) {
    SaveException(errptr);
  }
}

void jigsaw_repair_db(const jigsaw_options_t* options, const char* name, char** report, char** errptr) {
  if (report != nullptr) *report = nullptr;
  if (!CheckOptions(options, errptr)) return;
  try {
    jigsaw::RepairReport what;
    const jigsaw::Status s = jigsaw::RepairDB(name, options->rep, &what);
    SaveError(errptr, s);
    if (s.ok() && report != nullptr) *report = CopyOut(what.ToString());
  } catch (...) {
    SaveException(errptr);
  }
}

void jigsaw_copy_db(const jigsaw_options_t* from_options, const char* from, const jigsaw_options_t* to_options,
                    const char* to, char** errptr) {
  if (!CheckOptions(from_options, errptr) || !CheckOptions(to_options, errptr)) return;
  try {
    SaveError(errptr, jigsaw::CopyDB(from, from_options->rep, to, to_options->rep));
  } catch (...) {
    SaveException(errptr);
  }
}

// ---- Iterator ----

void jigsaw_iter_destroy(jigsaw_iterator_t* iter) { delete iter; }

unsigned char jigsaw_iter_valid(const jigsaw_iterator_t* iter) {
  return iter->failure == nullptr && iter->rep->Valid() ? 1 : 0;
}

void jigsaw_iter_seek_to_first(jigsaw_iterator_t* iter) {
  IterMove(iter, [](jigsaw::Iterator* it) { it->SeekToFirst(); });
}

void jigsaw_iter_seek_to_last(jigsaw_iterator_t* iter) {
  IterMove(iter, [](jigsaw::Iterator* it) { it->SeekToLast(); });
}

void jigsaw_iter_seek(jigsaw_iterator_t* iter, const char* k, size_t klen) {
  const Slice target = MakeSlice(k, klen);
  IterMove(iter, [&target](jigsaw::Iterator* it) { it->Seek(target); });
}

void jigsaw_iter_next(jigsaw_iterator_t* iter) {
  IterMove(iter, [](jigsaw::Iterator* it) { it->Next(); });
}

void jigsaw_iter_prev(jigsaw_iterator_t* iter) {
  IterMove(iter, [](jigsaw::Iterator* it) { it->Prev(); });
}

const char* jigsaw_iter_key(const jigsaw_iterator_t* iter, size_t* klen) {
  const Slice key = iter->rep->key();
  *klen = key.size();
  return key.data();
}

const char* jigsaw_iter_value(const jigsaw_iterator_t* iter, size_t* vlen) {
  const Slice value = iter->rep->value();
  *vlen = value.size();
  return value.data();
}

void jigsaw_iter_refresh(jigsaw_iterator_t* iter, char** errptr) {
  try {
    const Status s = iter->rep->Refresh();
    if (s.ok()) iter->failure = nullptr;
    SaveError(errptr, s);
  } catch (...) {
    SaveException(errptr);
  }
}

void jigsaw_iter_get_error(const jigsaw_iterator_t* iter, char** errptr) {
  if (iter->failure != nullptr) {
    SetError(errptr, iter->failure);
    return;
  }
  try {
    SaveError(errptr, iter->rep->status());
  } catch (...) {
    SaveException(errptr);
  }
}

// ---- Write batch ----

jigsaw_writebatch_t* jigsaw_writebatch_create(void) {
  try {
    return new jigsaw_writebatch_t;
  } catch (...) {
    return nullptr;
  }
}

void jigsaw_writebatch_destroy(jigsaw_writebatch_t* batch) { delete batch; }

void jigsaw_writebatch_clear(jigsaw_writebatch_t* batch) {
  try {
    batch->rep.Clear();
    batch->incomplete = false;
  } catch (...) {
    // Clear only shrinks the batch's buffer; should it throw, the batch stays
    // as it was, incomplete flag included.
  }
}

void jigsaw_writebatch_put(jigsaw_writebatch_t* batch, const char* key, size_t klen, const char* val, size_t vlen) {
  try {
    batch->rep.Put(MakeSlice(key, klen), MakeSlice(val, vlen));
  } catch (...) {
    batch->incomplete = true;
  }
}

void jigsaw_writebatch_delete(jigsaw_writebatch_t* batch, const char* key, size_t klen) {
  try {
    batch->rep.Delete(MakeSlice(key, klen));
  } catch (...) {
    batch->incomplete = true;
  }
}

void jigsaw_writebatch_delete_range(jigsaw_writebatch_t* batch, const char* begin, size_t beginlen, const char* end,
                                    size_t endlen) {
  try {
    batch->rep.DeleteRange(MakeSlice(begin, beginlen), MakeSlice(end, endlen));
  } catch (...) {
    batch->incomplete = true;
  }
}

void jigsaw_writebatch_append(jigsaw_writebatch_t* destination, const jigsaw_writebatch_t* source) {
  try {
    destination->rep.Append(source->rep);
    destination->incomplete = destination->incomplete || source->incomplete;
  } catch (...) {
    destination->incomplete = true;
  }
}

int jigsaw_writebatch_count(const jigsaw_writebatch_t* batch) { return static_cast<int>(batch->rep.Count()); }

void jigsaw_writebatch_iterate(const jigsaw_writebatch_t* batch, void* state,
                               void (*put)(void* state, const char* k, size_t klen, const char* v, size_t vlen),
                               void (*deleted)(void* state, const char* k, size_t klen)) {
  jigsaw_writebatch_iterate_ranges(batch, state, put, deleted, nullptr);
}

void jigsaw_writebatch_iterate_ranges(const jigsaw_writebatch_t* batch, void* state,
                                      void (*put)(void* state, const char* k, size_t klen, const char* v, size_t vlen),
                                      void (*deleted)(void* state, const char* k, size_t klen),
                                      void (*deleted_range)(void* state, const char* b, size_t blen, const char* e,
                                                            size_t elen)) {
  class CallbackHandler : public WriteBatch::Handler {
   public:
    CallbackHandler(void* state, void (*put)(void*, const char*, size_t, const char*, size_t),
                    void (*deleted)(void*, const char*, size_t),
                    void (*deleted_range)(void*, const char*, size_t, const char*, size_t))
        : state_(state), put_(put), deleted_(deleted), deleted_range_(deleted_range) {}
    void Put(const Slice& key, const Slice& value) override {
      put_(state_, key.data(), key.size(), value.data(), value.size());
    }
    void Delete(const Slice& key) override { deleted_(state_, key.data(), key.size()); }
    Status DeleteRange(const Slice& begin, const Slice& end) override {
      if (deleted_range_ == nullptr) return WriteBatch::Handler::DeleteRange(begin, end);
      deleted_range_(state_, begin.data(), begin.size(), end.data(), end.size());
      return Status::OK();
    }

   private:
    void* state_;
    void (*put_)(void*, const char*, size_t, const char*, size_t);
    void (*deleted_)(void*, const char*, size_t);
    void (*deleted_range_)(void*, const char*, size_t, const char*, size_t);
  };
  CallbackHandler handler(state, put, deleted, deleted_range);
  try {
    // A batch built through this API always parses: Iterate's Status is OK
    // here, or NotSupported at a range delete without deleted_range.
    (void)batch->rep.Iterate(&handler);
  } catch (...) {
    // Iterating reads the batch in place; nothing allocates.
  }
}

// ---- Options ----

jigsaw_options_t* jigsaw_options_create(void) {
  try {
    return new jigsaw_options_t;
  } catch (...) {
    return nullptr;
  }
}

void jigsaw_options_destroy(jigsaw_options_t* options) { delete options; }

void jigsaw_options_set_create_if_missing(jigsaw_options_t* options, unsigned char v) {
  options->rep.create_if_missing = v != 0;
}

void jigsaw_options_set_error_if_exists(jigsaw_options_t* options, unsigned char v) {
  options->rep.error_if_exists = v != 0;
}

void jigsaw_options_set_paranoid_checks(jigsaw_options_t* options, unsigned char v) {
  options->rep.paranoid_checks = v != 0;
}

void jigsaw_options_set_best_efforts_recovery(jigsaw_options_t* options, unsigned char v) {
  options->rep.best_efforts_recovery = v != 0;
}

void jigsaw_options_set_storage_mode(jigsaw_options_t* options, int mode) {
  switch (mode) {
    case jigsaw_storage_pmem:
      options->rep.storage_mode = jigsaw::StorageMode::kPmem;
      return;
    case jigsaw_storage_hybrid:
      options->rep.storage_mode = jigsaw::StorageMode::kHybrid;
      return;
    case jigsaw_storage_disk:
      options->rep.storage_mode = jigsaw::StorageMode::kDisk;
      return;
    default:
      options->invalid = "Invalid argument: jigsaw_options_set_storage_mode: unknown storage mode";
  }
}

void jigsaw_options_set_pmem_path(jigsaw_options_t* options, const char* path) {
  try {
    options->rep.pmem_path = path != nullptr ? path : "";
  } catch (...) {
    options->invalid = "Invalid argument: jigsaw_options_set_pmem_path: out of memory";
  }
}

void jigsaw_options_set_pmem_emulation(jigsaw_options_t* options, int emulation) {
  switch (emulation) {
    case jigsaw_pmem_emulation_auto:
      options->rep.pmem_emulation = jigsaw::PmemEmulation::kAuto;
      return;
    case jigsaw_pmem_emulation_force:
      options->rep.pmem_emulation = jigsaw::PmemEmulation::kForce;
      return;
    case jigsaw_pmem_emulation_off:
      options->rep.pmem_emulation = jigsaw::PmemEmulation::kOff;
      return;
    default:
      options->invalid = "Invalid argument: jigsaw_options_set_pmem_emulation: unknown emulation";
  }
}

void jigsaw_options_set_pmem_pool_size(jigsaw_options_t* options, uint64_t bytes) {
  options->rep.pmem_pool_size = bytes;
}

void jigsaw_options_set_pmem_budget(jigsaw_options_t* options, uint64_t bytes) { options->rep.pmem_budget = bytes; }

void jigsaw_options_set_memtable_size(jigsaw_options_t* options, size_t bytes) {
  options->rep.memtable_size = bytes;
}

void jigsaw_options_set_write_buffer_size(jigsaw_options_t* options, size_t bytes) {
  jigsaw_options_set_memtable_size(options, bytes);
}

void jigsaw_options_set_max_immutable_memtables(jigsaw_options_t* options, int n) {
  options->rep.max_immutable_memtables = n;
}

void jigsaw_options_set_table_size(jigsaw_options_t* options, size_t bytes) {
  options->rep.table_size = bytes;
  options->rep.block_size = 0;
}
void jigsaw_options_set_block_size(jigsaw_options_t* options, size_t bytes) { jigsaw_options_set_table_size(options, bytes); }

void jigsaw_options_set_ssd_block_size(jigsaw_options_t* options, size_t bytes) {
  options->rep.ssd_block_size = bytes;
}

void jigsaw_options_set_block_cache_capacity(jigsaw_options_t* options, size_t bytes) {
  options->rep.block_cache_capacity = bytes;
}

void jigsaw_options_set_compression(jigsaw_options_t* options, int compression) {
  switch (compression) {
    case jigsaw_no_compression:
      options->rep.compression = jigsaw::Compression::kNone;
      return;
    case jigsaw_lz4_compression:
      options->rep.compression = jigsaw::Compression::kLZ4;
      return;
    case jigsaw_zstd_compression:
      options->rep.compression = jigsaw::Compression::kZstd;
      return;
    default:
      options->invalid = "Invalid argument: jigsaw_options_set_compression: unknown compression";
  }
}

void jigsaw_options_set_ssd_use_mmap(jigsaw_options_t* options, unsigned char v) {
  options->rep.ssd_use_mmap = v != 0;
}

void jigsaw_options_set_ssd_mapped_gets(jigsaw_options_t* options, unsigned char v) {
  options->rep.ssd_mapped_gets = v != 0;
}
void jigsaw_options_set_reuse_log_files(jigsaw_options_t* options, unsigned char v) {
  options->rep.reuse_log_files = v != 0;
}

void jigsaw_options_set_wal_ttl_seconds(jigsaw_options_t* options, uint64_t seconds) {
  options->rep.wal_ttl_seconds = seconds;
}

void jigsaw_options_set_wal_size_limit_mb(jigsaw_options_t* options, uint64_t mb) {
  options->rep.wal_size_limit_mb = mb;
}

void jigsaw_options_set_pmem_hash_index(jigsaw_options_t* options, unsigned char v) {
  options->rep.pmem_hash_index = v != 0;
}

void jigsaw_options_set_pmem_read_guard(jigsaw_options_t* options, int v) {
  if (v >= 0 && v <= 2) options->rep.pmem_read_guard = static_cast<jigsaw::PmemReadGuard>(v);
}

void jigsaw_options_set_read_triggered_compactions(jigsaw_options_t* options, unsigned char v) {
  options->rep.read_triggered_compactions = v != 0;
}

void jigsaw_options_set_concurrent_memtable_writes(jigsaw_options_t* options, unsigned char v) {
  options->rep.concurrent_memtable_writes = v != 0;
}

void jigsaw_options_set_bloom_bits_per_key(jigsaw_options_t* options, int bits) {
  options->rep.bloom_bits_per_key = bits;
}

void jigsaw_options_set_level0_compaction_trigger(jigsaw_options_t* options, int n) {
  options->rep.level0_compaction_trigger = n;
}

void jigsaw_options_set_level0_slowdown_trigger(jigsaw_options_t* options, int n) {
  options->rep.level0_slowdown_trigger = n;
}

void jigsaw_options_set_level0_stop_trigger(jigsaw_options_t* options, int n) {
  options->rep.level0_stop_trigger = n;
}

void jigsaw_options_set_level1_size(jigsaw_options_t* options, uint64_t bytes) { options->rep.level1_size = bytes; }

void jigsaw_options_set_level_size_multiplier(jigsaw_options_t* options, int n) {
  options->rep.level_size_multiplier = n;
}

void jigsaw_options_set_wal_recovery_mode(jigsaw_options_t* options, int mode) {
  switch (mode) {
    case jigsaw_wal_tolerate_corrupted_tail_records:
      options->rep.wal_recovery_mode = jigsaw::WalRecoveryMode::kTolerateCorruptedTailRecords;
      return;
    case jigsaw_wal_absolute_consistency:
      options->rep.wal_recovery_mode = jigsaw::WalRecoveryMode::kAbsoluteConsistency;
      return;
    case jigsaw_wal_point_in_time_recovery:
      options->rep.wal_recovery_mode = jigsaw::WalRecoveryMode::kPointInTimeRecovery;
      return;
    case jigsaw_wal_skip_any_corrupted_records:
      options->rep.wal_recovery_mode = jigsaw::WalRecoveryMode::kSkipAnyCorruptedRecords;
      return;
    default:
      options->invalid = "Invalid argument: jigsaw_options_set_wal_recovery_mode: unknown mode";
  }
}

// ---- Read options ----

jigsaw_readoptions_t* jigsaw_readoptions_create(void) { return new (std::nothrow) jigsaw_readoptions_t; }

void jigsaw_readoptions_destroy(jigsaw_readoptions_t* options) { delete options; }

void jigsaw_readoptions_set_verify_checksums(jigsaw_readoptions_t* options, unsigned char v) {
  options->rep.verify_checksums = v != 0;
}

void jigsaw_readoptions_set_snapshot(jigsaw_readoptions_t* options, const jigsaw_snapshot_t* snapshot) {
  options->rep.snapshot = snapshot != nullptr ? snapshot->rep : nullptr;
}

void jigsaw_readoptions_set_iterate_lower_bound(jigsaw_readoptions_t* options, const char* key, size_t keylen) {
  if (key == nullptr) {
    options->rep.iterate_lower_bound = nullptr;
    return;
  }
  options->lower_bound.assign(key, keylen);
  options->lower_slice = Slice(options->lower_bound);
  options->rep.iterate_lower_bound = &options->lower_slice;
}

void jigsaw_readoptions_set_iterate_upper_bound(jigsaw_readoptions_t* options, const char* key, size_t keylen) {
  if (key == nullptr) {
    options->rep.iterate_upper_bound = nullptr;
    return;
  }
  options->upper_bound.assign(key, keylen);
  options->upper_slice = Slice(options->upper_bound);
  options->rep.iterate_upper_bound = &options->upper_slice;
}

// ---- Write options ----

jigsaw_writeoptions_t* jigsaw_writeoptions_create(void) { return new (std::nothrow) jigsaw_writeoptions_t; }

void jigsaw_writeoptions_destroy(jigsaw_writeoptions_t* options) { delete options; }

void jigsaw_writeoptions_set_sync(jigsaw_writeoptions_t* options, unsigned char v) { options->rep.sync = v != 0; }

// ---- Utility ----

void jigsaw_free(void* ptr) { FreeMessage(static_cast<char*>(ptr)); }

int jigsaw_major_version(void) { return JIGSAW_VERSION_MAJOR; }

int jigsaw_minor_version(void) { return JIGSAW_VERSION_MINOR; }

}  // extern "C"
