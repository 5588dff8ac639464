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
  const size_t worth = block.size() - block.size() / 8;  // at most this many bytes, or stored raw
  std::string out;
  StoredCodec codec = StoredCodec::kRaw;
  if (compression == Compression::kLZ4) {
    out.resize(static_cast<size_t>(LZ4_compressBound(static_cast<int>(block.size()))));
    const int n = LZ4_compress_default(block.data(), out.data(), static_cast<int>(block.size()),
                                       static_cast<int>(out.size()));
    if (n <= 0) return StoredCodec::kRaw;
    out.resize(static_cast<size_t>(n));
    codec = StoredCodec::kLZ4;
  } else {
    out.resize(ZSTD_compressBound(block.size()));
    const size_t n = ZSTD_compressCCtx(ThreadCompressionContext(), out.data(), out.size(), block.data(),
                                       block.size(), kZstdLevel);
    if (ZSTD_isError(n)) return StoredCodec::kRaw;
    out.resize(n);
    codec = StoredCodec::kZstd;
  }
  if (out.size() > worth) return StoredCodec::kRaw;
  *stored = std::move(out);
  return codec;
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
