// format_bench: the KeySet block against the classic LevelDB-style block.
//
// Benchmarks BM_KeySet_<Op> and BM_Classic_<Op> for Op in Build, Scan, Get,
// Seek, on one block holding 4 MiB of entries (16-byte keys, 100-byte values):
//   Build  build the block from sorted (key, value) slices into a buffer
//   Scan   iterate the whole block, reading keys and value slices (readseq)
//   Get    point lookup of a random present key, reading its value's first byte
//   Seek   Seek to a random present key, reading its value's first byte
// and, with the engine's own code paths:
//   Merge  a compaction's merge (compaction/merge.h) of two overlapping
//          blocks, each of two thirds of the dataset's keys, half of each
//          one's keys also in the other (older there, so dropped), into
//          4 MiB output blocks in DRAM, without in-block filters (as SSD
//          tables, whose one filter is the same for both formats). Keys
//          alternate between the inputs: runs from one input are 1-2
//          entries long, the hardest case for copying runs as bytes
//   MergeLeveled  the same with a leveled compaction's shape: the newer
//          block holds one key in ten (half of them also in the older
//          block), the older block all the others: runs of ~9 entries
//   Flush  a flush (db/flush.h) of a full 4 MiB memtable, filled in random
//          key order, into one block (KeySet: into a destination sized
//          from the memtable's counters, as the engine's pmem flush does);
//          BM_MemTableWalk is the part both formats share, the walk over
//          the memtable in key order
//   Migrate  moving a pmem table into an SSD table in a file in DRAM, as
//          the engine does when it overlaps nothing below: KeySet writes
//          its one block (4 MiB, with its filter) as its bytes
//          (ssd::TableBuilder::AddWholeBlock); a classic pmem table is
//          already a table image (8 KiB classic blocks, index, table
//          filter), written as is
// Merge, Flush and Migrate count the entries they read.
// Each benchmark runs with repetitions; the closing summary prints the median
// time per operation of both formats and the KeySet speed-up.
//
//   format_bench [--entry_bytes=4194304] [google benchmark flags]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "compaction/merge.h"
#include "db/flush.h"
#include "db/memtable.h"
#include "format/block.h"
#include "jigsaw/file_system.h"
#include "ssd/table.h"
#include "table/merging_iterator.h"
#include "util/memory_file.h"

