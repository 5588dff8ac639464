// TableBuilder: writes an SSD table -- its blocks, then the index (block
// entries and the table filter) and the footer (docs/ssd_format.md).
#include "ssd/table.h"

#include <algorithm>

#include "format/keyset_entry.h"
#include "format/keyset_pieces.h"
#include "ssd/table_internal.h"
#include "util/checksum.h"
#include "util/coding.h"
#include "util/profile_clock.h"

namespace jigsaw::ssd {

TableBuilder::TableBuilder(const BlockBuilderOptions& options, size_t block_size, WritableFile* file,
                           BlockFormat format)
    : options_(options), block_options_(options), block_size_(block_size), file_(file), format_(format) {
  // The table filter answers "may this key be here" once per table, before
  // any block is read; a filter in each block would repeat it.
  block_options_.bloom_bits_per_key = 0;
}

Status TableBuilder::Append(const Slice& data) {
  const uint64_t start = encode_ != nullptr ? SteadyNanos() : 0;
  Status s = file_->Append(data);
  if (s.ok()) {
    offset_ += data.size();
    const size_t pad = Pad8(offset_) - offset_;
    if (pad > 0) {
      static const char kZeros[8] = {};
      s = file_->Append(Slice(kZeros, pad));
      offset_ += pad;
    }
  }
  if (encode_ != nullptr) write_ns_ += SteadyNanos() - start;
  return s;
}

Status TableBuilder::Add(const Slice& user_key, SequenceNumber sequence, ValueType type, const Slice& value) {
  auto hash = [&] { return TimePart(WorkPart::kFilterChecksum, [&] { return bloom::KeyHash(user_key); }); };
  const uint32_t key_hash = encode_ != nullptr ? encode_->Run(hash) : hash();
  return Add(user_key, sequence, type, value, key_hash);
}

Status TableBuilder::Add(const Slice& user_key, SequenceNumber sequence, ValueType type, const Slice& value,
                         uint32_t key_hash) {
  const bool new_key = builder_ == nullptr || builder_->num_entries() == 0 || key_hash != last_key_hash_ ||
                       user_key != builder_->LastUserKey();
  if (builder_ != nullptr && new_key && builder_->CurrentSize() >= block_size_) {
    Status s = FlushBlock();
    if (!s.ok()) return s;
  }
  const size_t footprint = MaxEntryFootprint(format_, user_key.size(), value.size()) + 4096;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (builder_ == nullptr) {
      StartBlock(std::max(2 * block_size_, footprint));
      block_smallest_.assign(user_key.data(), user_key.size());
    }
    Status s = encode_ != nullptr
                   ? encode_->Run([&] { return builder_->AddWithHash(user_key, sequence, type, value, key_hash); })
                   : builder_->AddWithHash(user_key, sequence, type, value, key_hash);
    if (s.ok()) {
      if (new_key || key_hashes_.empty()) key_hashes_.push_back(key_hash);
      last_key_hash_ = key_hash;
      ++entries_;
      return s;
    }
    if (!s.IsNoSpace() || attempt == 1) return s;
    s = FlushBlock();  // one key's versions overflowed the block: continue in the next
    if (!s.ok()) return s;
  }
  return Status::OK();
}

void TableBuilder::StartBlock(size_t capacity) {
  if (buffer_.size() * 8 < capacity) {
    buffer_.assign(capacity / 8 + 1, 0);
    spare_.reset();  // over the old buffer
  }
  if (spare_ != nullptr && builder_capacity_ == capacity && spare_->Restart()) {
    builder_ = std::move(spare_);
    return;
  }
  builder_ = NewBlockBuilder(format_, block_options_, reinterpret_cast<char*>(buffer_.data()), capacity);
  builder_capacity_ = capacity;
}

bool TableBuilder::TakesRuns() const {
  return BuilderTakesRuns(format_, block_options_);
}

Status TableBuilder::AppendRun(const EntryRun& run, uint64_t table_size_limit, uint32_t* taken) {
  *taken = 0;
  if (!TakesRuns() || run.count == 0) return Status::OK();
  // The whole run if it can: block after block, each ended as Add would.
  // Only the block format's work is encode time (FlushBlock times its own
  // Finish; its file append is write time).
  EntryRun rest = run;
  bool fresh = false;  // the current block was just started
  while (rest.count > 0) {
    if (builder_ != nullptr && builder_->CurrentSize() >= block_size_) {
      Status s = FlushBlock();
      if (!s.ok()) return s;
    }
    if (*taken > 0 && EstimatedSize() >= table_size_limit) break;
    if (builder_ == nullptr) {
      StartBlock(2 * block_size_);
      Slice first;
      uint64_t tag = 0;
      keyset::RunEntry(rest, 0, &first, &tag);
      block_smallest_.assign(first.data(), first.size());
      fresh = true;
    }
    auto append = [&] {
      const uint32_t n = builder_->AppendRun(rest, block_size_);
      // One filter hash per user key (every entry of a run is a new key).
      if (n > 0) {
        TimePart(WorkPart::kFilterChecksum, [&] {
          keyset::ForEachRunKey(rest, n, [&](const Slice& key) { key_hashes_.push_back(bloom::KeyHash(key)); });
        });
        keyset::DropFront(&rest, n);
      }
      return n;
    };
    // Sampled: a merge of alternating inputs appends runs of one entry.
    const uint32_t n = encode_ != nullptr ? encode_->Run(append) : append();
    if (n == 0) {
      if (fresh) break;  // an entry alone overflows a block: the caller adds it
      Status s = FlushBlock();
      if (!s.ok()) return s;
      continue;
    }
    fresh = false;
    last_key_hash_ = key_hashes_.back();
    entries_ += n;
    *taken += n;
  }
  return Status::OK();
}

