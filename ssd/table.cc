#include "ssd/table.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <utility>

#include "format/keyset_v2.h"
#include "ssd/mapped_read.h"
#include "table/concatenating_iterator.h"
#include "util/buffer_recycler.h"
#include "util/checksum.h"
#include "util/coding.h"
#include "util/profile_clock.h"

namespace jigsaw::ssd {

namespace {

constexpr uint64_t kTableMagic = 0x315453535753474AULL;  // bytes "JGSWSST1"
constexpr size_t kIndexEntryFixed = 8 + 4 + 4 + 4 + 4;

size_t Pad8(size_t n) { return (n + 7) & ~size_t{7}; }

thread_local uint64_t t_read_ns = 0;

void PutFixed32(std::string* dst, uint32_t v) {
  char buf[4];
  EncodeFixed32(buf, v);
  dst->append(buf, 4);
}
void PutFixed64(std::string* dst, uint64_t v) {
  char buf[8];
  EncodeFixed64(buf, v);
  dst->append(buf, 8);
}

// The bytes of one block of a table file, for keyset::v2::PieceReader.
class FileBlockBytes final : public keyset::v2::BlockBytes {
 public:
  FileBlockBytes(const RandomAccessFile* file, uint64_t block_offset, uint64_t block_size, bool timed)
      : file_(file), block_offset_(block_offset), block_size_(block_size), timed_(timed) {}
  Status Read(uint64_t offset, uint64_t size, char* dest) const override {
    if (offset > block_size_ || size > block_size_ - offset) return Status::Corruption("read past the block");
    Slice got;
    const uint64_t start = timed_ ? SteadyNanos() : 0;
    Status s = file_->Read(block_offset_ + offset, size, dest, &got);
    if (timed_) t_read_ns += SteadyNanos() - start;
    if (!s.ok()) return s;
    if (got.size() != size) return Status::Corruption("block truncated");
    if (got.data() != dest) std::memcpy(dest, got.data(), size);
    return Status::OK();
  }