namespace jigsaw {
namespace {

constexpr size_t kKeySize = 16;
constexpr size_t kValueSize = 100;

struct Dataset {
  std::vector<std::string> keys;  // sorted, unique
  std::vector<std::string> values;
  // The keys in random order, packed back to back, so that producing the next
  // lookup key is a sequential read (as db_bench formats it into a local
  // buffer) and not a cache miss of the harness's own.
  std::string lookup_keys;
  size_t count() const { return keys.size(); }
  Slice LookupKey(size_t i) const { return Slice(lookup_keys.data() + i * kKeySize, kKeySize); }
};

// The block a 4 MiB memtable flushes during db_bench's fillrandom with
// --num=1000000: distinct random keys below 1M, printed as 16 digits.
Dataset MakeDataset(size_t entry_bytes) {
  const size_t count = entry_bytes / (kKeySize + kValueSize);
  const uint64_t key_space = std::max<uint64_t>(1000000, 4 * count);
  std::mt19937_64 rng(2024);
  std::vector<uint64_t> numbers;
  numbers.reserve(count * 2);
  while (numbers.size() < count) {
    for (size_t i = numbers.size(); i < count; ++i) numbers.push_back(rng() % key_space);
    std::sort(numbers.begin(), numbers.end());
    numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  }
  Dataset d;
  for (uint64_t n : numbers) {
    char key[kKeySize + 1];
    std::snprintf(key, sizeof(key), "%016" PRIu64, n);
    d.keys.emplace_back(key, kKeySize);
    std::string value(kValueSize, '\0');
    for (char& c : value) c = static_cast<char>(rng());
    d.values.push_back(std::move(value));
  }
  std::vector<uint32_t> order(d.keys.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<uint32_t>(i);
  std::shuffle(order.begin(), order.end(), rng);
  for (uint32_t i : order) d.lookup_keys += d.keys[i];
  return d;
}

size_t g_entry_bytes = 4 << 20;

const Dataset& GetDataset() {
  static const Dataset dataset = MakeDataset(g_entry_bytes);
  return dataset;
}

// A finished block of one format over the dataset, built once.
struct BuiltBlock {
  std::vector<uint64_t> storage;
  Slice contents;
  std::unique_ptr<BlockReader> reader;
};

size_t Capacity(BlockFormat format, const Dataset& d) {
  size_t capacity = 4096;
  for (size_t i = 0; i < d.keys.size(); ++i) capacity += MaxEntryFootprint(format, kKeySize, kValueSize);
  return capacity;
}

size_t BuildInto(BlockFormat format, const Dataset& d, char* dest, size_t capacity,
                 const BlockBuilderOptions& options = {}) {
  auto builder = NewBlockBuilder(format, options, dest, capacity);
  for (size_t i = 0; i < d.keys.size(); ++i) {
    if (!builder->Add(d.keys[i], 1, ValueType::kValue, d.values[i]).ok()) std::abort();
  }
  size_t size = 0;
  if (!builder->Finish(&size).ok()) std::abort();
  return size;
}

const BuiltBlock& GetBlock(BlockFormat format) {
  static std::map<BlockFormat, BuiltBlock> blocks;
  auto it = blocks.find(format);
  if (it != blocks.end()) return it->second;
  const Dataset& d = GetDataset();
  BuiltBlock& b = blocks[format];
  const size_t capacity = Capacity(format, d);
  b.storage.resize(capacity / 8 + 1);
  char* dest = reinterpret_cast<char*>(b.storage.data());
  b.contents = Slice(dest, BuildInto(format, d, dest, capacity));
  if (!BlockReader::Open(format, b.contents, {}, &b.reader).ok()) std::abort();
  return b;
}

void BuildBenchmark(benchmark::State& state, BlockFormat format, const BlockBuilderOptions& options) {
  const Dataset& d = GetDataset();
  const size_t capacity = Capacity(format, d);
  std::vector<uint64_t> storage(capacity / 8 + 1);
  char* dest = reinterpret_cast<char*>(storage.data());
  size_t size = 0;
  for (auto _ : state) {
    size = BuildInto(format, d, dest, capacity, options);
    benchmark::DoNotOptimize(dest);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * d.keys.size()));
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * d.keys.size() * (kKeySize + kValueSize)));
  state.counters["entries"] = static_cast<double>(d.keys.size());
  state.counters["block_bytes"] = static_cast<double>(size);
}

void BM_Build(benchmark::State& state, BlockFormat format) { BuildBenchmark(state, format, {}); }

// The KeySet block without its Bloom filter: the classic block has no
// filter, so this is the like-for-like cost of the two layouts.
void BM_BuildNoFilter(benchmark::State& state, BlockFormat format) {
  BlockBuilderOptions options;
  options.bloom_bits_per_key = 0;
  BuildBenchmark(state, format, options);
}

// A full forward iteration that reads what db_bench's readseq reads: each
// key (its size and first byte) and each value slice (its size); the caller
// decides whether to touch value bytes.
void BM_Scan(benchmark::State& state, BlockFormat format) {
  const BuiltBlock& b = GetBlock(format);
  auto it = b.reader->NewIterator();
  uint64_t entries = 0;
  for (auto _ : state) {
    uint64_t checksum = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      checksum += it->user_key().size() + static_cast<uint8_t>(it->user_key()[0]) + it->value().size();
      ++entries;
    }
    benchmark::DoNotOptimize(checksum);
  }
  state.SetItemsProcessed(static_cast<int64_t>(entries));
}

