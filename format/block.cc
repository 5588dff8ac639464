#include "format/block.h"

#include "format/classic_block.h"
#include "util/coding.h"
#include "format/keyset_block.h"
#include "format/keyset_v1.h"

namespace jigsaw {

const char* BlockFormatName(BlockFormat format) {
  switch (format) {
    case BlockFormat::kKeySet: return "keyset";
    case BlockFormat::kClassic: return "classic";
  }
  return "unknown";
}

std::unique_ptr<BlockBuilder> NewBlockBuilder(BlockFormat format, const BlockBuilderOptions& options, char* dest,
                                              size_t capacity) {
  switch (format) {
    case BlockFormat::kKeySet: return keyset::NewBuilder(options, dest, capacity);
    case BlockFormat::kClassic: return std::make_unique<classic::Builder>(options, dest, capacity);
  }
  return nullptr;
}

bool BuilderTakesRuns(BlockFormat format, const BlockBuilderOptions& options) {
  return format == BlockFormat::kKeySet && keyset::BuilderTakesRuns(options);
}

size_t MaxEntryFootprint(BlockFormat format, size_t key_size, size_t value_size) {
  switch (format) {
    case BlockFormat::kKeySet:
      // Either version: a version 1 entry of maximum height (the larger),
      // value with padding, offset, key head, and up to 64 bytes of
      // Bloom-filter growth or alignment.
      return keyset::v1::EntrySize(keyset::kMaxHeight, key_size) + AlignUp8(value_size) + 8 + 8 + 64 + 8;
    case BlockFormat::kClassic:
      // Three varints, the internal key, the value and a restart point.
      return 15 + key_size + 8 + value_size + 4;
  }
  return 0;
}

Status BlockReader::Open(BlockFormat format, const Slice& contents, const BlockReadOptions& options,
                         std::unique_ptr<BlockReader>* reader) {
  switch (format) {
    case BlockFormat::kKeySet: return keyset::OpenReader(contents, options, reader);
    case BlockFormat::kClassic: return classic::OpenReader(contents, options, reader);
  }
  return Status::InvalidArgument("unknown block format");
}

}  // namespace jigsaw
