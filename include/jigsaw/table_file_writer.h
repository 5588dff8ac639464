// TableFileWriter: builds a table file outside any database, for
// DB::IngestExternalFile (RocksDB's SstFileWriter). The file is an SSD table
// of KeySet blocks (docs/ssd_format.md) -- the same bytes the engine's own
// SSD tables hold -- whose entries all have sequence number 0; the ingest
// gives them their place among the database's writes.
//
// Thread-safety: one thread at a time.
#ifndef JIGSAW_INCLUDE_JIGSAW_TABLE_FILE_WRITER_H_
#define JIGSAW_INCLUDE_JIGSAW_TABLE_FILE_WRITER_H_

#include <cstdint>
#include <memory>
#include <string>

#include "jigsaw/export.h"
#include "jigsaw/options.h"
#include "jigsaw/slice.h"
#include "jigsaw/status.h"

namespace jigsaw {

// What a finished file holds.
struct ExternalFileInfo {
  std::string path;
  std::string smallest_key, largest_key;
  uint64_t entries = 0;
  uint64_t file_size = 0;
};

class JIGSAW_EXPORT TableFileWriter {
 public:
  // Uses options.comparator (the database's), ssd_block_size,
  // bloom_bits_per_key and file_system.
  explicit TableFileWriter(const Options& options);
  ~TableFileWriter();
  TableFileWriter(const TableFileWriter&) = delete;
  TableFileWriter& operator=(const TableFileWriter&) = delete;

  // Creates (or truncates) the file `path`.
  [[nodiscard]] Status Open(const std::string& path);
  // Keys in strictly increasing order of the comparator: InvalidArgument
  // for a key not after the last one (nothing is added), as for an empty
  // or over-long key or value (docs/format.md limits), or before Open.
  [[nodiscard]] Status Put(const Slice& key, const Slice& value);
  // A deletion: ingested, it hides the key's older versions.
  [[nodiscard]] Status Delete(const Slice& key);
  // Writes the index and footer and syncs and closes the file; *info (may
  // be null) describes it. InvalidArgument if nothing was added. The
  // writer may then Open another file.
  [[nodiscard]] Status Finish(ExternalFileInfo* info = nullptr);

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

}  // namespace jigsaw

#endif  // JIGSAW_INCLUDE_JIGSAW_TABLE_FILE_WRITER_H_