 private:
  const RandomAccessFile* const file_;
  const uint64_t block_offset_, block_size_;
  const bool timed_;
};

}  // namespace

uint64_t ThreadReadNanos() { return t_read_ns; }

// ---------------------------------------------------------------------------
// TableBuilder

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
  const uint32_t key_hash =
      encode_ != nullptr ? encode_->Run([&] { return bloom::KeyHash(user_key); }) : bloom::KeyHash(user_key);
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
      const size_t capacity = std::max(2 * block_size_, footprint);
      if (buffer_.size() * 8 < capacity) buffer_.assign(capacity / 8 + 1, 0);
      builder_ = NewBlockBuilder(format_, block_options_, reinterpret_cast<char*>(buffer_.data()), capacity);
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

bool TableBuilder::TakesRuns() const {
  return format_ == BlockFormat::kKeySet && block_options_.keyset_version == keyset::v2::kFormatVersion;
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
      const size_t capacity = 2 * block_size_;
      if (buffer_.size() * 8 < capacity) buffer_.assign(capacity / 8 + 1, 0);
      builder_ = NewBlockBuilder(format_, block_options_, reinterpret_cast<char*>(buffer_.data()), capacity);
      Slice first;
      uint64_t tag = 0;
      keyset::v2::RunEntry(rest, 0, &first, &tag);
      block_smallest_.assign(first.data(), first.size());
      fresh = true;
    }
    auto append = [&] {
      const uint32_t n = static_cast<keyset::v2::Builder*>(builder_.get())->AppendRun(rest, block_size_);
      // One filter hash per user key (every entry of a run is a new key).
      if (n > 0) {
        keyset::v2::ForEachRunKey(rest, n, [&](const Slice& key) { key_hashes_.push_back(bloom::KeyHash(key)); });
        keyset::v2::DropFront(&rest, n);
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
  keyset::v2::HeaderLayout layout;
  Status s = keyset::v2::ParseHeader(block.data(), block.size(), options_.comparator, &layout);
  if (!s.ok()) return s;
  if (layout.bloom.lines > 0) {
    copied_filter_.assign(block.data() + layout.bloom_offset, size_t{layout.bloom.lines} * bloom::kLineBytes);
  }
  index_.push_back({offset_, static_cast<uint32_t>(block.size()), layout.count, smallest.ToString(),
                    largest.ToString()});
  index_bytes_ += kIndexEntryFixed + Pad8(smallest.size() + largest.size());
  entries_ += layout.count;
  return Append(block);
}

Status TableBuilder::FlushBlock() {
  if (builder_ == nullptr) return Status::OK();
  size_t size = 0;
  const uint64_t entries = builder_->num_entries();
  if (entries > 0) block_largest_ = builder_->LastUserKey().ToString();
  Status s = encode_ != nullptr ? encode_->RunExact([&] { return builder_->Finish(&size); }) : builder_->Finish(&size);
  builder_.reset();
  if (!s.ok()) return s;
  if (entries == 0) return Status::OK();
  index_.push_back({offset_, static_cast<uint32_t>(size), static_cast<uint32_t>(entries), block_smallest_,
                    block_largest_});
  index_bytes_ += kIndexEntryFixed + Pad8(block_smallest_.size() + block_largest_.size());
  return Append(Slice(reinterpret_cast<const char*>(buffer_.data()), size));
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
  PutFixed32(index, static_cast<uint32_t>(index_.size()));
  PutFixed32(index, geometry.lines);
  for (const TableIndexEntry& e : index_) {
    PutFixed64(index, e.offset);
    PutFixed32(index, e.size);
    PutFixed32(index, e.entries);
    PutFixed32(index, static_cast<uint32_t>(e.smallest.size()));
    PutFixed32(index, static_cast<uint32_t>(e.largest.size()));
    index->append(e.smallest);
    index->append(e.largest);
    index->resize(Pad8(index->size()), '\0');
  }
  if (!copied_filter_.empty()) {
    index->append(copied_filter_);
  } else if (geometry.lines > 0) {
    const size_t filter_offset = index->size();
    index->resize(filter_offset + size_t{geometry.lines} * bloom::kLineBytes, '\0');
    for (uint32_t hash : key_hashes_) bloom::AddHash(index->data() + filter_offset, geometry, hash);
  }
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
  std::string footer;
  PutFixed64(&footer, kTableMagic);
  PutFixed32(&footer, kTableFormatVersion);
  PutFixed32(&footer, static_cast<uint32_t>(format_));
  PutFixed64(&footer, index_offset);
  PutFixed64(&footer, index.size());
  PutFixed64(&footer, entries_);
  PutFixed32(&footer, crc32c::Value(index.data(), index.size()));
  PutFixed32(&footer, crc32c::Value(footer.data(), footer.size()));
  s = Append(footer);
  if (!s.ok()) return s;
  info->file_size = offset_;
  info->entries = entries_;
  info->blocks = static_cast<uint32_t>(index_.size());
  info->smallest = index_.empty() ? std::string() : index_.front().smallest;
  info->largest = index_.empty() ? std::string() : index_.back().largest;
  return Status::OK();
}

// ---------------------------------------------------------------------------
// SsdTable

Status SsdTable::Corrupt(const std::string& what) const { return Status::Corruption("table " + path_, what); }

Status SsdTable::Open(const SsdTableOptions& options, std::unique_ptr<RandomAccessFile> file, uint64_t number,
                      const std::string& path, std::unique_ptr<SsdTable>* result) {
  std::unique_ptr<SsdTable> t(new SsdTable());
  t->options_ = options;
  t->file_ = std::move(file);
  t->number_ = number;
  t->path_ = path;
  const uint64_t size = t->file_->Size();
  if (size < kTableFooterSize) return t->Corrupt("file too short for a footer");
  char footer[kTableFooterSize];
  Slice got;
  Status s = t->file_->Read(size - kTableFooterSize, kTableFooterSize, footer, &got);
  if (!s.ok()) return s;
  if (got.size() != kTableFooterSize) return t->Corrupt("short read of the footer");
  if (got.data() != footer) std::memcpy(footer, got.data(), kTableFooterSize);
  if (DecodeFixed64(footer) != kTableMagic) return t->Corrupt("bad magic (not a JigsawDB table)");
  if (DecodeFixed32(footer + 44) != crc32c::Value(footer, 44)) return t->Corrupt("footer checksum mismatch");
  const uint32_t version = DecodeFixed32(footer + 8);
  if (version > kTableFormatVersion) {
    return Status::NotSupported("table " + path, "format version " + std::to_string(version) + " is newer than " +
                                                     std::to_string(kTableFormatVersion));
  }
  const uint32_t format = DecodeFixed32(footer + 12);
  if (version == 0 || (format != static_cast<uint32_t>(BlockFormat::kKeySet) &&
                       format != static_cast<uint32_t>(BlockFormat::kClassic))) {
    return t->Corrupt("unknown version or block format");
  }
  t->format_ = static_cast<BlockFormat>(format);
  const uint64_t index_offset = DecodeFixed64(footer + 16);
  const uint64_t index_size = DecodeFixed64(footer + 24);
  t->entries_ = DecodeFixed64(footer + 32);
  if (index_offset > size - kTableFooterSize || index_size != size - kTableFooterSize - index_offset ||
      index_size < 8) {
    return t->Corrupt("index out of bounds");
  }
  std::string index(index_size, '\0');
  s = t->file_->Read(index_offset, index_size, index.data(), &got);
  if (!s.ok()) return s;
  if (got.size() != index_size) return t->Corrupt("short read of the index");
  if (got.data() != index.data()) std::memcpy(index.data(), got.data(), index_size);
  if (crc32c::Value(index.data(), index.size()) != DecodeFixed32(footer + 40)) {
    return t->Corrupt("index checksum mismatch");
  }
  const uint32_t blocks = DecodeFixed32(index.data());
  const uint32_t filter_lines = DecodeFixed32(index.data() + 4);
  size_t pos = 8;
  uint64_t entries = 0;
  for (uint32_t i = 0; i < blocks; ++i) {
    if (index.size() - pos < kIndexEntryFixed) return t->Corrupt("index truncated");
    TableIndexEntry e;
    e.offset = DecodeFixed64(index.data() + pos);
    e.size = DecodeFixed32(index.data() + pos + 8);
    e.entries = DecodeFixed32(index.data() + pos + 12);
    const uint32_t small_len = DecodeFixed32(index.data() + pos + 16);
    const uint32_t large_len = DecodeFixed32(index.data() + pos + 20);
    pos += kIndexEntryFixed;
    if (index.size() - pos < uint64_t{small_len} + large_len) return t->Corrupt("index truncated");
    e.smallest.assign(index.data() + pos, small_len);
    e.largest.assign(index.data() + pos + small_len, large_len);
    pos = Pad8(pos + small_len + large_len);
    const uint64_t end = t->index_.empty() ? 0 : t->index_.back().offset + t->index_.back().size;
    if (e.offset % 8 != 0 || e.offset < end || e.offset + e.size > index_offset) {
      return t->Corrupt("block " + std::to_string(i) + " out of bounds");
    }
    entries += e.entries;
    t->index_.push_back(std::move(e));
  }
  if (entries != t->entries_) return t->Corrupt("entry counts of the index and footer differ");
  if (index.size() - pos != uint64_t{filter_lines} * bloom::kLineBytes) return t->Corrupt("filter size mismatch");
  if (filter_lines > 0) {
    t->filter_.assign(index.data() + pos, index.size() - pos);
    t->filter_geometry_.lines = filter_lines;
    t->filter_geometry_.probes = bloom::kProbes;
  }
  if (!t->index_.empty()) {
    t->smallest_ = t->index_.front().smallest;
    t->largest_ = t->index_.back().largest;
  }
  if (t->options_.comparator == BytewiseComparator()) {
    t->largest_prefixes_.reserve(t->index_.size());
    t->smallest_prefixes_.reserve(t->index_.size());
    for (const TableIndexEntry& e : t->index_) {
      t->largest_prefixes_.push_back(LoadKeyPrefix(e.largest));
      t->smallest_prefixes_.push_back(LoadKeyPrefix(e.smallest));
    }
  }
  if (options.use_mmap) {
    const char* base = t->file_->Mapping();
    if (base != nullptr) {
      for (uint32_t i = 0; i < blocks; ++i) {
        auto block = std::make_shared<CachedBlock>();
        block->size = t->index_[i].size;
        // No checksum per mapping: memory-safe without; VerifyIntegrity checks.
        s = t->OpenReader(base + t->index_[i].offset, /*verify=*/false, block.get());
        if (!s.ok()) return t->Corrupt("block " + std::to_string(i) + ": " + s.ToString());
        t->mapped_.push_back(std::move(block));
      }
    } else {
      t->options_.use_mmap = false;  // this file system cannot map: use the cache
    }
  }
  if (!t->options_.use_mmap && t->options_.cache == nullptr) {
    return Status::InvalidArgument("an SSD table needs a block cache or mmap");
  }
  if (options.mapped_gets && !t->options_.use_mmap && !options.verify_checksums) {
    t->gets_mapping_ = t->file_->Mapping();
    if (t->gets_mapping_ != nullptr) t->gets_readers_.reset(new std::atomic<const BlockReader*>[blocks]());
  }
  if (!t->options_.use_mmap && t->gets_mapping_ == nullptr && t->format_ == BlockFormat::kKeySet) {
    t->pieces_.resize(blocks);
    for (uint32_t i = 0; i < blocks; ++i) {
      if (!t->IsLarge(i)) continue;
      const FileBlockBytes bytes(t->file_.get(), t->index_[i].offset, t->index_[i].size, /*timed=*/false);
      // A block that cannot be read in pieces (no key heads; or damaged:
      // its reads then report the damage) is read whole.
      s = keyset::v2::PieceReader::Open(bytes, t->index_[i].size, options.comparator, &t->pieces_[i]);
      if (!s.ok() || t->pieces_[i]->layout().count != t->index_[i].entries) t->pieces_[i].reset();
    }
  }
  *result = std::move(t);
  return Status::OK();
}

SsdTable::~SsdTable() {
  if (gets_readers_ == nullptr) return;
  for (uint32_t i = 0; i < index_.size(); ++i) delete gets_readers_[i].load(std::memory_order_relaxed);
}

Status SsdTable::ReadBlock(uint32_t i, bool verify, CachedBlockRef* block) const {
  if (options_.use_mmap) {
    *block = mapped_[i];
  } else if (IsLarge(i)) {
    std::shared_ptr<CachedBlock> fresh;
    Status s = ReadBlockCopy(i, verify || options_.verify_checksums, /*from_mapping=*/false, &fresh);
    if (s.ok()) *block = std::move(fresh);
    return s;
  } else {
    *block = options_.cache->Lookup(number_, i);
    if (*block == nullptr) {
      std::shared_ptr<CachedBlock> fresh;
      Status s = ReadBlockCopy(i, verify || options_.verify_checksums, /*from_mapping=*/false, &fresh);
      if (!s.ok()) return s;
      *block = options_.cache->Insert(number_, i, std::move(fresh));
      return Status::OK();
    }
  }
  if (verify) {
    Status s = VerifyChecksum(i, **block);
    if (!s.ok()) {
      block->reset();
      return s;
    }
  }
  return Status::OK();
}

Status SsdTable::VerifyChecksum(uint32_t i, const CachedBlock& block) const {
  if (block.checksum_verified.load(std::memory_order_relaxed)) return Status::OK();
  const char* data = options_.use_mmap ? file_->Mapping() + index_[i].offset : block.data();
  BlockReadOptions ro;
  ro.comparator = options_.comparator;
  ro.verify_checksum = true;
  std::unique_ptr<BlockReader> checked;
  Status s = BlockReader::Open(format_, Slice(data, block.size), ro, &checked);
  if (!s.ok()) return Corrupt("block " + std::to_string(i) + ": " + s.ToString());
  block.checksum_verified.store(true, std::memory_order_relaxed);
  return Status::OK();
}

std::shared_ptr<CachedBlock> SsdTable::NewBlockBuffer(uint32_t i) const {
  auto block = std::make_shared<CachedBlock>();
  block->size = index_[i].size;
  block->buffer.reset(new uint64_t[(block->size + 7) / 8]);
  return block;
}

Status SsdTable::OpenReader(const char* data, bool verify, CachedBlock* block) const {
  BlockReadOptions ro;
  ro.comparator = options_.comparator;
  ro.verify_checksum = verify;
  Status s = BlockReader::Open(format_, Slice(data, block->size), ro, &block->reader);
  if (s.ok() && verify) block->checksum_verified.store(true, std::memory_order_relaxed);
  return s;
}

Status SsdTable::ReadBlocks(uint32_t first, uint64_t bytes, char* dest) const {
  Slice got;
  const uint64_t read_start = options_.time_reads ? SteadyNanos() : 0;
  Status s = file_->Read(index_[first].offset, bytes, dest, &got);
  if (options_.time_reads) t_read_ns += SteadyNanos() - read_start;
  if (!s.ok()) return s;
  if (got.size() != bytes) return Corrupt("block " + std::to_string(first) + " truncated");
  if (got.data() != dest) std::memcpy(dest, got.data(), bytes);
  return Status::OK();
}

bool SsdTable::WarmInMapping(uint32_t first, uint32_t end) const {
  if (gets_mapping_ == nullptr) return false;
  if (mapping_state_.load(std::memory_order_relaxed) == kMappingPopulated) return true;
  for (uint32_t i = first; i < end; ++i) {
    if (IsLarge(i) || gets_readers_[i].load(std::memory_order_relaxed) == nullptr) return false;
  }
  return true;
}

void SsdTable::NoteUserScan() const {
  if (gets_mapping_ == nullptr) return;
  // Scans entering at once may both count as the first, or both populate:
  // harmless.
  const uint8_t state = mapping_state_.load(std::memory_order_relaxed);
  if (state == kMappingCold) {
    mapping_state_.store(kMappingScannedOnce, std::memory_order_relaxed);
  } else if (state == kMappingScannedOnce) {
    // Gets may have mapped every block already: then the call would only
    // walk the page tables.
    const bool mapped = WarmInMapping(0, static_cast<uint32_t>(index_.size())) || file_->PopulateMapping();
    mapping_state_.store(mapped ? kMappingPopulated : kMappingNotPopulated, std::memory_order_relaxed);
  }
}

Status SsdTable::CopyMappedBlocks(uint32_t first, uint64_t bytes, char* dest) const {
  const char* from = gets_mapping_ + index_[first].offset;
  const uint64_t read_start = options_.time_reads ? SteadyNanos() : 0;
  const bool read = GuardedMappedRead([&] { std::memcpy(dest, from, bytes); });
  if (options_.time_reads) t_read_ns += SteadyNanos() - read_start;
  if (!read) return MappingFault();
  return Status::OK();
}

Status SsdTable::MappingFault() const {
  return Status::IOError(path_, "read fault in the file's mapping (an I/O error, or a truncated file)");
}

Status SsdTable::ReadBlockCopy(uint32_t i, bool verify, bool from_mapping, std::shared_ptr<CachedBlock>* block) const {
  auto fresh = NewBlockBuffer(i);
  char* dest = reinterpret_cast<char*>(fresh->buffer.get());
  Status s = from_mapping ? CopyMappedBlocks(i, fresh->size, dest) : ReadBlocks(i, fresh->size, dest);
  if (!s.ok()) return s;
  s = OpenReader(dest, verify, fresh.get());
  if (!s.ok()) return Corrupt("block " + std::to_string(i) + ": " + s.ToString());
  *block = std::move(fresh);
  return Status::OK();
}

void FetchBlocks(IoEngine* io, std::vector<BlockFetch> fetches) {
  if (io == nullptr || fetches.empty()) return;
  // In file order; a block planned twice is read once.
  auto key = [](const BlockFetch& f) { return std::make_pair(f.table->number_, f.block); };
  std::sort(fetches.begin(), fetches.end(), [&](const BlockFetch& a, const BlockFetch& b) { return key(a) < key(b); });
  std::vector<ReadRequest> requests;
  std::vector<std::shared_ptr<CachedBlock>> blocks;
  std::vector<BlockFetch> planned;
  for (size_t k = 0; k < fetches.size(); ++k) {
    const BlockFetch& f = fetches[k];
    const SsdTable& t = *f.table;
    if (k > 0 && key(f) == key(fetches[k - 1])) continue;
    if (t.options_.use_mmap || t.file_->fd() < 0 || f.block >= t.index_.size() || t.IsLarge(f.block)) continue;
    if (t.options_.cache->Contains(t.number_, f.block)) continue;
    auto block = t.NewBlockBuffer(f.block);
    ReadRequest r;
    r.fd = t.file_->fd();
    r.offset = t.index_[f.block].offset;
    r.size = block->size;
    r.dest = reinterpret_cast<char*>(block->buffer.get());
    requests.push_back(r);
    blocks.push_back(std::move(block));
    planned.push_back(f);
  }
  if (requests.empty()) return;
  const bool timed = planned.front().table->options_.time_reads;
  const uint64_t read_start = timed ? SteadyNanos() : 0;
  io->ReadBatch(&requests);
  if (timed) t_read_ns += SteadyNanos() - read_start;
  for (size_t k = 0; k < requests.size(); ++k) {
    const SsdTable& t = *planned[k].table;
    if (requests[k].abandoned) {
      (void)blocks[k]->buffer.release();  // the kernel may still write it: never freed
      continue;
    }
    if (!requests[k].status.ok() || requests[k].done != requests[k].size) continue;
    if (!t.OpenReader(requests[k].dest, t.options_.verify_checksums, blocks[k].get()).ok()) continue;
    t.options_.cache->Insert(t.number_, planned[k].block, std::move(blocks[k]));
  }
}

void SsdTable::Prefetch(uint32_t first, uint32_t count) const {
  std::vector<BlockFetch> fetches;
  for (uint32_t i = first; i < first + count && i < index_.size(); ++i) fetches.push_back({this, i});
  FetchBlocks(options_.io, std::move(fetches));
}

void SsdTable::PrefetchForGet(uint64_t key_hash) const {
  if (!filter_.empty()) __builtin_prefetch(bloom::LineFor(filter_.data(), filter_geometry_, static_cast<uint32_t>(key_hash)));
}

bool SsdTable::MayContain(const Slice& user_key) const {
  return filter_.empty() || bloom::MayContainHash(filter_.data(), filter_geometry_, bloom::KeyHash(user_key));
}

uint32_t SsdTable::FirstCandidateBlock(const Slice& user_key) const {
  const KeyTarget target(options_.comparator, user_key);
  uint32_t lo = 0, hi = static_cast<uint32_t>(index_.size());
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    const Slice largest = index_[mid].largest;
    if ((target.bytewise() ? target.Compare(largest, largest_prefixes_[mid]) : target.Compare(largest)) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

double SsdTable::ApproximatePosition(const Slice& user_key) const {
  const uint32_t i = FirstCandidateBlock(user_key);
  const uint64_t size = file_->Size();
  if (size == 0) return 0.5;
  return static_cast<double>(i < index_.size() ? index_[i].offset : size) / static_cast<double>(size);
}

void SsdTable::PlanGet(const Slice& user_key, std::vector<BlockFetch>* fetches) const {
  if (options_.use_mmap || gets_mapping_ != nullptr || !MayContain(user_key)) return;
  const uint32_t i = FirstCandidateBlock(user_key);
  if (i >= index_.size() || options_.comparator->Compare(index_[i].smallest, user_key) > 0 || IsLarge(i)) return;
  fetches->push_back({this, i});  // FetchBlocks skips it if cached
}

Status SsdTable::Get(const ReadOptions& options, const Slice& user_key, SequenceNumber snapshot, ValueType* type,
                     std::string* value) const {
  if (!MayContain(user_key)) return Status::NotFound(Slice());  // no block read for a table without the key
  const bool mapped = gets_mapping_ != nullptr && !options.verify_checksums;
  const KeyTarget target(options_.comparator, user_key);
  // A key's versions may continue into the next block.
  for (uint32_t i = FirstCandidateBlock(user_key); i < index_.size(); ++i) {
    const Slice smallest = index_[i].smallest;
    if ((target.bytewise() ? target.Compare(smallest, smallest_prefixes_[i]) : target.Compare(smallest)) > 0) break;
    Status s;
    if (mapped) {
      s = GetFromMappedBlock(i, user_key, snapshot, type, value);
    } else if (IsLarge(i) && !options_.use_mmap) {
      s = GetFromLargeBlock(i, options, user_key, snapshot, type, value);
    } else {
      s = GetFromBlock(i, options, user_key, snapshot, type, value);
    }
    if (!s.IsNotFound()) return s;
  }
  return Status::NotFound(Slice());
}

Status SsdTable::GetFromBlock(uint32_t i, const ReadOptions& options, const Slice& user_key, SequenceNumber snapshot,
                              ValueType* type, std::string* value) const {
  CachedBlockRef block;
  Status s = ReadBlock(i, options.verify_checksums, &block);
  if (!s.ok()) return s;
  BlockLookup lookup;
  s = block->reader->Get(user_key, snapshot, &lookup);
  if (s.IsNotFound()) return s;
  if (!s.ok()) return Corrupt(s.ToString());
  *type = lookup.type;
  if (lookup.type == ValueType::kValue) value->assign(lookup.value.data(), lookup.value.size());
  return Status::OK();
}

const BlockReader* SsdTable::MappedReader(uint32_t i, std::unique_ptr<BlockReader>* opened, Status* s) const {
  const BlockReader* reader = gets_readers_[i].load(std::memory_order_acquire);
  if (reader != nullptr) return reader;
  BlockReadOptions read_options;
  read_options.comparator = options_.comparator;
  read_options.verify_checksum = false;
  *s = BlockReader::Open(format_, Slice(gets_mapping_ + index_[i].offset, index_[i].size), read_options, opened);
  if (!s->ok()) return nullptr;
  // The first reader published wins; a loser is freed with `opened`.
  const BlockReader* expected = nullptr;
  if (gets_readers_[i].compare_exchange_strong(expected, opened->get(), std::memory_order_acq_rel)) {
    return opened->release();
  }
  return expected;
}

Status SsdTable::GetFromMappedBlock(uint32_t i, const Slice& user_key, SequenceNumber snapshot, ValueType* type,
                                    std::string* value) const {
  // Whatever owns heap memory lives out here: a fault abandons the read
  // without running the destructors of the read's own locals.
  std::unique_ptr<BlockReader> opened;
  BlockLookup lookup;
  Status s;
  const bool read = GuardedMappedRead([&] {
    const BlockReader* reader = MappedReader(i, &opened, &s);
    if (reader == nullptr) return;
    s = reader->Get(user_key, snapshot, &lookup);
    if (s.ok() && lookup.type == ValueType::kValue) value->assign(lookup.value.data(), lookup.value.size());
  });
  if (!read) return MappingFault();
  if (s.IsNotFound()) return s;
  if (!s.ok()) return Corrupt("block " + std::to_string(i) + ": " + s.ToString());
  *type = lookup.type;
  return Status::OK();
}

Status SsdTable::GetFromLargeBlock(uint32_t i, const ReadOptions& options, const Slice& user_key,
                                   SequenceNumber snapshot, ValueType* type, std::string* value) const {
  // Pieces carry no checksum: a read that must verify one reads the block.
  if (i < pieces_.size() && pieces_[i] != nullptr && !options.verify_checksums) {
    const FileBlockBytes bytes(file_.get(), index_[i].offset, index_[i].size, options_.time_reads);
    bool whole_block = false;
    Status s = pieces_[i]->Get(bytes, user_key, snapshot, type, value, &whole_block);
    if (!whole_block) return s.ok() || s.IsNotFound() ? s : Corrupt("block " + std::to_string(i) + ": " + s.ToString());
  }
  CachedBlockRef block;
  Status s = ReadBlock(i, options.verify_checksums, &block);
  if (!s.ok()) return s;
  BlockLookup lookup;
  s = block->reader->Get(user_key, snapshot, &lookup);
  if (!s.ok()) return s.IsNotFound() ? s : Corrupt(s.ToString());
  *type = lookup.type;
  if (lookup.type == ValueType::kValue) value->assign(lookup.value.data(), lookup.value.size());
  return Status::OK();
}

Status SsdTable::Validate() const {
  for (uint32_t i = 0; i < index_.size(); ++i) {
    std::shared_ptr<CachedBlock> block;  // read afresh, checksum verified
    Status s = ReadBlockCopy(i, /*verify=*/true, /*from_mapping=*/false, &block);
    if (!s.ok()) return s;
    s = block->reader->Validate();
    if (s.ok() && block->reader->num_entries() != index_[i].entries) {
      s = Status::Corruption("entry count differs from the index");
    }
    if (!s.ok()) return Corrupt("block " + std::to_string(i) + ": " + s.ToString());
  }
  return Status::OK();
}

// A user's iterator over a block of a table mapped for Gets, the block not
// in the cache: each move runs on the block's reader over the mapping (the
// one Gets use), under the SIGBUS guard, and copies the entry it lands on
// out of the mapping (no Slice it hands out points into the mapping, where
// touching a page the kernel cannot supply would raise SIGBUS unguarded). A
// Seek thus reads the pages it touches -- a few, of a block of megabytes
// for a large one -- with no system call. After kSmallBlockStepsBeforeWholeRead
// (kLargeBlockStepsBeforeWholeRead for a large block) steps forward it reads
// the block whole -- a small one copied from the mapping into the cache, a
// large one from the file into a buffer of its own -- and goes on in place
// there. Thread-safety: one thread at a time, as any iterator.
class SsdTable::MappedBlockIterator final : public InternalIterator {
 public:
  MappedBlockIterator(const SsdTable* table, uint32_t block)
      : table_(table),
        block_(block),
        large_(table->IsLarge(block)),
        steps_before_whole_read_(large_ ? kLargeBlockStepsBeforeWholeRead : kSmallBlockStepsBeforeWholeRead) {}

  void SeekToFirst() override {
    steps_ = 0;
    Move([](InternalIterator* it) { it->SeekToFirst(); });
  }
  void SeekToLast() override {
    steps_ = 0;
    Move([](InternalIterator* it) { it->SeekToLast(); });
  }
  void Seek(const Slice& user_key, SequenceNumber sequence) override {
    steps_ = 0;
    Move([&](InternalIterator* it) { it->Seek(user_key, sequence); });
  }
  void Next() override {
    if (whole_ == nullptr && ++steps_ >= steps_before_whole_read_) ReadWhole();
    Move([](InternalIterator* it) { it->Next(); });
  }
  void Prev() override {
    steps_ = 0;
    Move([](InternalIterator* it) { it->Prev(); });
  }
  void SkipRun(uint32_t n) override {
    if (whole_ == nullptr) return InternalIterator::SkipRun(n);
    Move([n](InternalIterator* it) { it->SkipRun(n); });
  }
  // Only once read whole: a window points into the block's bytes.
  bool OpenWindow(BlockWindow* window) override { return whole_ != nullptr && inner_->OpenWindow(window); }
  Status status() const override {
    if (!status_.ok()) return status_;
    return inner_ != nullptr ? inner_->status() : Status::OK();
  }

 private:
  // Runs `move` on the inner iterator -- guarded, with the entry copied out,
  // until the block is read whole -- and takes the entry it lands on.
  template <typename Op>
  void Move(Op&& move) {
    valid_ = false;
    if (!status_.ok()) return;
    if (whole_ != nullptr) {
      move(inner_.get());
      if (inner_->Valid()) SetEntryFrom(*inner_);
      valid_ = inner_->Valid();
      return;
    }
    if (inner_ == nullptr) {
      // The reader lives as long as the table; its iterator reads the
      // mapping only when it moves.
      std::unique_ptr<BlockReader> opened;  // out here: see mapped_read.h
      const BlockReader* reader = nullptr;
      Status s;
      if (!GuardedMappedRead([&] { reader = table_->MappedReader(block_, &opened, &s); })) {
        status_ = table_->MappingFault();
        return;
      }
      if (reader == nullptr) {
        status_ = table_->Corrupt("block " + std::to_string(block_) + ": " + s.ToString());
        return;
      }
      inner_ = reader->NewIterator();
    }
    bool landed = false;
    const char* copy = nullptr;
    size_t key_size = 0, value_size = 0;
    const bool read = GuardedMappedRead([&] {
      move(inner_.get());
      landed = inner_->Valid();
      if (!landed) return;
      key_size = inner_->user_key().size();
      value_size = inner_->value().size();
      // Into the inline buffer when the entry fits (no allocation per
      // iterator), else into spill_.
      char* to = inline_;
      if (key_size + value_size > sizeof(inline_)) {
        spill_.resize(key_size + value_size);
        to = spill_.data();
      }
      std::memcpy(to, inner_->user_key().data(), key_size);
      std::memcpy(to + key_size, inner_->value().data(), value_size);
      copy = to;
    });
    if (!read) {
      status_ = table_->MappingFault();
      return;
    }
    if (!landed) return;
    user_key_ = Slice(copy, key_size);
    value_ = Slice(copy + key_size, value_size);
    tag_ = inner_->tag();
    has_key_hash_ = inner_->carries_key_hash();
    key_hash_ = has_key_hash_ ? inner_->key_hash() : 0;
    valid_ = true;
  }
  // From the mapped reader to the block read whole, at the same entry: a
  // large block read from the file (most of its pages were never touched
  // through the mapping), a small one copied from the mapping (its pages
  // just were) and put in the block cache, as a read would be.
  void ReadWhole() {
    if (!valid_) return;
    std::shared_ptr<CachedBlock> fresh;
    const Status s = table_->ReadBlockCopy(block_, /*verify=*/false, /*from_mapping=*/!large_, &fresh);
    if (!s.ok()) {
      status_ = s;
      return;
    }
    CachedBlockRef whole = std::move(fresh);
    auto inner = whole->reader->NewIterator();
    inner->Seek(user_key_, TagSequence(tag_));  // (user key, sequence) names one entry
    if (!inner->Valid() || inner->user_key() != user_key_ || inner->tag() != tag_) {
      status_ = table_->Corrupt("block " + std::to_string(block_) + " reads differently from the file and the mapping");
      return;
    }
    // Cached only once it agrees with what the mapping showed.
    if (!large_) table_->options_.cache->Insert(table_->number_, block_, whole);
    inner_ = std::move(inner);
    whole_ = std::move(whole);
    SetEntryFrom(*inner_);
  }

  const SsdTable* const table_;
  const uint32_t block_;
  const bool large_;  // never cached: read from the file when read whole
  const uint32_t steps_before_whole_read_;
  CachedBlockRef whole_;                     // once read whole (declared before inner_: outlives it)
  std::unique_ptr<InternalIterator> inner_;  // over the mapping, or over whole_
  // The current entry's key and value, copied out of the mapping, back to
  // back: inline when they fit, else in spill_.
  char inline_[240];
  std::string spill_;
  uint32_t steps_ = 0;                       // Next calls since the last seek or step back
  Status status_;
};

// Iteration concatenates the blocks (table/concatenating_iterator.h): this
// source opens them, and holds the current block so that eviction cannot
// free it.
//
// A scan (compaction inputs) bypasses the block cache: it reads runs of
// adjacent blocks, up to kScanWindowBytes, with one read into a window of its
// own and serves blocks in place from there -- no per-block buffer, no cache
// insert evicting blocks that readers use. A user's iterator reads through
// the cache (with read-ahead) until it has stepped forward into
// kReadAheadBlocks blocks in a row; it is scanning then, and reads the next
// blocks through windows too, until it seeks or turns back. A window whose
// blocks Gets have all read through the table's mapping is copied from the
// mapping, under the SIGBUS guard, instead of read (WarmInMapping).
class SsdTable::BlockSource {
 public:
  // verify: see ReadBlock (for a scan, blocks are always verified). decode:
  // see Table::NewScanIterator; may be null. scanning: a user's iterator
  // that reads through windows from its first block on
  // (Table::NewSequentialIterator), as if it had stepped forward through
  // kReadAheadBlocks blocks already.
  BlockSource(const SsdTable* table, bool scan, bool verify, SampledPhase* decode, bool scanning = false)
      : table_(table),
        scan_(scan && !table->options_.use_mmap),
        verify_mapped_(scan && table->options_.use_mmap),
        verify_(verify),
        decode_(decode),
        reads_mapping_(!scan_ && !verify_mapped_ && !verify && !table->options_.verify_checksums &&
                       table->gets_mapping_ != nullptr),
        forward_run_(scanning ? kReadAheadBlocks : 0) {}

  size_t num_children() const { return table_->index_.size(); }
  size_t FirstCandidate(const Slice& user_key) const { return table_->FirstCandidateBlock(user_key); }
  Status OpenChild(size_t i, std::unique_ptr<InternalIterator>* child) {
    block_.reset();
    // A forward step into the block after the last one opened continues a
    // run; anything else (a seek, a step back) ends it.
    const bool scanning = forward_run_ >= kReadAheadBlocks && i == stepping_into_ && i == opened_ + 1;
    if (i != stepping_into_) forward_run_ = 0;
    opened_ = i;
    // Decode: opening the block's reader (its reads are excluded by the phase).
    const auto open = [&, block = static_cast<uint32_t>(i)] {
      const bool own_buffer = (scanning || table_->IsLarge(block)) && !mapped();
      return scan_            ? OpenInWindow(block, /*verify=*/true)
             : verify_mapped_ ? OpenMappedVerified(block)
             : own_buffer     ? OpenInWindow(block, verify_ || table_->options_.verify_checksums)
                              : table_->ReadBlock(block, verify_, &block_);
    };
    // A block a user's iterator seeks into, when the table is mapped for
    // Gets and nothing asks for checksums: from the cache if it is there,
    // else in place from the mapping, as Gets read it (no read-ahead; the
    // block reaches the cache only if the iterator steps on in it).
    if (reads_mapping_ && !scanning) {
      const auto block = static_cast<uint32_t>(i);
      if (!table_->IsLarge(block)) block_ = table_->options_.cache->Lookup(table_->number_, block);
      if (block_ == nullptr) {
        *child = std::make_unique<MappedBlockIterator>(table_, block);
        return Status::OK();
      }
      *child = block_->reader->NewIterator();
      return Status::OK();
    }
    Status s = decode_ != nullptr ? decode_->RunExact(open) : open();
    if (!s.ok()) return s;
    *child = block_->reader->NewIterator();
    return Status::OK();
  }
  // A scan's block i as bytes (verified as OpenChild verifies them), valid
  // until the next call.
  Status OpenBytes(size_t i, Slice* bytes) {
    assert(scan_ || verify_mapped_);
    block_.reset();
    const auto open = [&, block = static_cast<uint32_t>(i)] {
      return scan_ ? OpenInWindow(block, /*verify=*/true) : OpenMappedVerified(block);
    };
    Status s = decode_ != nullptr ? decode_->RunExact(open) : open();
    if (s.ok()) *bytes = block_bytes_;
    return s;
  }
  // Sequential reading: the next blocks in one batch.
  void WillReadForwardFrom(size_t i) {
    forward_run_ = i == opened_ + 1 ? forward_run_ + 1 : 1;
    stepping_into_ = i;
    if (!scan_ && !reads_mapping_ && forward_run_ < kReadAheadBlocks && i % kReadAheadBlocks == 0) {
      table_->Prefetch(static_cast<uint32_t>(i), kReadAheadBlocks);
    }
  }

 private:
  bool mapped() const { return table_->options_.use_mmap; }
  // Block i from the window, reading a new window from block i on first.
  Status OpenInWindow(uint32_t i, bool verify) {
    const auto& index = table_->index_;
    if (window_end_ == 0 || i < window_first_ || i >= window_end_) {
      // Nothing refers to the old window any more (the iterator dropped the
      // block's iterator, OpenChild the block): its buffer is reused.
      window_end_ = 0;
      uint32_t end = i + 1;
      while (end < index.size() && index[end].offset + index[end].size - index[i].offset <= kScanWindowBytes) ++end;
      const uint64_t bytes = index[end - 1].offset + index[end - 1].size - index[i].offset;
      if (window_bytes_ < bytes) {  // none yet, or one block larger than a window
        window_ = ScanWindows().Take(bytes);
        window_bytes_ = std::max<uint64_t>(bytes, ScanWindows().buffer_bytes());
      }
      // A user's scan counts toward populating the table's mapping; a
      // compaction's reads a table about to be deleted and does not.
      if (!scan_ && !noted_user_scan_) {
        noted_user_scan_ = true;
        table_->NoteUserScan();
      }
      Status s = table_->WarmInMapping(i, end) ? table_->CopyMappedBlocks(i, bytes, WindowData())
                                               : table_->ReadBlocks(i, bytes, WindowData());
      if (!s.ok()) return s;
      window_first_ = i;
      window_end_ = end;
    }
    return OpenVerified(i, WindowData() + (index[i].offset - index[window_first_].offset), verify);
  }
  // Scan windows are recycled across sources: a source reads one table, and
  // a fresh window per table would fault in its pages every time. Never
  // destroyed: an iterator may outlive static destruction.
  static BufferRecycler& ScanWindows() {
    static BufferRecycler* const windows = new BufferRecycler(kScanWindowBytes, /*max_kept=*/16);
    return *windows;
  }
  char* WindowData() const { return reinterpret_cast<char*>(window_.get()); }
  // A scan of a mapped table: the mapped readers were opened without their
  // checksums; a scan opens its own, checked.
  Status OpenMappedVerified(uint32_t i) {
    return OpenVerified(i, table_->file_->Mapping() + table_->index_[i].offset, /*verify=*/true);
  }
  // A scan feeds compactions, which rewrite what they read: its blocks'
  // checksums are always verified (whatever verify_checksums says), so a
  // damaged block stops the compaction instead of being rewritten as if
  // intact -- a flipped stored key hash, say, would make the merge keep a
  // shadowed version or drop a live one. The check is part of reading the
  // block (timed as a read, like LevelDB's ReadBlock). A user's scan
  // verifies as its ReadOptions and the table say (`verify`). `data`: block
  // i's bytes, which outlive the reader (a read window or the mapping).
  Status OpenVerified(uint32_t i, const char* data, bool verify) {
    auto block = std::make_shared<CachedBlock>();  // a reader over bytes it does not own
    block->size = table_->index_[i].size;
    const uint64_t open_start = table_->options_.time_reads ? SteadyNanos() : 0;
    Status s = table_->OpenReader(data, verify, block.get());
    if (table_->options_.time_reads) t_read_ns += SteadyNanos() - open_start;
    if (!s.ok()) return table_->Corrupt("block " + std::to_string(i) + ": " + s.ToString());
    block_ = std::move(block);
    block_bytes_ = Slice(data, table_->index_[i].size);
    return Status::OK();
  }

  const SsdTable* const table_;
  const bool scan_;           // scan through read windows (tables read by pread)
  const bool verify_mapped_;  // scan of a mapped table
  const bool verify_;         // not a scan: ReadOptions::verify_checksums
  SampledPhase* const decode_;
  // A user's iterator over a table mapped for Gets, verifying nothing: until
  // it scans, blocks not in the cache are read in place from the mapping
  // (MappedBlockIterator), with no read-ahead.
  const bool reads_mapping_;
  // Scan: blocks [window_first_, window_end_) (end 0: none), in a window of
  // window_bytes_ (recycled, or larger for a block that outgrows one).
  BufferRecycler::Buffer window_;
  uint64_t window_bytes_ = 0;
  uint32_t window_first_ = 0, window_end_ = 0;
  // A user's iterator: blocks stepped into forward in a row, the one being
  // stepped into, and the last one opened.
  size_t forward_run_;
  size_t stepping_into_ = SIZE_MAX;
  size_t opened_ = SIZE_MAX;
  bool noted_user_scan_ = false;  // told the table (NoteUserScan)
  CachedBlockRef block_;  // the current block; declared after window_: released before it
  Slice block_bytes_;     // its bytes, when opened by OpenVerified
};

// A compaction's pass over the table's blocks as bytes: BlockSource's scan,
// without an iterator per block.
class SsdTable::TableBlockScan final : public BlockScan {
 public:
  TableBlockScan(const SsdTable* table, SampledPhase* decode)
      : source_(table, /*scan=*/true, /*verify=*/true, decode) {}
  bool NextBlock(Slice* block) override {
    if (!status_.ok() || next_ >= source_.num_children()) return false;
    status_ = source_.OpenBytes(next_++, block);
    return status_.ok();
  }
  Status status() const override { return status_; }

 private:
  BlockSource source_;
  size_t next_ = 0;
  Status status_;
};

std::unique_ptr<InternalIterator> SsdTable::NewIterator(const ReadOptions& options) const {
  return std::make_unique<ConcatenatingIterator<BlockSource>>(/*decode=*/nullptr, this, /*scan=*/false,
                                                              options.verify_checksums, /*decode=*/nullptr);
}
std::unique_ptr<InternalIterator> SsdTable::NewSequentialIterator(const ReadOptions& options) const {
  return std::make_unique<ConcatenatingIterator<BlockSource>>(/*decode=*/nullptr, this, /*scan=*/false,
                                                              options.verify_checksums, /*decode=*/nullptr,
                                                              /*scanning=*/true);
}
std::unique_ptr<InternalIterator> SsdTable::NewScanIterator(SampledPhase* decode) const {
  return std::make_unique<ConcatenatingIterator<BlockSource>>(decode, this, /*scan=*/true, /*verify=*/true, decode);
}

std::unique_ptr<BlockScan> SsdTable::NewBlockScan(SampledPhase* decode) const {
  if (format_ != BlockFormat::kKeySet) return nullptr;
  return std::make_unique<TableBlockScan>(this, decode);
}

}  // namespace jigsaw::ssd
