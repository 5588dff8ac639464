// The version 2 piece reader: point lookups in a block read in pieces
// (format/keyset_v2.h, PieceReader).
#include "format/keyset_v2.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include "util/coding.h"

namespace jigsaw::keyset::v2 {

// ---------------------------------------------------------------------------
// PieceReader

namespace {

// Above this many samples sharing a key's head (groups of 16 entries to
// read), a lookup asks for the whole block instead.
constexpr uint32_t kMaxGroupsPerPiece = 8;

}  // namespace

Status PieceReader::Open(const BlockBytes& bytes, uint64_t block_size, const Comparator* comparator,
                         std::unique_ptr<PieceReader>* result) {
  char header[kHeaderSize];
  if (block_size < kHeaderSize) return Status::Corruption("KeySet block truncated");
  Status s = bytes.Read(0, kHeaderSize, header);
  if (!s.ok()) return s;
  std::unique_ptr<PieceReader> r(new PieceReader());
  s = ParseHeader(header, block_size, comparator, &r->layout_);
  if (!s.ok()) return s;
  const HeaderLayout& l = r->layout_;
  if (!l.key_heads) return Status::NotSupported("a KeySet block without key heads is read whole");
  r->comparator_ = comparator;
  const uint64_t m = SampleCount(l.count);
  if (m > 0) {
    // Samples and heads are adjacent: one read.
    const uint64_t samples_bytes = AlignUp8(4 * m);
    std::vector<uint64_t> buffer((samples_bytes + 8 * m) / 8);
    char* p = reinterpret_cast<char*>(buffer.data());
    s = bytes.Read(l.samples_offset, samples_bytes + 8 * m, p);
    if (!s.ok()) return s;
    r->samples_.resize(m);
    r->heads_.resize(m);
    for (uint64_t j = 0; j < m; ++j) {
      const uint32_t offset = DecodeFixed32(p + 4 * j);
      if (offset < kHeadNodeSize || offset > l.keyset_size - kMinEntrySize || offset % 8 != 0 ||
          (j > 0 && offset <= r->samples_[j - 1])) {
        return Status::Corruption("KeySet block sample " + std::to_string(j) + " is out of place");
      }
      r->samples_[j] = offset;
      r->heads_[j] = DecodeFixed64(p + samples_bytes + 8 * j);
    }
  }
  if (l.key_head_skip > 0) {
    // The common prefix: the start of the first key.
    if (m == 0) return Status::Corruption("KeySet block first entry does not hold the common key prefix");
    const uint64_t first = r->samples_[0];
    const uint64_t want = std::min<uint64_t>(kEntryHeaderSize + 4 * kMaxHeight + l.key_head_skip,
                                             l.keyset_size - first);
    std::string entry(want, '\0');
    s = bytes.Read(l.keyset_offset + first, want, entry.data());
    if (!s.ok()) return s;
    const uint32_t shape = DecodeFixed32(entry.data() + ent::kShape);
    const uint64_t key_at = kEntryHeaderSize + 4 * uint64_t{ShapeHeight(shape)};
    if ((shape & ~kShapeKnownBits) != 0 || ShapeKeySize(shape) < l.key_head_skip ||
        key_at + l.key_head_skip > want) {
      return Status::Corruption("KeySet block first entry does not hold the common key prefix");
    }
    r->common_prefix_.assign(entry.data() + key_at, l.key_head_skip);
  }
  *result = std::move(r);
  return Status::OK();
}

uint64_t PieceReader::memory_usage() const {
  return sizeof(*this) + 4 * samples_.capacity() + 8 * heads_.capacity() + common_prefix_.capacity();
}

double PieceReader::ApproximatePosition(const Slice& user_key) const {
  const uint64_t size = layout_.keyset_size;
  if (samples_.empty() || size == 0) return 0;
  // Every key starts with the common prefix: a key that sorts before it
  // (or is a part of it) is before them all, one after it after them all.
  const size_t skip = layout_.key_head_skip;
  const int c = Slice(user_key.data(), std::min(skip, user_key.size())).compare(Slice(common_prefix_));
  if (c < 0 || (c == 0 && user_key.size() < skip)) return 0;
  if (c > 0) return 1;
  const uint64_t head = KeyHead(user_key, skip);
  const size_t lo = static_cast<size_t>(std::lower_bound(heads_.begin(), heads_.end(), head) - heads_.begin());
  return static_cast<double>(lo < samples_.size() ? samples_[lo] : size) / static_cast<double>(size);
}

Status PieceReader::Get(const BlockBytes& bytes, const Slice& user_key, SequenceNumber snapshot, ValueType* type,
                        std::string* value, SequenceNumber* sequence, bool* whole_block) const {
  *whole_block = false;
  const HeaderLayout& l = layout_;
  const uint32_t m = static_cast<uint32_t>(samples_.size());
  if (m == 0) return Status::NotFound(Slice());
  // Every key starts with the common prefix: a key without it is not here.
  const size_t skip = l.key_head_skip;
  if (user_key.size() < skip || std::memcmp(user_key.data(), common_prefix_.data(), skip) != 0) {
    return Status::NotFound(Slice());
  }
  // Entries before sample `lo` have smaller keys, entries from sample `hi`
  // on larger ones: the key's versions lie from sample lo - 1 (whose group
  // may end with them) up to sample hi.
  const uint64_t target_head = KeyHead(user_key, skip);
  const uint32_t lo = static_cast<uint32_t>(std::lower_bound(heads_.begin(), heads_.end(), target_head) - heads_.begin());
  const uint32_t hi = static_cast<uint32_t>(std::upper_bound(heads_.begin() + lo, heads_.end(), target_head) - heads_.begin());
  if (hi - lo > kMaxGroupsPerPiece) {
    *whole_block = true;
    return Status::NotFound(Slice());
  }
  const uint64_t begin = samples_[lo == 0 ? 0 : lo - 1];
  const uint64_t end = hi < m ? samples_[hi] : l.keyset_size;
  if (end <= begin) return Status::NotFound(Slice());
  std::vector<uint64_t> buffer((end - begin + 7) / 8);
  char* piece = reinterpret_cast<char*>(buffer.data());
  Status s = bytes.Read(l.keyset_offset + begin, end - begin, piece);
  if (!s.ok()) return s;

  const uint64_t target_tag = PackTag(snapshot, ValueType::kValue);
  auto corrupt = [] { return Status::Corruption("KeySet block has a malformed entry"); };
  uint64_t at = 0;  // in the piece
  const uint64_t piece_size = end - begin;
  for (;;) {
    if (piece_size - at < kEntryHeaderSize) return corrupt();
    const char* e = piece + at;
    const uint32_t shape = DecodeFixed32(e + ent::kShape);
    const uint32_t height = ShapeHeight(shape);
    const uint64_t key_at = at + kEntryHeaderSize + 4 * uint64_t{height};
    const uint32_t key_size = ShapeKeySize(shape);
    const uint64_t tag = DecodeFixed64(e + ent::kTag);
    if ((shape & ~kShapeKnownBits) != 0 || key_at + key_size > piece_size || (tag & 0xff) > kMaxValueTypeByte) {
      return corrupt();
    }
    const Slice key(piece + key_at, key_size);
    if (CompareInternal(comparator_, key, tag, user_key, target_tag) >= 0) {
      if (key != user_key) return Status::NotFound(Slice());
      *type = TagType(tag);
      *sequence = TagSequence(tag);
      if (*type != ValueType::kValue) return Status::OK();
      const uint64_t index = DecodeFixed64(e + ent::kIndex);
      const uint64_t value_offset = index & 0xffffffff;
      const uint64_t value_size = index >> 32;
      if (value_offset + value_size > l.value_buffer_size) return corrupt();
      value->resize(value_size);
      return value_size == 0 ? Status::OK() : bytes.Read(kHeaderSize + value_offset, value_size, value->data());
    }
    const uint32_t next = LinkOf(e, 0);
    if (next == 0) return Status::NotFound(Slice());  // the last entry
    at += next;
    if (at == piece_size) return Status::NotFound(Slice());  // the entry there sorts after the key
    if (at > piece_size) return corrupt();
  }
}

}  // namespace jigsaw::keyset::v2
