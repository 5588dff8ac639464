// Files whose bytes are in memory rather than in a file system: a table
// file built into a DRAM buffer, and one read in place where it lies (an
// SSD table image in a pmem pool object, docs/pool_layout.md).
//
// Thread-safety: a MemoryRandomAccessFile may be read concurrently; a
// StringWritableFile is used by one thread.
#ifndef JIGSAW_UTIL_MEMORY_FILE_H_
#define JIGSAW_UTIL_MEMORY_FILE_H_

#include <algorithm>
#include <cstring>
#include <string>

#include "jigsaw/file_system.h"

namespace jigsaw {

// Appends into *contents (not owned; must outlive the file). Sync and Close
// do nothing: nothing leaves memory.
class StringWritableFile final : public WritableFile {
 public:
  explicit StringWritableFile(std::string* contents) : contents_(contents) {}
  Status Append(const Slice& data) override {
    contents_->append(data.data(), data.size());
    return Status::OK();
  }
  Status Sync() override { return Status::OK(); }
  Status Close() override { return Status::OK(); }
  uint64_t Size() const override { return contents_->size(); }

 private:
  std::string* const contents_;
};

// The `bytes` (not owned; they must stay mapped and unchanged while the
// file lives) as a read-only file: Read copies from them, Mapping() is
// their address.
class MemoryRandomAccessFile final : public RandomAccessFile {
 public:
  explicit MemoryRandomAccessFile(const Slice& bytes) : bytes_(bytes) {}
  Status Read(uint64_t offset, size_t n, char* scratch, Slice* result) const override {
    if (offset >= bytes_.size()) {
      *result = Slice();
      return Status::OK();
    }
    n = static_cast<size_t>(std::min<uint64_t>(n, bytes_.size() - offset));
    std::memcpy(scratch, bytes_.data() + offset, n);
    *result = Slice(scratch, n);
    return Status::OK();
  }
  uint64_t Size() const override { return bytes_.size(); }
  const char* Mapping() override { return bytes_.data(); }

 private:
  const Slice bytes_;
};

}  // namespace jigsaw

#endif  // JIGSAW_UTIL_MEMORY_FILE_H_
