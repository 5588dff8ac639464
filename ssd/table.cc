// SsdTable: opening a table (footer, index, table filter, readers over the
// mapping), reading its blocks (the block cache, the file, the mapping,
// batched fetches) and point lookups. Its iterators are in
// ssd/table_iterators.cc, the writer in ssd/table_builder.cc.
#include "ssd/table.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <utility>

#include "util/guarded_read.h"
#include "ssd/table_internal.h"
#include "util/checksum.h"
#include "util/coding.h"
#include "util/profile_clock.h"

namespace jigsaw::ssd {

using table_internal::t_read_ns;

namespace {

// The bytes of one block of a table file, for keyset::PieceReader.
class FileBlockBytes final : public keyset::BlockBytes {
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

// Where the footer says the index lies, and its checksum.
struct SsdTable::IndexLocation {
  uint64_t offset = 0;
  uint64_t size = 0;
  uint32_t crc = 0;
};

Status SsdTable::Corrupt(const std::string& what) const { return Status::Corruption("table " + path_, what); }

Status SsdTable::Open(const SsdTableOptions& options, std::unique_ptr<RandomAccessFile> file, uint64_t number,
                      const std::string& path, std::unique_ptr<SsdTable>* result) {
  std::unique_ptr<SsdTable> t(new SsdTable());
  t->options_ = options;
  t->file_ = std::move(file);
  t->number_ = number;
  t->path_ = path;
  IndexLocation where;
  Status s = t->ReadFooter(&where);
  if (!s.ok()) return s;
  std::string index;
  s = t->ReadIndex(where, &index);
  if (!s.ok()) return s;
  s = t->DecodeIndex(index, where.offset);
  if (!s.ok()) return s;
  t->LoadKeyBounds();
  s = t->OpenMappedReaders();
  if (!s.ok()) return s;
  if (!t->options_.use_mmap && t->options_.cache == nullptr) {
    return Status::InvalidArgument("an SSD table needs a block cache or mmap");
  }
  t->SetUpMappedGets();
  t->OpenPieceReaders();
  *result = std::move(t);
  return Status::OK();
}

Status SsdTable::ReadFooter(IndexLocation* where) {
  const uint64_t size = file_->Size();
  if (size < kTableFooterSize) return Corrupt("file too short for a footer");
  char bytes[kTableFooterSize];
  Slice got;
  Status s = file_->Read(size - kTableFooterSize, kTableFooterSize, bytes, &got);
  if (!s.ok()) return s;
  if (got.size() != kTableFooterSize) return Corrupt("short read of the footer");
  const TableFooter footer = TableFooter::DecodeFrom(got.data());
  s = footer.Check(size, path_);
  if (!s.ok()) return s;
  format_ = static_cast<BlockFormat>(footer.block_format);
  version_ = footer.version;
  entries_ = footer.entries;
  where->offset = footer.index_offset;
  where->size = footer.index_size;
  where->crc = footer.index_crc;
  return Status::OK();
}

Status SsdTable::ReadIndex(const IndexLocation& where, std::string* index) const {
  index->assign(where.size, '\0');
  Slice got;
  Status s = file_->Read(where.offset, where.size, index->data(), &got);
  if (!s.ok()) return s;
  if (got.size() != where.size) return Corrupt("short read of the index");
  if (got.data() != index->data()) std::memcpy(index->data(), got.data(), where.size);
  if (crc32c::Value(index->data(), index->size()) != where.crc) return Corrupt("index checksum mismatch");
  return Status::OK();
}

Status SsdTable::DecodeIndex(const std::string& index, uint64_t index_offset) {
  Slice filter;
  uint32_t filter_lines = 0;
  Status s = ssd::DecodeIndex(index, index_offset, version_, path_, &index_, &filter, &filter_lines);
  if (!s.ok()) return s;
  uint64_t entries = 0;
  for (const TableIndexEntry& e : index_) {
    entries += e.entries;
    compressed_ = compressed_ || e.compressed();
  }
  if (entries != entries_) return Corrupt("entry counts of the index and footer differ");
  if (filter_lines > 0) {
    filter_.assign(filter.data(), filter.size());
    filter_geometry_.lines = filter_lines;
    filter_geometry_.probes = bloom::kProbes;
  }
  return Status::OK();
}

void SsdTable::LoadKeyBounds() {
  if (!index_.empty()) {
    smallest_ = index_.front().smallest;
    largest_ = index_.back().largest;
  }
  if (options_.comparator == BytewiseComparator()) {
    largest_prefixes_.reserve(index_.size());
    smallest_prefixes_.reserve(index_.size());
    for (const TableIndexEntry& e : index_) {
      largest_prefixes_.push_back(LoadKeyPrefix(e.largest));
      smallest_prefixes_.push_back(LoadKeyPrefix(e.smallest));
    }
  }
}

Status SsdTable::OpenMappedReaders() {
  if (!options_.use_mmap) return Status::OK();
  const char* base = compressed_ ? nullptr : file_->Mapping();
  if (base == nullptr) {
    // This file system cannot map, or the blocks must be decompressed: use the cache.
    options_.use_mmap = false;
    return Status::OK();
  }
  for (uint32_t i = 0; i < index_.size(); ++i) {
    auto block = std::make_shared<CachedBlock>();
    block->size = index_[i].size;
    // No checksum per mapping: memory-safe without; VerifyIntegrity checks.
    Status s = OpenReader(base + index_[i].offset, /*verify=*/false, block.get());
    if (!s.ok()) return Corrupt("block " + std::to_string(i) + ": " + s.ToString());
    mapped_.push_back(std::move(block));
  }
  return Status::OK();
}

void SsdTable::SetUpMappedGets() {
  if (compressed_ && options_.verify_checksums) verified_once_.reset(new std::atomic<bool>[index_.size()]());
  if (!options_.mapped_gets || options_.use_mmap) return;
  if (compressed_) {
    stored_mapping_ = file_->Mapping();  // compressed blocks are decompressed from it
    return;
  }
  gets_mapping_ = file_->Mapping();
  if (gets_mapping_ != nullptr) gets_readers_.reset(new std::atomic<const BlockReader*>[index_.size()]());
}

void SsdTable::OpenPieceReaders() {
  if (options_.use_mmap || gets_mapping_ != nullptr || format_ != BlockFormat::kKeySet) return;
  const auto blocks = static_cast<uint32_t>(index_.size());
  pieces_.resize(blocks);
  pieces_verified_.reset(new std::atomic<bool>[blocks]());
  for (uint32_t i = 0; i < blocks; ++i) {
    if (!IsLarge(i) || index_[i].compressed()) continue;
    const FileBlockBytes bytes(file_.get(), index_[i].offset, index_[i].size, /*timed=*/false);
    // A block that cannot be read in pieces (no key heads; or damaged:
    // its reads then report the damage) is read whole.
    Status s = keyset::PieceReader::Open(bytes, index_[i].size, options_.comparator, &pieces_[i]);
    if (!s.ok() || pieces_[i]->layout().count != index_[i].entries) pieces_[i].reset();
  }
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
      // A compressed block read again after its eviction: its stored bytes
      // were checked when it was first read (verified_once_), as a mapped
      // block's are once.
      const bool checked_before =
          !verify && verified_once_ != nullptr && verified_once_[i].load(std::memory_order_relaxed);
      std::shared_ptr<CachedBlock> fresh;
      Status s = ReadBlockCopy(i, (verify || options_.verify_checksums) && !checked_before, /*from_mapping=*/false,
                               &fresh);
      if (!s.ok()) return s;
      if (checked_before) fresh->checksum_verified.store(true, std::memory_order_relaxed);
      if (verified_once_ != nullptr) verified_once_[i].store(true, std::memory_order_relaxed);
      *block = options_.cache->Insert(number_, i, std::move(fresh));
      return Status::OK();
    }
  }
  if (verify || options_.verify_checksums) {  // once per block: VerifyChecksum keeps a flag
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

Status SsdTable::ReadBlocks(uint32_t first, uint64_t bytes, char* dest, uint64_t skip) const {
  Slice got;
  const uint64_t read_start = options_.time_reads ? SteadyNanos() : 0;
  Status s = file_->Read(index_[first].offset + skip, bytes, dest, &got);
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
  const bool read = GuardedRead([&] { std::memcpy(dest, from, bytes); });
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
  const TableIndexEntry& e = index_[i];
  Status s;
  if (!e.compressed()) {
    s = from_mapping ? CopyMappedBlocks(i, fresh->size, dest) : ReadBlocks(i, fresh->size, dest);
  } else if (stored_mapping_ != nullptr) {
    // Decompressed straight from the mapping: no system call, no copy.
    const uint64_t read_start = options_.time_reads ? SteadyNanos() : 0;
    const bool read = GuardedRead([&] { s = Decompress(i, Slice(stored_mapping_ + e.offset, e.stored_size), dest); });
    if (options_.time_reads) t_read_ns += SteadyNanos() - read_start;
    if (!read) return MappingFault();
  } else {
    assert(!from_mapping);  // a table with compressed blocks is never mapped for Gets
    std::unique_ptr<char[]> stored(new char[e.stored_size]);
    s = ReadBlocks(i, e.stored_size, stored.get());
    if (s.ok()) s = Decompress(i, Slice(stored.get(), e.stored_size), dest);
  }
  if (!s.ok()) return s;
  s = OpenReader(dest, verify, fresh.get());
  if (!s.ok()) return Corrupt("block " + std::to_string(i) + ": " + s.ToString());
  *block = std::move(fresh);
  return Status::OK();
}

Status SsdTable::Decompress(uint32_t i, const Slice& stored, char* dest) const {
  Status s = DecompressBlock(index_[i].codec, stored, dest, index_[i].size);
  return s.ok() ? s : Corrupt("block " + std::to_string(i) + ": " + s.ToString());
}

void FetchBlocks(IoEngine* io, std::vector<BlockFetch> fetches) {
  if (io == nullptr || fetches.empty()) return;
  // In file order; a block planned twice is read once.
  auto key = [](const BlockFetch& f) { return std::make_pair(f.table->number_, f.block); };
  std::sort(fetches.begin(), fetches.end(), [&](const BlockFetch& a, const BlockFetch& b) { return key(a) < key(b); });
  std::vector<ReadRequest> requests;
  std::vector<std::shared_ptr<CachedBlock>> blocks;
  std::vector<std::unique_ptr<char[]>> stored;  // per request: a compressed block's bytes (else null)
  std::vector<BlockFetch> planned;
  for (size_t k = 0; k < fetches.size(); ++k) {
    const BlockFetch& f = fetches[k];
    const SsdTable& t = *f.table;
    if (k > 0 && key(f) == key(fetches[k - 1])) continue;
    if (t.options_.use_mmap || t.file_->fd() < 0 || f.block >= t.index_.size() || t.IsLarge(f.block)) continue;
    if (t.options_.cache->Contains(t.number_, f.block)) continue;
    auto block = t.NewBlockBuffer(f.block);
    const TableIndexEntry& e = t.index_[f.block];
    std::unique_ptr<char[]> stored_bytes(e.compressed() ? new char[e.stored_size] : nullptr);
    ReadRequest r;
    r.fd = t.file_->fd();
    r.offset = e.offset;
    r.size = e.stored_bytes();
    r.dest = e.compressed() ? stored_bytes.get() : reinterpret_cast<char*>(block->buffer.get());
    requests.push_back(r);
    blocks.push_back(std::move(block));
    stored.push_back(std::move(stored_bytes));
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
      (void)blocks[k]->buffer.release();  // the kernel may still write them: never freed
      (void)stored[k].release();
      continue;
    }
    if (!requests[k].status.ok() || requests[k].done != requests[k].size) continue;
    char* data = reinterpret_cast<char*>(blocks[k]->buffer.get());
    if (stored[k] != nullptr &&
        !t.Decompress(planned[k].block, Slice(stored[k].get(), requests[k].size), data).ok()) {
      continue;
    }
    if (!t.OpenReader(data, t.options_.verify_checksums, blocks[k].get()).ok()) continue;
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
  if (i >= index_.size()) return 1;
  // By the block the key would be in; inside a large block (a table that
  // migrated from pmem is one), where the block's outline puts it.
  double offset = static_cast<double>(index_[i].offset);
  double inside = 0;  // where the key falls in block i, 0 to 1
  if (i < mapped_.size() && mapped_[i] != nullptr) {
    inside = mapped_[i]->reader->ApproximatePosition(user_key);
  } else if (i < pieces_.size() && pieces_[i] != nullptr) {
    inside = pieces_[i]->ApproximatePosition(user_key);
  } else if (gets_mapping_ != nullptr && IsLarge(i)) {
    // Its reader over the mapping, made by the first Get if not yet; a
    // fault or a malformed block leaves the estimate at the block's start.
    std::unique_ptr<BlockReader> opened;
    Status s;
    if (!GuardedRead([&] {
          const BlockReader* reader = MappedReader(i, &opened, &s);
          if (reader != nullptr) inside = reader->ApproximatePosition(user_key);
        })) {
      inside = 0;
    }
  }
  offset += inside * static_cast<double>(index_[i].stored_bytes());
  return offset / static_cast<double>(size);
}

void SsdTable::PlanGet(const Slice& user_key, std::vector<BlockFetch>* fetches) const {
  if (options_.use_mmap || gets_mapping_ != nullptr || !MayContain(user_key)) return;
  const uint32_t i = FirstCandidateBlock(user_key);
  if (i >= index_.size() || options_.comparator->Compare(index_[i].smallest, user_key) > 0 || IsLarge(i) ||
      IsSplitCodec(index_[i].codec)) {  // a split block's Get reads its key part, not the block
    return;
  }
  fetches->push_back({this, i});  // FetchBlocks skips it if cached
}

Status SsdTable::Get(const ReadOptions& options, const Slice& user_key, SequenceNumber snapshot, ValueType* type,
                     std::string* value, SequenceNumber* sequence) const {
  if (!MayContain(user_key)) return Status::NotFound(Slice());  // no block read for a table without the key
  const bool mapped = gets_mapping_ != nullptr && !options.verify_checksums;
  const KeyTarget target(options_.comparator, user_key);
  // A key's versions may continue into the next block.
  for (uint32_t i = FirstCandidateBlock(user_key); i < index_.size(); ++i) {
    const Slice smallest = index_[i].smallest;
    if ((target.bytewise() ? target.Compare(smallest, smallest_prefixes_[i]) : target.Compare(smallest)) > 0) break;
    Status s;
    const bool split = ServesFromKeyPart(i, options.verify_checksums, &s);
    if (!s.ok()) return s;
    if (split) s = GetFromSplitBlock(i, user_key, snapshot, type, value, sequence);
    if (!split || s.IsNotSupported()) {
      if (mapped) {
        s = GetFromMappedBlock(i, user_key, snapshot, type, value, sequence);
      } else if (IsLarge(i) && !options_.use_mmap) {
        s = GetFromLargeBlock(i, options, user_key, snapshot, type, value, sequence);
      } else {
        s = GetFromBlock(i, options, user_key, snapshot, type, value, sequence);
      }
    }
    if (!s.IsNotFound()) return s;
  }
  return Status::NotFound(Slice());
}

Status SsdTable::GetFromBlock(uint32_t i, const ReadOptions& options, const Slice& user_key, SequenceNumber snapshot,
                              ValueType* type, std::string* value, SequenceNumber* sequence) const {
  CachedBlockRef block;
  Status s = ReadBlock(i, options.verify_checksums, &block);
  if (!s.ok()) return s;
  BlockLookup lookup;
  s = block->reader->Get(user_key, snapshot, &lookup);
  if (s.IsNotFound()) return s;
  if (!s.ok()) return Corrupt(s.ToString());
  *type = lookup.type;
  *sequence = lookup.sequence;
  if (lookup.type == ValueType::kValue) value->assign(lookup.value.data(), lookup.value.size());
  return Status::OK();
}

Status SsdTable::CopyStored(uint32_t i, uint64_t begin, uint64_t n, char* dest) const {
  const TableIndexEntry& e = index_[i];
  if (begin + n > e.stored_bytes()) return Corrupt("block " + std::to_string(i) + ": read past its stored bytes");
  if (stored_mapping_ == nullptr) return ReadBlocks(i, n, dest, begin);
  const uint64_t read_start = options_.time_reads ? SteadyNanos() : 0;
  const bool read = GuardedRead([&] { std::memcpy(dest, stored_mapping_ + e.offset + begin, n); });
  if (options_.time_reads) t_read_ns += SteadyNanos() - read_start;
  return read ? Status::OK() : MappingFault();
}

template <typename Use>
Status SsdTable::WithStored(uint32_t i, uint64_t begin, uint64_t n, std::string* scratch, Use&& use) const {
  const TableIndexEntry& e = index_[i];
  if (begin + n > e.stored_bytes()) return Corrupt("block " + std::to_string(i) + ": read past its stored bytes");
  if (stored_mapping_ == nullptr) {
    scratch->resize(n);
    Status s = ReadBlocks(i, n, scratch->data(), begin);
    return s.ok() ? use(Slice(*scratch)) : s;
  }
  Status s;
  const uint64_t read_start = options_.time_reads ? SteadyNanos() : 0;
  const bool read = GuardedRead([&] { s = use(Slice(stored_mapping_ + e.offset + begin, n)); });
  if (options_.time_reads) t_read_ns += SteadyNanos() - read_start;
  return read ? s : MappingFault();
}

Status SsdTable::ReadKeyPart(uint32_t i, CachedBlockRef* part) const {
  *part = options_.cache->Lookup(number_, i | BlockCache::kKeyPartBit);
  if (*part != nullptr) return Status::OK();
  const TableIndexEntry& e = index_[i];
  auto corrupt = [&](const Status& s) { return Corrupt("block " + std::to_string(i) + ": " + s.ToString()); };
  // The head's fixed part says how long the key part, the head and the key
  // part's frame are. One buffer then holds the key part and, after it
  // (8-byte aligned), the head, read there and parsed: a Get finds the
  // block's key part and its groups in one cache entry.
  char fixed[16];
  if (e.stored_size < sizeof(fixed)) return corrupt(Status::Corruption("split block head truncated"));
  Status s = CopyStored(i, 0, sizeof(fixed), fixed);
  if (!s.ok()) return s;
  const uint64_t region_size = DecodeFixed32(fixed + 4);
  const uint64_t head_size = 16 + 4 * uint64_t{DecodeFixed32(fixed + 12)};
  const uint64_t frame_size = DecodeFixed32(fixed + 8);
  if (region_size > e.size || head_size + frame_size > e.stored_size) {
    return corrupt(Status::Corruption("split block head disagrees with its sizes"));
  }
  auto fresh = std::make_shared<CachedBlock>();
  const uint64_t key_part = e.size - region_size, head_at = (key_part + 7) & ~uint64_t{7};
  fresh->size = head_at + head_size;
  fresh->buffer.reset(new uint64_t[(fresh->size + 7) / 8]);
  char* dest = reinterpret_cast<char*>(fresh->buffer.get());
  s = CopyStored(i, 0, head_size, dest + head_at);
  if (!s.ok()) return s;
  s = SplitHead::Parse(Slice(dest + head_at, head_size), e.stored_size, e.size, &fresh->split_head);
  if (s.ok() && (fresh->split_head.region_size() != region_size ||
                 fresh->split_head.key_part_end() != head_size + frame_size)) {
    s = Status::Corruption("split block head changed between reads");
  }
  if (!s.ok()) return corrupt(s);
  const SplitHead& head = fresh->split_head;
  std::string scratch;
  s = WithStored(i, head_size, frame_size, &scratch,
                 [&](const Slice& frame) { return DecompressKeyPart(head, frame, dest); });
  if (s.IsIOError()) return s;
  // The region must be the block's value region: a value's offset in the
  // value buffer is then its offset in the region.
  uint64_t region_begin = 0, region_end = 0;
  if (s.ok()) s = keyset::ValueRegion(Slice(dest, key_part), e.size, options_.comparator, &region_begin, &region_end);
  if (s.ok() && (region_begin != head.region_begin() || region_end - region_begin != head.region_size())) {
    s = Status::Corruption("split block region is not the value region");
  }
  if (s.ok()) s = keyset::OpenKeyPartReader(Slice(dest, key_part), e.size, options_.comparator, &fresh->reader);
  if (s.IsNotSupported()) return s;
  if (!s.ok()) return corrupt(s);
  *part = options_.cache->Insert(number_, i | BlockCache::kKeyPartBit, std::move(fresh));
  return Status::OK();
}

bool SsdTable::ServesFromKeyPart(uint32_t i, bool verify, Status* s) const {
  if (!IsSplitCodec(index_[i].codec) || verify || i >= BlockCache::kKeyPartBit) return false;
  if (!options_.verify_checksums || verified_once_[i].load(std::memory_order_relaxed)) return true;
  // Checked whole, once; not cached: the block's reads need its key part.
  std::shared_ptr<CachedBlock> whole;
  *s = ReadBlockCopy(i, /*verify=*/true, /*from_mapping=*/false, &whole);
  if (!s->ok()) return false;
  verified_once_[i].store(true, std::memory_order_relaxed);
  return true;
}

Status SsdTable::ReadValueGroups(uint32_t i, const SplitHead& head, uint32_t first, uint64_t end,
                                 std::string* frames, char* dest) const {
  if (end <= uint64_t{first} * kValueGroupBytes || end > head.region_size()) {
    return Corrupt("block " + std::to_string(i) + ": value outside its groups");
  }
  const auto last = static_cast<uint32_t>((end - 1) / kValueGroupBytes);
  Status s = WithStored(i, head.GroupBegin(first), head.GroupBegin(last + 1) - head.GroupBegin(first), frames,
                        [&](const Slice& stored) { return DecompressGroups(head, stored, first, end, dest); });
  return s.ok() || s.IsIOError() ? s : Corrupt("block " + std::to_string(i) + ": " + s.ToString());
}

Status SsdTable::GetFromSplitBlock(uint32_t i, const Slice& user_key, SequenceNumber snapshot, ValueType* type,
                                   std::string* value, SequenceNumber* sequence) const {
  CachedBlockRef part;
  Status s = ReadKeyPart(i, &part);
  if (!s.ok()) return s;
  BlockLookup lookup;
  s = part->reader->Get(user_key, snapshot, &lookup);
  if (s.IsNotFound()) return s;
  if (!s.ok()) return Corrupt("block " + std::to_string(i) + ": " + s.ToString());
  if (lookup.type == ValueType::kValue && !lookup.value.empty()) {
    // The value's groups, their stored frames read, then decompressed. The
    // region starts with the value buffer (keyset::ValueRegion).
    const uint64_t offset = lookup.value_offset, size = lookup.value.size();
    uint32_t first = 0, last = 0;
    if (!GroupsHolding(part->split_head, offset, size, &first, &last)) {
      return Corrupt("block " + std::to_string(i) + ": value outside its groups");
    }
    thread_local std::string frames, groups;
    groups.resize(size_t{last - first + 1} * kValueGroupBytes);
    s = ReadValueGroups(i, part->split_head, first, offset + size, &frames, groups.data());
    if (!s.ok()) return s;
    value->assign(groups.data() + (offset - uint64_t{first} * kValueGroupBytes), size);
  } else if (lookup.type == ValueType::kValue) {
    value->clear();
  }
  *type = lookup.type;
  *sequence = lookup.sequence;
  return Status::OK();
}

const BlockReader* SsdTable::MappedReader(uint32_t i, std::unique_ptr<BlockReader>* opened, Status* s) const {
  const BlockReader* reader = gets_readers_[i].load(std::memory_order_acquire);
  if (reader != nullptr) return reader;
  BlockReadOptions read_options;
  read_options.comparator = options_.comparator;
  read_options.verify_checksum = options_.verify_checksums;  // once: the reader is kept
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
                                    std::string* value, SequenceNumber* sequence) const {
  // Whatever owns heap memory lives out here: a fault abandons the read
  // without running the destructors of the read's own locals.
  std::unique_ptr<BlockReader> opened;
  BlockLookup lookup;
  Status s;
  const bool read = GuardedRead([&] {
    const BlockReader* reader = MappedReader(i, &opened, &s);
    if (reader == nullptr) return;
    s = reader->Get(user_key, snapshot, &lookup);
    if (s.ok() && lookup.type == ValueType::kValue) value->assign(lookup.value.data(), lookup.value.size());
  });
  if (!read) return MappingFault();
  if (s.IsNotFound()) return s;
  if (!s.ok()) return Corrupt("block " + std::to_string(i) + ": " + s.ToString());
  *type = lookup.type;
  *sequence = lookup.sequence;
  return Status::OK();
}

Status SsdTable::GetFromLargeBlock(uint32_t i, const ReadOptions& options, const Slice& user_key,
                                   SequenceNumber snapshot, ValueType* type, std::string* value,
                                   SequenceNumber* sequence) const {
  // Pieces carry no checksum: a read that must verify one reads the block.
  if (i < pieces_.size() && pieces_[i] != nullptr && !options.verify_checksums) {
    if (options_.verify_checksums && !pieces_verified_[i].load(std::memory_order_acquire)) {
      std::shared_ptr<CachedBlock> whole;  // read once to check its CRC, then dropped
      Status s = ReadBlockCopy(i, /*verify=*/true, /*from_mapping=*/false, &whole);
      if (!s.ok()) return s;
      pieces_verified_[i].store(true, std::memory_order_release);
    }
    const FileBlockBytes bytes(file_.get(), index_[i].offset, index_[i].size, options_.time_reads);
    bool whole_block = false;
    Status s = pieces_[i]->Get(bytes, user_key, snapshot, type, value, sequence, &whole_block);
    if (!whole_block) return s.ok() || s.IsNotFound() ? s : Corrupt("block " + std::to_string(i) + ": " + s.ToString());
  }
  CachedBlockRef block;
  Status s = ReadBlock(i, options.verify_checksums, &block);
  if (!s.ok()) return s;
  BlockLookup lookup;
  s = block->reader->Get(user_key, snapshot, &lookup);
  if (!s.ok()) return s.IsNotFound() ? s : Corrupt(s.ToString());
  *type = lookup.type;
  *sequence = lookup.sequence;
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

}  // namespace jigsaw::ssd
