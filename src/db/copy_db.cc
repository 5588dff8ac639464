// CopyDB: an offline copy of a database's latest state into a new database
// (include/jigsaw/db.h). Only the public API is used: it works between any
// storage modes and pool sizes.
#include <memory>
#include <string>

#include "jigsaw/db.h"

namespace jigsaw {

namespace {

// Bytes of keys and values per destination batch: small beside the
// destination's memtable, so that batches never force a WAL segment larger
// than the sizing rule counts on.
size_t BatchBytes(const Options& options) {
  const size_t bytes = options.memtable_size / 8;
  return bytes < (size_t{1} << 20) ? bytes : size_t{1} << 20;
}

// Writes every live pair of `source` into `dest`; the last batch is synced.
Status CopyContents(DB* source, DB* dest, size_t batch_bytes) {
  std::unique_ptr<Iterator> it = source->NewIterator(ReadOptions());
  WriteBatch batch;
  size_t bytes = 0;
  Status s;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    batch.Put(it->key(), it->value());
    bytes += it->key().size() + it->value().size();
    if (bytes >= batch_bytes) {
      s = dest->Write(WriteOptions(), &batch);
      if (!s.ok()) return s;
      batch.Clear();
      bytes = 0;
    }
  }
  s = it->status();
  if (!s.ok()) return s;
  WriteOptions sync;
  sync.sync = true;  // durable: this batch and every earlier one (docs/durability.md)
  if (batch.Count() > 0) return dest->Write(sync, &batch);
  // Nothing left in the batch: an empty sync write would be skipped, so the
  // last key is written again (same value) to sync the log.
  it->SeekToLast();
  if (!it->Valid()) return it->status();  // an empty source: nothing to make durable
  batch.Put(it->key(), it->value());
  return dest->Write(sync, &batch);
}

}  // namespace

Status CopyDB(const std::string& from, const Options& from_options, const std::string& to,
              const Options& to_options) {
  if (from.empty() || to.empty()) return Status::InvalidArgument("CopyDB: a database name is empty");
  Options source_options = from_options;
  source_options.create_if_missing = false;
  source_options.error_if_exists = false;
  Options dest_options = to_options;
  dest_options.create_if_missing = true;
  dest_options.error_if_exists = true;

  // The source first: one in use is refused before anything is created.
  std::unique_ptr<DB> source;
  Status s = DB::Open(source_options, from, &source);
  if (!s.ok()) return s;
  std::unique_ptr<DB> dest;
  s = DB::Open(dest_options, to, &dest);
  if (!s.ok()) return s;  // DB::Open removes whatever it created
  s = CopyContents(source.get(), dest.get(), BatchBytes(dest_options));
  dest.reset();
  source.reset();
  if (s.ok()) return s;
  const Status destroyed = DestroyDB(to, dest_options);
  const std::string context = "copying " + from + " into " + to;
  const std::string detail =
      s.message() + (destroyed.ok() ? "" : "; the partial copy was not removed: " + destroyed.ToString());
  switch (s.code()) {
    case Status::Code::kNoSpace:
      return Status::NoSpace(context, detail);
    case Status::Code::kCorruption:
      return Status::Corruption(context, detail);
    case Status::Code::kInvalidArgument:
      return Status::InvalidArgument(context, detail);
    case Status::Code::kNotSupported:
      return Status::NotSupported(context, detail);
    case Status::Code::kNotFound:
      return Status::NotFound(context, detail);
    default:
      return Status::IOError(context, detail);
  }
}

}  // namespace jigsaw