Status TableBuilder::AddWholeBlock(const Slice& block, const Slice& smallest, const Slice& largest) {
  if (format_ != BlockFormat::kKeySet || builder_ != nullptr || !index_.empty()) {
    return Status::InvalidArgument("a whole block must be the only block of a KeySet table");
  }
  keyset::BlockOutline outline;
  Status s = keyset::ReadOutline(block.data(), block.size(), options_.comparator, &outline);
  if (!s.ok()) return s;
  if (outline.bloom.lines > 0) {
    copied_filter_.assign(block.data() + outline.bloom_offset, size_t{outline.bloom.lines} * bloom::kLineBytes);
  }
  index_.push_back({offset_, static_cast<uint32_t>(block.size()), outline.count, smallest.ToString(),
                    largest.ToString()});
  index_bytes_ += IndexEntryBytes(index_.back(), kTableFormatVersion);
  entries_ += outline.count;
  return Append(block);
}

Status TableBuilder::FlushBlock() {
  if (builder_ == nullptr) return Status::OK();
  size_t size = 0;
  const uint64_t entries = builder_->num_entries();
  if (entries > 0) block_largest_ = builder_->LastUserKey().ToString();
  Status s = encode_ != nullptr ? encode_->RunExact([&] { return builder_->Finish(&size); }) : builder_->Finish(&size);
  spare_ = std::move(builder_);
  if (!s.ok()) return s;
  if (entries == 0) return Status::OK();
  index_.push_back({offset_, static_cast<uint32_t>(size), static_cast<uint32_t>(entries), block_smallest_,
                    block_largest_});
  index_bytes_ += IndexEntryBytes(index_.back(), kTableFormatVersion);
  const Slice block(reinterpret_cast<const char*>(buffer_.data()), size);
  // A large block is read in pieces or in place (ssd/table.h): never compressed.
  if (compression_ != Compression::kNone && size <= kLargeBlockBytes) {
    // KeySet blocks split with LZ4 (their values in groups, a Get
    // decompresses one); Zstandard and other formats whole.
    auto compress = [&] {
      uint64_t region_begin = 0, region_end = 0;
      if (format_ == BlockFormat::kKeySet && compression_ == Compression::kLZ4 &&
          keyset::ValueRegion(block, block.size(), block_options_.comparator, &region_begin, &region_end).ok() &&
          region_end - region_begin <= keyset::kMaxKeyPartValueRegion) {
        return CompressBlockSplit(block, region_begin, region_end, &stored_);
      }
      return CompressBlock(compression_, block, &stored_);
    };
    const StoredCodec codec = encode_ != nullptr ? encode_->RunExact(compress) : compress();
    if (codec != StoredCodec::kRaw) {
      index_.back().codec = codec;
      index_.back().stored_size = static_cast<uint32_t>(stored_.size());
      return Append(stored_);
    }
  }
  return Append(block);
}

uint64_t TableBuilder::EstimatedSize() const {
  uint64_t size = offset_ + kTableFooterSize + 8 + index_bytes_;
  if (builder_ != nullptr) size += builder_->CurrentSize();
  return size;
}

void TableBuilder::EncodeIndex(std::string* index) const {
  const bloom::Geometry geometry =
      !copied_filter_.empty()
          ? bloom::Geometry{static_cast<uint32_t>(copied_filter_.size() / bloom::kLineBytes), bloom::kProbes}
          : bloom::ChooseGeometry(key_hashes_.size(), options_.bloom_bits_per_key);
  EncodeIndexEntries(index_, geometry.lines, TableVersionFor(index_), index);
  TimePart(WorkPart::kFilterChecksum, [&] {
    if (!copied_filter_.empty()) {
      index->append(copied_filter_);
    } else if (geometry.lines > 0) {
      const size_t filter_offset = index->size();
      index->resize(filter_offset + size_t{geometry.lines} * bloom::kLineBytes, '\0');
      bloom::AddHashes(index->data() + filter_offset, geometry, key_hashes_.data(), key_hashes_.size());
    }
  });
}

Status TableBuilder::Finish(TableInfo* info) {
  Status s = FlushBlock();
  if (!s.ok()) return s;
  std::string index;
  if (encode_ != nullptr) {
    encode_->RunExact([&] { EncodeIndex(&index); });
  } else {
    EncodeIndex(&index);
  }
  const uint64_t index_offset = offset_;
  s = Append(index);
  if (!s.ok()) return s;
  TableFooter footer;
  footer.version = TableVersionFor(index_);
  footer.block_format = static_cast<uint32_t>(format_);
  footer.index_offset = index_offset;
  footer.index_size = index.size();
  footer.entries = entries_;
  footer.index_crc = crc32c::Value(index.data(), index.size());
  std::string encoded;
  footer.EncodeTo(&encoded);
  s = Append(encoded);
  if (!s.ok()) return s;
  info->file_size = offset_;
  info->entries = entries_;
  info->blocks = static_cast<uint32_t>(index_.size());
  info->smallest = index_.empty() ? std::string() : index_.front().smallest;
  info->largest = index_.empty() ? std::string() : index_.back().largest;
  return Status::OK();
}

}  // namespace jigsaw::ssd
