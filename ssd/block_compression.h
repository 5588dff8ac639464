// The one codec of compressed SSD table blocks (docs/ssd_format.md,
// "Compressed blocks"): LZ4 or Zstandard over a block's bytes, whole.
#ifndef JIGSAW_SSD_BLOCK_COMPRESSION_H_
#define JIGSAW_SSD_BLOCK_COMPRESSION_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "jigsaw/options.h"
#include "jigsaw/slice.h"
#include "jigsaw/status.h"

namespace jigsaw::ssd {

// The compression field of a table index entry (docs/ssd_format.md).
enum class StoredCodec : uint32_t { kRaw = 0, kLZ4 = 1, kZstd = 2 };

// Whether `code`, as read from an index entry, names a codec.
inline bool IsKnownCodec(uint32_t code) { return code <= static_cast<uint32_t>(StoredCodec::kZstd); }

// Compresses `block` with `compression` into *stored (replacing it) and
// returns the codec used: kRaw when compression is kNone or would not save
// at least an eighth of the block (*stored then holds nothing of use).
StoredCodec CompressBlock(Compression compression, const Slice& block, std::string* stored);

// Decompresses `stored`, of `codec` (not kRaw), into exactly `size` bytes at
// dest. Corruption if it does not decompress to exactly that many.
Status DecompressBlock(StoredCodec codec, const Slice& stored, char* dest, size_t size);

}  // namespace jigsaw::ssd

#endif  // JIGSAW_SSD_BLOCK_COMPRESSION_H_