void BM_Get(benchmark::State& state, BlockFormat format) {
  const Dataset& d = GetDataset();
  const BuiltBlock& b = GetBlock(format);
  size_t i = 0;
  BlockLookup result;
  for (auto _ : state) {
    const Slice key = d.LookupKey(i);
    if (++i == d.count()) i = 0;
    if (!b.reader->Get(key, kMaxSequenceNumber, &result).ok()) std::abort();
    benchmark::DoNotOptimize(result.value.data()[0]);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

void BM_Seek(benchmark::State& state, BlockFormat format) {
  const Dataset& d = GetDataset();
  const BuiltBlock& b = GetBlock(format);
  auto it = b.reader->NewIterator();
  size_t i = 0;
  for (auto _ : state) {
    const Slice key = d.LookupKey(i);
    if (++i == d.count()) i = 0;
    it->Seek(key);
    if (!it->Valid()) std::abort();
    benchmark::DoNotOptimize(it->value().data()[0]);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()));
}

// An OutputSink that builds blocks of one format into DRAM buffers of
// kOutputBlockBytes, as the pmem sink does before its copy into the pool.
class BufferSink final : public OutputSink {
 public:
  static constexpr size_t kOutputBlockBytes = 4 << 20;
  // `buffer`: at least kBufferWords, reused by every block (as the pmem
  // sink reuses its DRAM buffer).
  static constexpr size_t kBufferWords = 2 * kOutputBlockBytes / 8 + 1;
  BufferSink(BlockFormat format, std::vector<uint64_t>* buffer) : format_(format), buffer_(*buffer) {}

  Status CloseIfFull(size_t key_size, size_t value_size, bool* closed) override {
    *closed = builder_ != nullptr &&
              builder_->CurrentSize() + MaxEntryFootprint(format_, key_size, value_size) > kOutputBlockBytes;
    return *closed ? FinishBlock() : Status::OK();
  }
  Status Add(const InternalIterator& entry) override {
    if (builder_ == nullptr) StartBlock();
    // As the engine's sinks: a hash the entry carries is passed on, else
    // the builder hashes if its filter needs it.
    return entry.carries_key_hash() ? builder_->AddWithHash(entry.user_key(), entry.sequence(), entry.type(),
                                                            entry.value(), entry.key_hash())
                                    : builder_->Add(entry.user_key(), entry.sequence(), entry.type(), entry.value());
  }
  // Runs go where the builders take them, as in the engine's pmem sink.
  bool TakesRuns() const override { return BuilderTakesRuns(format_, Options()); }
  Status AppendRun(const EntryRun& run, uint32_t* taken) override {
    if (builder_ == nullptr) StartBlock();
    *taken = builder_->AppendRun(run, kOutputBlockBytes);
    return Status::OK();
  }
  Status Finish() override { return builder_ == nullptr ? Status::OK() : FinishBlock(); }
  void Abandon() override { builder_.reset(); }

  uint64_t output_entries() const { return output_entries_; }
  uint64_t output_bytes() const { return output_bytes_; }

 private:
  // No in-block filter in either format: as in an SSD table, whose one
  // filter (whatever the block format) is not the format's work.
  static BlockBuilderOptions Options() {
    BlockBuilderOptions options;
    options.bloom_bits_per_key = 0;
    return options;
  }
  void StartBlock() {
    builder_ = NewBlockBuilder(format_, Options(), reinterpret_cast<char*>(buffer_.data()), buffer_.size() * 8);
  }
  Status FinishBlock() {
    size_t size = 0;
    output_entries_ += builder_->num_entries();
    Status s = builder_->Finish(&size);
    output_bytes_ += size;
    builder_.reset();
    return s;
  }

  const BlockFormat format_;
  std::vector<uint64_t>& buffer_;
  std::unique_ptr<BlockBuilder> builder_;
  uint64_t output_entries_ = 0;
  uint64_t output_bytes_ = 0;
};

// Two blocks of one format to merge. Alternating: of the dataset's keys in
// order, one in three goes to `newer` only, one to `older` only and one to
// both. Leveled (an upper level's table against the denser level below):
// one key in ten goes to `newer`, half of those to `older` too, and every
// other key to `older` only.
enum class MergeShape { kAlternating, kLeveled };
struct MergeInputs {
  BuiltBlock newer, older;
};

// 0: newer only, 1: older only, 2: both.
int MergeKind(MergeShape shape, size_t i) {
  if (shape == MergeShape::kAlternating) return static_cast<int>(i % 3);
  return i % 20 == 0 ? 2 : i % 20 == 10 ? 0 : 1;
}

const MergeInputs& GetMergeInputs(BlockFormat format, MergeShape shape) {
  static std::map<std::pair<BlockFormat, MergeShape>, MergeInputs> inputs;
  auto found = inputs.find({format, shape});
  if (found != inputs.end()) return found->second;
  const Dataset& d = GetDataset();
  MergeInputs& m = inputs[{format, shape}];
  for (int which = 0; which < 2; ++which) {
    BuiltBlock& b = which == 0 ? m.newer : m.older;
    const size_t capacity = Capacity(format, d);
    b.storage.resize(capacity / 8 + 1);
    char* dest = reinterpret_cast<char*>(b.storage.data());
    auto builder = NewBlockBuilder(format, {}, dest, capacity);
    for (size_t i = 0; i < d.count(); ++i) {
      const int kind = MergeKind(shape, i);
      if (kind == 2 || kind == which) {
        if (!builder->Add(d.keys[i], which == 0 ? 2 : 1, ValueType::kValue, d.values[i]).ok()) std::abort();
      }
    }
    size_t size = 0;
    if (!builder->Finish(&size).ok()) std::abort();
    b.contents = Slice(dest, size);
    if (!BlockReader::Open(format, b.contents, {}, &b.reader).ok()) std::abort();
  }
  return m;
}

// How the blocks are merged: as the engine merges each format (KeySet
// blocks as bytes through block cursors, classic blocks through iterators),
// or both through iterators (MergingIterator and MergeInto: the same loop
// for both formats, each block's own iterator; a KeySet iterator still
// offers runs to splice).
enum class MergePath { kEngines, kIterators };

void MergeBenchmark(benchmark::State& state, BlockFormat format, MergeShape shape,
                    MergePath path = MergePath::kEngines) {
  const MergeInputs& m = GetMergeInputs(format, shape);
  MergeRules rules;
  rules.ucmp = BytewiseComparator();
  // Every version is older than the oldest snapshot: of a key in both
  // inputs, the older version is dropped.
  rules.smallest_snapshot = 10;
  uint64_t read = 0, spliced = 0;
  uint64_t written = 0, bytes = 0;
  std::vector<uint64_t> buffer(BufferSink::kBufferWords);
  for (auto _ : state) {
    BufferSink sink(format, &buffer);
    // As the engine merges each format: KeySet blocks as bytes, classic
    // blocks through iterators.
    if (format == BlockFormat::kKeySet && path == MergePath::kEngines) {
      std::vector<std::unique_ptr<BlockScan>> scans;
      scans.push_back(NewSingleBlockScan(m.newer.contents));
      scans.push_back(NewSingleBlockScan(m.older.contents));
      if (!MergeBlockScans(std::move(scans), rules, &sink, nullptr, nullptr, &read, &spliced).ok()) std::abort();
    } else {
      std::vector<std::unique_ptr<InternalIterator>> children;
      children.push_back(m.newer.reader->NewIterator());
      children.push_back(m.older.reader->NewIterator());
      auto input = NewMergingIterator(BytewiseComparator(), std::move(children));
      if (!MergeInto(input.get(), rules, &sink, nullptr, &read, &spliced).ok()) std::abort();
    }
    written = sink.output_entries();
    bytes = sink.output_bytes();
  }
  state.SetItemsProcessed(static_cast<int64_t>(read));
  state.counters["output_entries"] = static_cast<double>(written);
  state.counters["output_bytes"] = static_cast<double>(bytes);
  state.counters["spliced_share"] = read > 0 ? static_cast<double>(spliced) / static_cast<double>(read) : 0.0;
}

void BM_Merge(benchmark::State& state, BlockFormat format) { MergeBenchmark(state, format, MergeShape::kAlternating); }
void BM_MergeLeveled(benchmark::State& state, BlockFormat format) {
  MergeBenchmark(state, format, MergeShape::kLeveled);
}
void BM_MergeViaIterators(benchmark::State& state, BlockFormat format) {
  MergeBenchmark(state, format, MergeShape::kAlternating, MergePath::kIterators);
}
void BM_MergeLeveledViaIterators(benchmark::State& state, BlockFormat format) {
  MergeBenchmark(state, format, MergeShape::kLeveled, MergePath::kIterators);
}

// A full memtable of the dataset, filled in random key order as
// fillrandom fills it.
const MemTable& GetMemTable() {
  static const std::unique_ptr<MemTable> mem = [] {
    const Dataset& d = GetDataset();
    auto table = std::make_unique<MemTable>(BytewiseComparator());
    for (size_t i = 0; i < d.count(); ++i) {
      const Slice key = d.LookupKey(i);  // random order
      table->Add(i + 1, ValueType::kValue, key, d.values[i]);
    }
    return table;
  }();
  return *mem;
}

void BM_Flush(benchmark::State& state, BlockFormat format) {
  const MemTable& mem = GetMemTable();
  const Dataset& d = GetDataset();
  const size_t capacity = Capacity(format, d);
  std::vector<uint64_t> storage(capacity / 8 + 1);
  char* dest = reinterpret_cast<char*>(storage.data());
  for (auto _ : state) {
    size_t block_size = 0;
    size_t limit = capacity;
    if (format == BlockFormat::kKeySet) limit = KeySetBlockSizeBound(mem, BlockBuilderOptions());
    if (!BuildMemTableBlock(mem, format, BlockBuilderOptions(), dest, limit, &block_size).ok()) std::abort();
    benchmark::DoNotOptimize(dest);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * mem.num_entries()));
}

