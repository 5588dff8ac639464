#include "ssd/block_compression.h"

#include <lz4.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>

#include "util/coding.h"

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

// Appends `n` bytes at `src` compressed as one LZ4 frame to *out; false if
// LZ4 failed.
bool AppendLZ4Frame(const char* src, size_t n, std::string* out) {
  if (n > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) return false;
  const size_t at = out->size();
  out->resize(at + static_cast<size_t>(LZ4_compressBound(static_cast<int>(n))));
  const int written =
      LZ4_compress_default(src, out->data() + at, static_cast<int>(n), static_cast<int>(out->size() - at));
  if (written <= 0) return false;
  out->resize(at + static_cast<size_t>(written));
  return true;
}

// Decompresses one frame of a split block (LZ4) into exactly `size` bytes
// at dest; or, with `wanted` < size, only its first `wanted` bytes.
Status DecompressFrame(const Slice& frame, char* dest, size_t size, size_t wanted) {
  if (wanted >= size) return DecompressBlock(StoredCodec::kLZ4, frame, dest, size);
  if (frame.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE) || size > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) {
    return Status::Corruption("LZ4 block too large");
  }
  const int n = LZ4_decompress_safe_partial(frame.data(), dest, static_cast<int>(frame.size()),
                                            static_cast<int>(wanted), static_cast<int>(size));
  if (n < 0 || static_cast<size_t>(n) != wanted) return Status::Corruption("LZ4 block does not decompress");
  return Status::OK();
}

}  // namespace

const char* CodecName(StoredCodec codec) {
  switch (codec) {
    case StoredCodec::kRaw:
      return "uncompressed";
    case StoredCodec::kLZ4:
      return "LZ4";
    case StoredCodec::kZstd:
      return "Zstandard";
    case StoredCodec::kLZ4Split:
      return "LZ4, values in groups";
  }
  return "unknown";
}

Status SplitHead::Parse(const Slice& stored, uint64_t stored_size, uint64_t block_size, SplitHead* head) {
  auto corrupt = [](const char* what) { return Status::Corruption("split block", what); };
  if (stored.size() < kFixedBytes) return corrupt("head truncated");
  const char* p = stored.data();
  SplitHead h;
  h.block_size_ = block_size;
  h.region_begin_ = DecodeFixed32(p);
  h.region_size_ = DecodeFixed32(p + 4);
  h.key_part_stored_ = DecodeFixed32(p + 8);
  h.group_count_ = DecodeFixed32(p + 12);
  if (h.region_begin_ + h.region_size_ > block_size) return corrupt("region outside the block");
  if (h.group_count_ != (h.region_size_ + kValueGroupBytes - 1) / kValueGroupBytes) return corrupt("group count");
  if (stored.size() < h.head_size()) return corrupt("head truncated");
  if (h.key_part_stored_ == 0) return corrupt("empty key part");
  h.group_ends_ = p + kFixedBytes;
  uint32_t previous = 0;
  for (uint32_t g = 0; g < h.group_count_; ++g) {
    const uint32_t end = DecodeFixed32(h.group_ends_ + 4 * size_t{g});
    if (end <= previous) return corrupt("group frames out of order");
    previous = end;
  }
  if (h.GroupBegin(h.group_count_) != stored_size) return corrupt("frames disagree with the stored size");
  *head = h;
  return Status::OK();
}

uint64_t SplitHead::GroupEnd(uint32_t g) const { return DecodeFixed32(group_ends_ + 4 * size_t{g}); }

uint64_t SplitHead::GroupSize(uint32_t g) const {
  return std::min<uint64_t>(kValueGroupBytes, region_size_ - uint64_t{g} * kValueGroupBytes);
}

StoredCodec CompressBlockSplit(const Slice& block, uint64_t region_begin, uint64_t region_end, std::string* stored) {
  if (region_begin > region_end || region_end > block.size() || block.size() > 0xffffffffu) {
    return StoredCodec::kRaw;
  }
  const uint64_t region_size = region_end - region_begin;
  const uint32_t groups = static_cast<uint32_t>((region_size + kValueGroupBytes - 1) / kValueGroupBytes);
  // The head, its group ends filled in below; then the key part's frame.
  stored->assign(16 + 4 * size_t{groups}, '\0');
  EncodeFixed32(stored->data(), static_cast<uint32_t>(region_begin));
  EncodeFixed32(stored->data() + 4, static_cast<uint32_t>(region_size));
  EncodeFixed32(stored->data() + 12, groups);
  thread_local std::string key_part;  // reused: a builder compresses block after block
  key_part.assign(block.data(), region_begin);
  key_part.append(block.data() + region_end, block.size() - region_end);
  const size_t key_frame_at = stored->size();
  if (!AppendLZ4Frame(key_part.data(), key_part.size(), stored)) return StoredCodec::kRaw;
  EncodeFixed32(stored->data() + 8, static_cast<uint32_t>(stored->size() - key_frame_at));
  const size_t groups_at = stored->size();
  for (uint32_t g = 0; g < groups; ++g) {
    const uint64_t begin = region_begin + uint64_t{g} * kValueGroupBytes;
    const uint64_t n = std::min<uint64_t>(kValueGroupBytes, region_end - begin);
    if (!AppendLZ4Frame(block.data() + begin, n, stored)) return StoredCodec::kRaw;
    EncodeFixed32(stored->data() + 16 + 4 * size_t{g}, static_cast<uint32_t>(stored->size() - groups_at));
  }
  if (stored->size() > block.size() - block.size() / 8) return StoredCodec::kRaw;  // saves less than an eighth
  return StoredCodec::kLZ4Split;
}

Status DecompressKeyPart(const SplitHead& head, const Slice& frame, char* dest) {
  const size_t size = head.key_part_size();
  return DecompressFrame(frame, dest, size, size);
}

Status DecompressGroups(const SplitHead& head, const Slice& frames, uint32_t first, uint64_t end, char* dest) {
  const uint64_t begin = uint64_t{first} * kValueGroupBytes;
  if (end <= begin || end > head.region_size()) return Status::Corruption("split block", "no such value group");
  const auto last = static_cast<uint32_t>((end - 1) / kValueGroupBytes);
  if (frames.size() < head.GroupBegin(last + 1) - head.GroupBegin(first)) {
    return Status::Corruption("split block", "group frames truncated");
  }
  for (uint32_t g = first; g <= last; ++g) {
    const Slice frame(frames.data() + (head.GroupBegin(g) - head.GroupBegin(first)),
                      head.GroupBegin(g + 1) - head.GroupBegin(g));
    const uint64_t at = uint64_t{g} * kValueGroupBytes;
    Status s = DecompressFrame(frame, dest + (at - begin), head.GroupSize(g), end - at);
    if (!s.ok()) return s;
  }
  return Status::OK();
}

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
  if (IsSplitCodec(codec)) {
    SplitHead head;
    Status s = SplitHead::Parse(stored, stored.size(), size, &head);
    if (!s.ok()) return s;
    // The key part into the block's tail, its first region_begin bytes
    // then moved to the front: the region sits between them.
    const uint64_t begin = head.region_begin(), region = head.region_size();
    s = DecompressKeyPart(head, Slice(stored.data() + head.head_size(), head.key_part_end() - head.head_size()),
                          dest + region);
    if (!s.ok()) return s;
    std::memmove(dest, dest + region, begin);
    if (head.group_count() == 0) return Status::OK();
    const Slice frames(stored.data() + head.GroupBegin(0), stored.size() - head.GroupBegin(0));
    return DecompressGroups(head, frames, 0, head.region_size(), dest + begin);
  }
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
