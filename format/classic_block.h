// The classic block: a LevelDB-style data block codec, written for JigsawDB
// so that the engine and the profiler can measure the cost of encoding and
// decoding that the KeySet format avoids. docs/classic_format.md is the spec.
//
//   entry    := varint32 shared | varint32 non_shared | varint32 value_size
//               | internal_key[shared..] (non_shared bytes) | value
//   internal_key := user_key | fixed64(sequence << 8 | type)
//   restarts := fixed32 offset[num_restarts]   (entries with shared == 0)
//   trailer  := fixed32 num_entries | fixed32 num_restarts | fixed32 magic
//               | fixed32 version | fixed32 crc32c(everything before the crc)
#ifndef JIGSAW_FORMAT_CLASSIC_BLOCK_H_
#define JIGSAW_FORMAT_CLASSIC_BLOCK_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "format/block.h"

namespace jigsaw::classic {

inline constexpr uint32_t kMagic = 0x4C43474AU;  // bytes "JGCL"
inline constexpr uint32_t kFormatVersion = 1;
inline constexpr size_t kTrailerSize = 20;

class Builder final : public BlockBuilder {
 public:
  Builder(const BlockBuilderOptions& options, char* dest, size_t capacity);

  Status Add(const Slice& user_key, SequenceNumber sequence, ValueType type,
             const Slice& value) override;
  Status Finish(size_t* block_size) override;
  uint64_t num_entries() const override { return entries_; }
  Slice LastUserKey() const override { return Slice(last_key_.data(), last_key_.size() - 8); }
  size_t CurrentSize() const override { return size_ + 4 * restarts_.size() + kTrailerSize; }
  bool Restart() override;

 private:
  const BlockBuilderOptions options_;
  char* const dest_;
  const size_t capacity_;
  size_t size_ = 0;  // bytes of entries written
  std::vector<uint32_t> restarts_;
  int since_restart_ = 0;
  uint64_t entries_ = 0;
  std::string last_key_;  // internal key of the last entry
  std::string key_;       // scratch: internal key being added
  bool finished_ = false;
};

// Opens a classic reader; see BlockReader::Open.
Status OpenReader(const Slice& contents, const BlockReadOptions& options,
                  std::unique_ptr<BlockReader>* reader);

}  // namespace jigsaw::classic

#endif  // JIGSAW_FORMAT_CLASSIC_BLOCK_H_