// The pmem table Migrate moves: a KeySet block, or the image of a classic
// SSD table (the classic engine's pmem tables), built once.
struct PmemTable {
  std::string image;  // classic
  uint64_t entries = 0;
};
const PmemTable& GetClassicImage() {
  static const PmemTable table = [] {
    PmemTable t;
    const BuiltBlock& block = GetBlock(BlockFormat::kClassic);
    StringWritableFile file(&t.image);
    ssd::TableBuilder builder(BlockBuilderOptions(), 8 << 10, &file, BlockFormat::kClassic);
    auto it = block.reader->NewIterator();
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      if (!builder.Add(it->user_key(), it->sequence(), it->type(), it->value()).ok()) std::abort();
    }
    ssd::TableInfo info;
    if (!builder.Finish(&info).ok()) std::abort();
    t.entries = info.entries;
    return t;
  }();
  return table;
}

// A table file in DRAM: Migrate measures the format's work, not a disk.
void BM_Migrate(benchmark::State& state, BlockFormat format) {
  const Dataset& d = GetDataset();
  std::string table;
  table.reserve(8 << 20);
  uint64_t entries = 0;
  for (auto _ : state) {
    table.clear();
    StringWritableFile file(&table);
    if (format == BlockFormat::kKeySet) {
      const BuiltBlock& pmem_block = GetBlock(BlockFormat::kKeySet);
      ssd::TableBuilder builder(BlockBuilderOptions(), 8 << 10, &file, format);
      if (!builder.AddWholeBlock(pmem_block.contents, d.keys.front(), d.keys.back()).ok()) std::abort();
      ssd::TableInfo info;
      if (!builder.Finish(&info).ok()) std::abort();
      entries += info.entries;
    } else {
      const PmemTable& image = GetClassicImage();
      if (!file.Append(image.image).ok()) std::abort();
      entries += image.entries;
    }
    benchmark::DoNotOptimize(table.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(entries));
  state.counters["table_bytes"] = static_cast<double>(table.size());
}

// The part of a flush both formats share: walking the memtable in key
// order (MemTable::ForEachEntry, as both flushes do), reading each entry's
// key, tag and hash (the skiplist was filled in random order). Flush minus
// this is the block format's own work; for the classic format that
// includes reading each value where it lies in the log.
void BM_MemTableWalk(benchmark::State& state, BlockFormat) {
  const MemTable& mem = GetMemTable();
  for (auto _ : state) {
    uint64_t sum = 0;
    mem.ForEachEntry([&](const MemTable::FlushEntry& e) { sum += e.tag + e.key.size() + e.key_hash; });
    benchmark::DoNotOptimize(sum);
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * mem.num_entries()));
}

