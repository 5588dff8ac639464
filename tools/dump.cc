// jigsaw dump: a table file's or a database table's footer, index and
// blocks, entry by entry (docs/tool.md).
#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "format/block.h"
#include "format/keyset_block.h"
#include "jigsaw/file_system.h"
#include "ssd/table.h"
#include "tools/tool.h"
#include "util/memory_file.h"
#include "version/filename.h"

namespace jigsaw::tool {
namespace {

// The header fields of a KeySet block (docs/format.md, "Header").
void PrintKeySetHeader(const Slice& block, const char* indent) {
  std::fputs(keyset::DescribeHeader(block, indent).c_str(), stdout);
}

// Prints every entry `reader` yields; false if the iteration met damage.
bool PrintEntries(const BlockReader& reader, bool values, const char* indent) {
  std::unique_ptr<InternalIterator> it = reader.NewIterator();
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const bool deletion = it->type() == ValueType::kDeletion;
    std::printf("%skey %s seq %" PRIu64 " %s", indent, Escape(it->user_key()).c_str(), it->sequence(),
                deletion ? "deletion" : "value");
    if (deletion) {
      std::printf("\n");
    } else if (values) {
      std::printf(" %s\n", Escape(it->value()).c_str());
    } else {
      std::printf(" size %zu\n", it->value().size());
    }
  }
  if (!it->status().ok()) {
    std::printf("%s%s\n", indent, it->status().ToString().c_str());
    return false;
  }
  return true;
}

// Dumps one block's header and entries; false if damage was found.
// `contents` must be 8-byte aligned.
bool DumpBlock(BlockFormat format, const Slice& contents, bool values, const char* indent) {
  if (format == BlockFormat::kKeySet) PrintKeySetHeader(contents, indent);
  BlockReadOptions checked;
  std::unique_ptr<BlockReader> reader;
  Status s = BlockReader::Open(format, contents, checked, &reader);
  bool intact = s.ok();
  if (!s.ok()) {
    std::printf("%schecksum/header check: %s\n", indent, s.ToString().c_str());
    BlockReadOptions unchecked;  // show what can still be read (bounds are checked)
    unchecked.verify_checksum = false;
    if (!BlockReader::Open(format, contents, unchecked, &reader).ok()) return false;
  } else {
    std::printf("%s%s block, %" PRIu64 " entries, checksum ok\n", indent, BlockFormatName(format),
                reader->num_entries());
  }
  if (!PrintEntries(*reader, values, indent)) intact = false;
  return intact;
}

// The footer fields of an SSD table (docs/ssd_format.md), checked or not;
// false if they cannot be read.
bool PrintFooter(const RandomAccessFile& file) {
  const uint64_t size = file.Size();
  if (size < ssd::kTableFooterSize) {
    std::printf("file of %" PRIu64 " bytes: shorter than a footer\n", size);
    return false;
  }
  char scratch[ssd::kTableFooterSize];
  Slice f;
  if (!file.Read(size - ssd::kTableFooterSize, ssd::kTableFooterSize, scratch, &f).ok() ||
      f.size() != ssd::kTableFooterSize) {
    std::printf("footer unreadable\n");
    return false;
  }
  const ssd::TableFooter footer = ssd::TableFooter::DecodeFrom(f.data());
  std::printf("footer: magic %s, version %u, block_format %u, index_offset %" PRIu64 ", index_size %" PRIu64
              ", entries %" PRIu64 ", index_crc %08x, footer_crc %08x\n",
              Escape(std::string(f.data(), 8)).c_str(), footer.version, footer.block_format, footer.index_offset,
              footer.index_size, footer.entries, footer.index_crc, footer.footer_crc);
  return true;
}

// Dumps the table `file` (table `number`, `path` in messages): its footer,
// index and every block.
int DumpTable(std::unique_ptr<RandomAccessFile> file, uint64_t number, const std::string& path, bool values) {
  if (!PrintFooter(*file)) return kDamage;

  ssd::BlockCache cache(0);  // every block read afresh
  ssd::SsdTableOptions options;
  options.cache = &cache;
  options.verify_checksums = true;
  std::unique_ptr<ssd::SsdTable> table;
  Status s = ssd::SsdTable::Open(options, std::move(file), number, path, &table);
  if (!s.ok()) return Fail("cannot read " + path, s, CodeOf(s));
  std::printf("table: %u blocks of %s format, %" PRIu64 " entries, keys %s .. %s\n", table->num_blocks(),
              BlockFormatName(table->format()), table->num_entries(), Escape(table->smallest()).c_str(),
              Escape(table->largest()).c_str());
  bool intact = true;
  for (uint32_t i = 0; i < table->num_blocks(); ++i) {
    std::printf("block %u at offset %" PRIu64, i, table->block_offset(i));
    const ssd::StoredCodec codec = table->block_codec(i);
    if (codec != ssd::StoredCodec::kRaw) {
      std::printf(", %s, %" PRIu64 " bytes stored", ssd::CodecName(codec),
                  table->block_stored_bytes(i));
    }
    std::printf(":\n");
    ssd::CachedBlockRef block;
    s = table->ReadBlock(i, /*verify=*/false, &block);
    if (!s.ok()) {
      std::printf("  %s\n", s.ToString().c_str());
      intact = false;
      continue;
    }
    if (!DumpBlock(table->format(), Slice(block->data(), block->size), values, "  ")) intact = false;
  }
  if (!intact) {
    std::cerr << "jigsaw: " << path << ": damage found (see the dump)\n";
    return kDamage;
  }
  return kOk;
}

}  // namespace

