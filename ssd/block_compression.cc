#include "ssd/block_compression.h"

#include <lz4.h>
#include <zstd.h>

namespace jigsaw::ssd {
namespace {

// Zstandard's fastest standard level: SSD tables are rewritten by every
// compaction, so its speed, not its last percent of ratio, is what counts.
constexpr int kZstdLevel = 1;

// One context per thread: creating one per block costs more than the block.
ZSTD_CCtx* ThreadCompressionContext() {
  thread_local struct Holder {
    ZSTD_CCtx* ctx = ZSTD_createCCtx();
    ~Holder() { ZSTD_freeCCtx(ctx); }
  } holder;
  return holder.ctx;
}
ZSTD_DCtx* ThreadDecompressionContext() {
  thread_local struct Holder {
    ZSTD_DCtx* ctx = ZSTD_createDCtx();
    ~Holder() { ZSTD_freeDCtx(ctx); }
  } holder;
  return holder.ctx;
}

}  // namespace

StoredCodec CompressBlock(Compression compression, const Slice& block, std::string* stored) {
  if (compression == Compression::kNone || block.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) {
    return StoredCodec::kRaw;
  }
  // Into *stored, whose capacity a builder reuses from block to block.
  size_t n = 0;
  if (compression == Compression::kLZ4) {
    stored->resize(static_cast<size_t>(LZ4_compressBound(static_cast<int>(block.size()))));
    const int written = LZ4_compress_default(block.data(), stored->data(), static_cast<int>(block.size()),
                                             static_cast<int>(stored->size()));
    if (written <= 0) return StoredCodec::kRaw;
    n = static_cast<size_t>(written);
  } else {
    stored->resize(ZSTD_compressBound(block.size()));
    n = ZSTD_compressCCtx(ThreadCompressionContext(), stored->data(), stored->size(), block.data(), block.size(),
                          kZstdLevel);
    if (ZSTD_isError(n)) return StoredCodec::kRaw;
  }
  if (n > block.size() - block.size() / 8) return StoredCodec::kRaw;  // saves less than an eighth
  stored->resize(n);
  return compression == Compression::kLZ4 ? StoredCodec::kLZ4 : StoredCodec::kZstd;
}

Status DecompressBlock(StoredCodec codec, const Slice& stored, char* dest, size_t size) {
  if (codec == StoredCodec::kLZ4) {
    if (stored.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE) || size > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) {
      return Status::Corruption("LZ4 block too large");
    }
    const int n = LZ4_decompress_safe(stored.data(), dest, static_cast<int>(stored.size()), static_cast<int>(size));
    if (n < 0 || static_cast<size_t>(n) != size) return Status::Corruption("LZ4 block does not decompress");
    return Status::OK();
  }
  if (codec == StoredCodec::kZstd) {
    const size_t n = ZSTD_decompressDCtx(ThreadDecompressionContext(), dest, size, stored.data(), stored.size());
    if (ZSTD_isError(n) || n != size) return Status::Corruption("Zstandard block does not decompress");
    return Status::OK();
  }
  return Status::Corruption("unknown block compression");
}

}  // namespace jigsaw::ssd