// Collects the median of each benchmark for the closing summary.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type == Run::RT_Aggregate && run.aggregate_name == "median") {
        medians_[run.run_name.function_name] = {run.GetAdjustedRealTime(), run.time_unit,
                                                run.counters.count("items_per_second")
                                                    ? double(run.counters.at("items_per_second"))
                                                    : 0.0};
      }
    }
  }

  void PrintSummary() const {
    std::printf("\nSummary: %zu entries (%zu-byte keys, %zu-byte values), median of repetitions\n",
                GetDataset().keys.size(), kKeySize, kValueSize);
    std::printf("%-14s %16s %16s %10s  %s\n", "op", "KeySet ns/entry", "Classic ns/entry", "speed-up", "target");
    for (const char* op : {"Build", "BuildNoFilter", "Scan", "Get", "Seek", "Merge", "MergeLeveled", "Flush", "Migrate"}) {
      const double keyset = NanosPerItem(std::string("BM_KeySet_") + op);
      // Variants without a classic counterpart compare with plain Build.
      double classic = NanosPerItem(std::string("BM_Classic_") + op);
      if (classic <= 0) classic = NanosPerItem("BM_Classic_Build");
      if (keyset <= 0 || classic <= 0) continue;
      std::string target = "-";
      if (std::strcmp(op, "Build") == 0 || std::strcmp(op, "Scan") == 0 || std::strcmp(op, "Merge") == 0 ||
          std::strcmp(op, "Flush") == 0) {
        target = classic / keyset >= 3.0 ? ">= 3x: met" : ">= 3x: MISSED";
      } else if (std::strcmp(op, "Get") == 0) {
        target = keyset <= 400.0 ? "<= 400 ns: met" : "<= 400 ns: MISSED";
      }
      std::printf("%-14s %16.1f %16.1f %9.2fx  %s\n", op, keyset, classic, classic / keyset, target.c_str());
    }
    // The merge gap split: the same iterator loop for both formats (the
    // format's share), then what the KeySet block-cursor loop adds.
    for (const char* shape : {"Merge", "MergeLeveled"}) {
      const double keyset_cursors = NanosPerItem(std::string("BM_KeySet_") + shape);
      const double keyset_iterators = NanosPerItem(std::string("BM_KeySet_") + shape + "ViaIterators");
      const double classic = NanosPerItem(std::string("BM_Classic_") + shape);
      if (keyset_cursors <= 0 || keyset_iterators <= 0 || classic <= 0) continue;
      std::printf("%s through the same iterator loop: KeySet %.1f, classic %.1f ns/entry (%.2fx, the format's "
                  "share); KeySet's block-cursor loop: %.1f ns/entry (%.2fx more)\n",
                  shape, keyset_iterators, classic, classic / keyset_iterators, keyset_cursors,
                  keyset_iterators / keyset_cursors);
    }
    const double walk = NanosPerItem("BM_MemTableWalk");
    const double keyset_flush = NanosPerItem("BM_KeySet_Flush");
    const double classic_flush = NanosPerItem("BM_Classic_Flush");
    if (walk > 0 && keyset_flush > 0 && classic_flush > 0) {
      std::printf("Flush beyond the memtable walk both formats share (%.1f ns/entry): KeySet %.1f, classic %.1f "
                  "ns/entry (%.2fx)\n",
                  walk, keyset_flush - walk, classic_flush - walk,
                  keyset_flush > walk ? (classic_flush - walk) / (keyset_flush - walk) : 0.0);
    }
  }

 private:
  struct Median {
    double time;
    benchmark::TimeUnit unit;
    double items_per_second;
  };
  double NanosPerItem(const std::string& name) const {
    auto it = medians_.find(name);
    if (it == medians_.end() || it->second.items_per_second <= 0) return -1;
    return 1e9 / it->second.items_per_second;
  }
  std::map<std::string, Median> medians_;
};

}  // namespace
}  // namespace jigsaw