int DumpTableFile(const std::string& path, bool values) {
  std::unique_ptr<RandomAccessFile> file;
  Status s = FileSystem::Default()->NewRandomAccessFile(path, &file);
  if (!s.ok()) return Fail("cannot open " + path, s, s.IsNotFound() ? kNotFound : kError);
  std::printf("SSD table %s, %" PRIu64 " bytes\n", path.c_str(), file->Size());
  FileType type;
  uint64_t number = 0;
  if (!ParseFileName(std::filesystem::path(path).filename().string(), &type, &number)) number = 0;
  return DumpTable(std::move(file), number, path, values);
}

int DumpDbTable(const std::string& name, const DbFlags& flags, uint64_t number, bool values) {
  std::unique_ptr<DB> db;
  int rc = OpenDb(name, flags, &db);
  if (rc != kOk) return rc;
  std::vector<LiveTableMetaData> tables;
  db->GetLiveTablesMetaData(&tables);
  for (const LiveTableMetaData& t : tables) {
    if (t.number != number) continue;
    if (t.storage == TableStorage::kSsdTable) {
      std::printf("table %" PRIu64 " at level %d is an SSD table\n", number, t.level);
      return DumpTableFile(t.file_name, values);
    }
    std::string contents;
    const Status s = db->GetTableContents(number, &contents);
    if (!s.ok()) return Fail("table " + std::to_string(number), s, CodeOf(s));
    const bool image = t.storage == TableStorage::kPmemTableImage;
    std::printf("pmem %s %" PRIu64 " at level %d: pool object at offset %" PRIu64 ", %" PRIu64 " bytes, %" PRIu64
                " entries, keys %s .. %s\n",
                image ? "table image" : "block", number, t.level, t.pool_offset, t.size, t.entries,
                Escape(t.smallest_key).c_str(), Escape(t.largest_key).c_str());
    if (image) {
      return DumpTable(std::make_unique<MemoryRandomAccessFile>(Slice(contents)), number,
                       "pmem table image " + std::to_string(number), values);
    }
    if (!DumpBlock(BlockFormat::kKeySet, contents, values, "  ")) {
      std::cerr << "jigsaw: block " << number << ": damage found (see the dump)\n";
      return kDamage;
    }
    return kOk;
  }
  std::cerr << "jigsaw: " << name << " has no table numbered " << number << " (jigsaw verify --verbose lists them)\n";
  return kNotFound;
}

}  // namespace jigsaw::tool