int main(int argc, char** argv) {
  using jigsaw::BlockFormat;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--entry_bytes=", 14) == 0) {
      jigsaw::g_entry_bytes = std::strtoull(argv[i] + 14, nullptr, 10);
      for (int j = i; j + 1 < argc; ++j) argv[j] = argv[j + 1];
      --argc;
      --i;
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  struct Op {
    const char* name;
    void (*fn)(benchmark::State&, BlockFormat);
  };
  const Op ops[] = {{"Build", jigsaw::BM_Build}, {"Scan", jigsaw::BM_Scan}, {"Get", jigsaw::BM_Get},
                    {"Seek", jigsaw::BM_Seek},   {"Merge", jigsaw::BM_Merge}, {"MergeLeveled", jigsaw::BM_MergeLeveled},
                    {"Flush", jigsaw::BM_Flush}, {"Migrate", jigsaw::BM_Migrate}};
  auto add = [](const std::string& name, void (*fn)(benchmark::State&, BlockFormat), BlockFormat format) {
    benchmark::RegisterBenchmark(name.c_str(), fn, format)
        ->Repetitions(5)
        ->ReportAggregatesOnly(true)
        ->Unit(benchmark::kNanosecond);
  };
  for (const Op& op : ops) {
    add(std::string("BM_KeySet_") + op.name, op.fn, BlockFormat::kKeySet);
    add(std::string("BM_Classic_") + op.name, op.fn, BlockFormat::kClassic);
    if (op.fn == jigsaw::BM_Build) add("BM_KeySet_BuildNoFilter", jigsaw::BM_BuildNoFilter, BlockFormat::kKeySet);
    if (op.fn == jigsaw::BM_Flush) add("BM_MemTableWalk", jigsaw::BM_MemTableWalk, BlockFormat::kKeySet);
    if (op.fn == jigsaw::BM_Merge) {
      add("BM_KeySet_MergeViaIterators", jigsaw::BM_MergeViaIterators, BlockFormat::kKeySet);
    }
    if (op.fn == jigsaw::BM_MergeLeveled) {
      add("BM_KeySet_MergeLeveledViaIterators", jigsaw::BM_MergeLeveledViaIterators, BlockFormat::kKeySet);
    }
  }
  jigsaw::SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.PrintSummary();
  benchmark::Shutdown();
  return 0;
}
