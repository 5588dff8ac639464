// jigsaw: the command-line tool for JigsawDB databases (docs/tool.md).
//
//   jigsaw info <db>                 mode, formats, levels, pool usage
//   jigsaw get|put|delete <db> ...   one key
//   jigsaw scan <db> [--from K] [--to K] [--limit N] [--hex]
//   jigsaw dump --table <file.jst> | dump <db> --block <number>
//   jigsaw verify <db>               every table checked; exit 3 on damage
//   jigsaw compact <db> | destroy <db> --yes | copy <src> <dst> ...
//
// Every command except `dump --table` opens the database through
// DB::Open, which takes <db>/LOCK (a database open elsewhere is refused)
// and recovers it: the WAL is replayed into a new L0 table and a manifest
// committed, and background compactions may run while it is open. There is
// no read-only open; `info`, `get`, `scan`, `dump --block` and `verify`
// write nothing else.
//
// How a database is opened: its storage mode and pool path are read from
// <db>/IDENTITY (db/db_identity.h) unless --mode / --pmem_path are given;
// the memtable and block sizes are fitted to the pool's size.
//
// Exit codes: 0 ok, 1 usage error, 2 not found (get; dump of a missing
// table), 3 damage found (verify, dump), 4 any other error. Errors go to
// stderr with the Status message.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/db_identity.h"
#include "db/db_impl.h"
#include "format/block.h"
#include "format/keyset_block.h"
#include "jigsaw/db.h"
#include "jigsaw/file_system.h"
#include "jigsaw/version.h"
#include "pmem/pool.h"
#include "pmem/pool_sizing.h"
#include "ssd/block_cache.h"
#include "ssd/table.h"
#include "util/coding.h"
#include "version/filename.h"
#include "version/version.h"

namespace jigsaw::tool {
namespace {

enum ExitCode : int { kOk = 0, kUsage = 1, kNotFound = 2, kDamage = 3, kError = 4 };

// ---------------------------------------------------------------------------
// Text

// Printable ASCII as is, a backslash doubled, any other byte as \xNN: one
// line per key or value, and the original bytes recoverable.
std::string Escape(const Slice& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof(hex), "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}

std::string Hex(const Slice& s) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  out.reserve(2 * s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

// Hex digits (even count) into bytes; false if malformed.
bool FromHex(const std::string& hex, std::string* out) {
  if (hex.size() % 2 != 0) return false;
  out->clear();
  for (size_t i = 0; i < hex.size(); i += 2) {
    int byte = 0;
    for (size_t j = i; j < i + 2; ++j) {
      const char c = hex[j];
      int v;
      if (c >= '0' && c <= '9') {
        v = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        v = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        v = c - 'A' + 10;
      } else {
        return false;
      }
      byte = byte * 16 + v;
    }
    out->push_back(static_cast<char>(byte));
  }
  return true;
}

const char* ModeName(StorageMode mode) {
  switch (mode) {
    case StorageMode::kPmem:
      return "pmem";
    case StorageMode::kHybrid:
      return "hybrid";
    default:
      return "disk";
  }
}

std::optional<StorageMode> ParseMode(const std::string& name) {
  if (name == "pmem") return StorageMode::kPmem;
  if (name == "hybrid") return StorageMode::kHybrid;
  if (name == "disk") return StorageMode::kDisk;
  return std::nullopt;
}

int Fail(const std::string& what, const Status& s, int code = kError) {
  std::cerr << "jigsaw: " << what << ": " << s.ToString() << "\n";
  return code;
}

// The exit code of a failed operation: damage is 3, anything else 4.
int CodeOf(const Status& s) { return s.IsCorruption() ? kDamage : kError; }

// ---------------------------------------------------------------------------
// Opening a database

// The flags every database command takes.
struct DbFlags {
  std::string mode;       // "" = as <db>/IDENTITY records (else Options' default, pmem)
  std::string pmem_path;  // "" = as recorded (else Options' default, <db>/pool)
  // put only: create the database if it does not exist, with a pool of
  // this size (pool modes).
  bool create_if_missing = false;
  uint64_t pool_size_mb = Options().pmem_pool_size >> 20;
};

void AddDbFlags(CLI::App* sub, DbFlags* flags) {
  sub->add_option("--mode", flags->mode,
                  "storage mode: pmem, hybrid or disk (default: what <db>/IDENTITY records; a pool database "
                  "with SSD tables opens as hybrid)")
      ->check(CLI::IsMember({"pmem", "hybrid", "disk"}));
  sub->add_option("--pmem_path", flags->pmem_path,
                  "pool file (default: where <db>/IDENTITY says it was last opened, else <db>/pool)");
}

// True if `dir` holds SSD table files.
bool HasTableFiles(const std::string& dir) {
  std::vector<std::string> children;
  if (!FileSystem::Default()->GetChildren(dir, &children).ok()) return false;
  for (const std::string& child : children) {
    FileType type;
    uint64_t number;
    if (ParseFileName(child, &type, &number) && type == FileType::kTable) return true;
  }
  return false;
}

// Halves memtable_size and block_size (not below 64 KiB) until a pool of
// options->pmem_pool_size holds them (docs/sizing.md).
void FitToPool(Options* options) {
  while (MinimumPoolSize(*options) > options->pmem_pool_size) {
    if (options->memtable_size > (64 << 10)) {
      options->memtable_size /= 2;
    } else if (options->block_size > (64 << 10)) {
      options->block_size /= 2;
    } else {
      return;  // the open will say what does not fit
    }
  }
}

// The Options that open the existing database `db`; *origin says where the
// mode and pool came from.
Options OpenOptionsFor(const std::string& db, const DbFlags& flags, std::string* origin) {
  Options options;
  options.create_if_missing = flags.create_if_missing;
  options.pmem_pool_size = flags.pool_size_mb << 20;
  DatabaseIdentity identity;
  const Status read = ReadIdentity(FileSystem::Default(), db, &identity);
  std::string mode_origin = "--mode", pool_origin = "--pmem_path";
  if (!flags.mode.empty()) {
    options.storage_mode = *ParseMode(flags.mode);
  } else if (read.ok()) {
    options.storage_mode =
        !identity.uses_pool ? StorageMode::kDisk : HasTableFiles(db) ? StorageMode::kHybrid : StorageMode::kPmem;
    mode_origin = "IDENTITY";
  } else {
    mode_origin = "default";
  }
  if (!flags.pmem_path.empty()) {
    options.pmem_path = flags.pmem_path;
  } else if (read.ok() && identity.uses_pool) {
    options.pmem_path = identity.pool_path;
    pool_origin = "IDENTITY";
  } else {
    pool_origin = "default";
  }
  if (options.storage_mode != StorageMode::kDisk) {
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(PoolPathFor(options, db), ec);
    if (!ec && size >= pmem::Pool::kMinPoolSize) options.pmem_pool_size = size;  // not a device-DAX node
    FitToPool(&options);
  }
  *origin = std::string(ModeName(options.storage_mode)) + " (" + mode_origin + ")";
  if (options.storage_mode != StorageMode::kDisk) {
    *origin += ", pool " + PoolPathFor(options, db) + " (" + pool_origin + ")";
  }
  return options;
}

// Opens `db` for a command; on failure prints the error (with a hint when
// the options disagree with the database) and returns its exit code.
int OpenDb(const std::string& db, const DbFlags& flags, std::unique_ptr<DB>* out, Options* used = nullptr,
           std::string* origin_out = nullptr) {
  std::string origin;
  const Options options = OpenOptionsFor(db, flags, &origin);
  if (used != nullptr) *used = options;
  if (origin_out != nullptr) *origin_out = origin;
  const Status s = DB::Open(options, db, out);
  if (s.ok()) return kOk;
  std::cerr << "jigsaw: cannot open " << db << " as " << origin << ": " << s.ToString() << "\n";
  std::error_code ec;
  if (s.IsInvalidArgument() && !options.create_if_missing && !std::filesystem::exists(db, ec)) {
    std::cerr << "jigsaw: there is no database at " << db << "; `jigsaw put --create_if_missing` makes one\n";
  } else if (s.IsInvalidArgument()) {
    std::cerr << "jigsaw: the options disagree with the database; --mode and "
                 "--pmem_path override what <db>/IDENTITY records\n";
  } else if (s.IsIOError() && s.ToString().find("in use") != std::string::npos) {
    std::cerr << "jigsaw: the database is open in another process or handle; the tool never opens it twice\n";
  }
  return CodeOf(s);
}

DBImpl* Impl(DB* db) { return static_cast<DBImpl*>(db); }  // DB::Open makes only DBImpl

// ---------------------------------------------------------------------------
// info

int Info(const std::string& name, const DbFlags& flags) {
  std::unique_ptr<DB> db;
  Options options;
  std::string origin;
  int rc = OpenDb(name, flags, &db, &options, &origin);
  if (rc != kOk) return rc;
  DatabaseIdentity identity;
  const Status id = ReadIdentity(FileSystem::Default(), name, &identity);
  std::printf("database      %s\n", name.c_str());
  std::printf("opened as     %s\n", origin.c_str());
  if (id.ok()) std::printf("database id   %s\n", identity.database_id.c_str());
  std::printf("engine        JigsawDB %s\n", JIGSAW_VERSION_STRING);

  const std::shared_ptr<const Version> version = Impl(db.get())->CurrentVersion();
  // Formats: what this build writes, and the block versions found.
  uint64_t keyset_versions[3] = {0, 0, 0};  // pmem blocks by KeySet version (0: other)
  uint64_t ssd_keyset = 0, ssd_classic = 0;
  for (const auto& level : version->levels) {
    for (const TableRef& t : level) {
      if (t->residence == Residence::kPmem) {
        const uint32_t v = keyset::VersionOf(Impl(db.get())->PmemBlockContents(*t));
        ++keyset_versions[v <= 2 ? v : 0];
      } else if (auto* ssd = dynamic_cast<const ssd::SsdTable*>(t->table.get()); ssd != nullptr) {
        ++(ssd->format() == BlockFormat::kClassic ? ssd_classic : ssd_keyset);
      } else {
        ++ssd_keyset;
      }
    }
  }
  std::printf("formats       IDENTITY %d, pool layout %u, SSD tables %u, KeySet blocks up to v%u\n",
              DatabaseIdentity::kFormatVersion, pmem::Pool::kFormatVersion, ssd::kTableFormatVersion,
              keyset::kLatestVersion);
  std::printf("pmem blocks   %" PRIu64 " KeySet v2, %" PRIu64 " KeySet v1\n", keyset_versions[2], keyset_versions[1]);
  std::printf("SSD tables    %" PRIu64 " of KeySet blocks, %" PRIu64 " of classic blocks\n", ssd_keyset, ssd_classic);

  std::printf("\nlevel  tables  (pmem    ssd)          bytes  entries\n");
  for (int level = 0; level < kNumLevels; ++level) {
    const auto& tables = version->levels[level];
    uint64_t pmem = 0, ssd = 0, entries = 0;
    for (const TableRef& t : tables) {
      (t->residence == Residence::kPmem ? pmem : ssd) += 1;
      entries += t->entries;
    }
    std::printf("L%-5d %6zu  (%4" PRIu64 " %6" PRIu64 ") %14" PRIu64 " %8" PRIu64 "\n", level, tables.size(), pmem,
                ssd, version->LevelBytes(level), entries);
  }

  std::string value;
  std::printf("\n");
  if (db->GetProperty("jigsaw.pmem-bytes", &value)) std::printf("pmem bytes    %s\n", value.c_str());
  if (db->GetProperty("jigsaw.ssd-bytes", &value)) std::printf("ssd bytes     %s\n", value.c_str());
  if (options.storage_mode != StorageMode::kDisk && db->GetProperty("jigsaw.pool-used-bytes", &value)) {
    const uint64_t used = std::stoull(value);
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(PoolPathFor(options, name), ec);
    if (!ec && size > 0) {
      std::printf("pool usage    %s of %s (%.1f%%; blocks, WAL segments and the manifest)\n",
                  FormatBytes(used).c_str(), FormatBytes(size).c_str(), 100.0 * static_cast<double>(used) / size);
    } else {
      std::printf("pool usage    %s\n", FormatBytes(used).c_str());
    }
  }
  if (db->GetProperty("jigsaw.pmem-device", &value)) std::printf("pmem device   %s", value.c_str());
  if (!value.empty() && value.back() != '\n') std::printf("\n");
  if (db->GetProperty("jigsaw.wal-recovery", &value)) std::printf("WAL recovery  %s\n", value.c_str());
  if (db->GetProperty("jigsaw.io", &value)) std::printf("SSD I/O       %s\n", value.c_str());
  if (db->GetProperty("jigsaw.stats", &value)) std::printf("\nstatistics (jigsaw.stats) since this open:\n%s", value.c_str());
  return kOk;
}

// ---------------------------------------------------------------------------
// get, put, delete, scan

// A key argument: as given, or hex-decoded with --key_hex.
bool DecodeKey(const std::string& arg, bool key_hex, std::string* key) {
  if (!key_hex) {
    *key = arg;
    return true;
  }
  if (FromHex(arg, key)) return true;
  std::cerr << "jigsaw: --key_hex: not an even number of hex digits: " << arg << "\n";
  return false;
}

int Get(const std::string& name, const DbFlags& flags, const std::string& key, bool hex) {
  std::unique_ptr<DB> db;
  int rc = OpenDb(name, flags, &db);
  if (rc != kOk) return rc;
  std::string value;
  const Status s = db->Get(ReadOptions(), key, &value);
  if (s.IsNotFound()) {
    std::cerr << "jigsaw: " << Escape(key) << ": not found\n";
    return kNotFound;
  }
  if (!s.ok()) return Fail("get " + Escape(key), s, CodeOf(s));
  std::printf("%s\n", (hex ? Hex(value) : Escape(value)).c_str());
  return kOk;
}

int Put(const std::string& name, const DbFlags& flags, const std::string& key, const std::string& value) {
  std::unique_ptr<DB> db;
  int rc = OpenDb(name, flags, &db);
  if (rc != kOk) return rc;
  WriteOptions sync;
  sync.sync = true;
  const Status s = db->Put(sync, key, value);
  return s.ok() ? kOk : Fail("put " + Escape(key), s, CodeOf(s));
}

int Delete(const std::string& name, const DbFlags& flags, const std::string& key) {
  std::unique_ptr<DB> db;
  int rc = OpenDb(name, flags, &db);
  if (rc != kOk) return rc;
  WriteOptions sync;
  sync.sync = true;
  const Status s = db->Delete(sync, key);
  return s.ok() ? kOk : Fail("delete " + Escape(key), s, CodeOf(s));
}

struct ScanFlags {
  std::string from, to;
  bool has_from = false, has_to = false;
  uint64_t limit = 0;  // 0: no limit
  bool hex = false;
};

int Scan(const std::string& name, const DbFlags& flags, const ScanFlags& scan) {
  std::unique_ptr<DB> db;
  int rc = OpenDb(name, flags, &db);
  if (rc != kOk) return rc;
  ReadOptions read;
  read.verify_checksums = true;
  std::unique_ptr<Iterator> it = db->NewIterator(read);
  const Comparator* ucmp = BytewiseComparator();
  uint64_t n = 0;
  for (scan.has_from ? it->Seek(scan.from) : it->SeekToFirst(); it->Valid(); it->Next()) {
    if (scan.has_to && ucmp->Compare(it->key(), scan.to) >= 0) break;
    if (scan.limit != 0 && n == scan.limit) break;
    const std::string key = scan.hex ? Hex(it->key()) : Escape(it->key());
    const std::string value = scan.hex ? Hex(it->value()) : Escape(it->value());
    std::printf("%s\t%s\n", key.c_str(), value.c_str());
    ++n;
  }
  const Status s = it->status();
  if (!s.ok()) return Fail("scan", s, CodeOf(s));
  return kOk;
}

// ---------------------------------------------------------------------------
// dump

struct DumpFlags {
  std::string table_path;     // --table
  std::string db;             // <db> with --block
  uint64_t block = 0;         // --block
  bool has_block = false;
  bool values = false;        // print values, not only their sizes
};

// The header fields of a KeySet block (docs/format.md, "Header").
void PrintKeySetHeader(const Slice& block, const char* indent) {
  if (block.size() < keyset::kHeaderSize) {
    std::printf("%s(%zu bytes: shorter than a KeySet header)\n", indent, block.size());
    return;
  }
  const char* h = block.data();
  using namespace keyset::hdr;
  const uint32_t version = DecodeFixed32(h + kVersion);
  const uint64_t magic = DecodeFixed64(h + kMagic);
  std::printf("%smagic %016" PRIx64 "%s, format_version %u, header_size %u, block_size %" PRIu64 "\n", indent, magic,
              magic == keyset::kMagic ? " (JIGSAWKS)" : " (not a KeySet block)", version,
              DecodeFixed32(h + kHeaderSize), DecodeFixed64(h + kBlockSize));
  std::printf("%sflags %#x, entry_count %u, value_buffer_size %" PRIu64 ", keyset_offset %" PRIu64
              ", keyset_size %" PRIu64 "\n",
              indent, DecodeFixed32(h + kFlags), DecodeFixed32(h + kEntryCount), DecodeFixed64(h + kValueBufferSize),
              DecodeFixed64(h + kKeySetOffset), DecodeFixed64(h + kKeySetSize));
  std::printf("%s%s %" PRIu64 ", %s %" PRIu64 ", bloom_offset %" PRIu64 ", bloom_lines %u, bloom_probes %u\n", indent,
              version == 1 ? "entry_offsets_offset" : "samples_offset", DecodeFixed64(h + kEntryOffsetsOffset),
              version == 1 ? "key_heads_offset" : "sample_heads_offset", DecodeFixed64(h + kKeyHeadsOffset),
              DecodeFixed64(h + kBloomOffset), DecodeFixed32(h + kBloomLines), DecodeFixed32(h + kBloomProbes));
  std::printf("%skey_head_skip %u, max_height %u, comparator_id %08x, checksum %08x\n", indent,
              DecodeFixed32(h + kKeyHeadSkip), DecodeFixed32(h + kMaxHeightUsed), DecodeFixed32(h + kComparatorId),
              DecodeFixed32(h + kChecksum));
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

// The footer fields of an SSD table (docs/ssd_format.md); false if they
// cannot be read.
bool PrintFooter(const RandomAccessFile& file, uint64_t* index_offset, uint64_t* index_size) {
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
  const char* p = f.data();
  const std::string magic(p, 8);
  *index_offset = DecodeFixed64(p + 16);
  *index_size = DecodeFixed64(p + 24);
  std::printf("footer: magic %s, version %u, block_format %u, index_offset %" PRIu64 ", index_size %" PRIu64
              ", entries %" PRIu64 ", index_crc %08x, footer_crc %08x\n",
              Escape(magic).c_str(), DecodeFixed32(p + 8), DecodeFixed32(p + 12), *index_offset, *index_size,
              DecodeFixed64(p + 32), DecodeFixed32(p + 40), DecodeFixed32(p + 44));
  return true;
}

// The offset of each block, from the table's index (already checked by
// SsdTable::Open); empty if it cannot be parsed.
std::vector<uint64_t> BlockOffsets(const RandomAccessFile& file, uint64_t index_offset, uint64_t index_size) {
  std::vector<uint64_t> offsets;
  std::string buffer(index_size, '\0');
  Slice index;
  if (!file.Read(index_offset, index_size, buffer.data(), &index).ok() || index.size() != index_size ||
      index_size < 8) {
    return offsets;
  }
  const char* p = index.data();
  const char* end = p + index.size();
  const uint32_t count = DecodeFixed32(p);
  p += 8;
  for (uint32_t i = 0; i < count; ++i) {
    if (end - p < 24) return {};
    offsets.push_back(DecodeFixed64(p));
    const uint64_t keys = uint64_t{DecodeFixed32(p + 16)} + DecodeFixed32(p + 20);
    const uint64_t entry = (24 + keys + 7) & ~uint64_t{7};
    if (static_cast<uint64_t>(end - p) < entry) return {};
    p += entry;
  }
  return offsets;
}

int DumpTableFile(const std::string& path, bool values) {
  std::unique_ptr<RandomAccessFile> file;
  Status s = FileSystem::Default()->NewRandomAccessFile(path, &file);
  if (!s.ok()) return Fail("cannot open " + path, s, s.IsNotFound() ? kNotFound : kError);
  std::printf("SSD table %s, %" PRIu64 " bytes\n", path.c_str(), file->Size());
  uint64_t index_offset = 0, index_size = 0;
  if (!PrintFooter(*file, &index_offset, &index_size)) return kDamage;
  const std::vector<uint64_t> offsets = BlockOffsets(*file, index_offset, index_size);

  FileType type;
  uint64_t number = 0;
  if (!ParseFileName(std::filesystem::path(path).filename().string(), &type, &number)) number = 0;
  ssd::BlockCache cache(0);  // every block read afresh
  ssd::SsdTableOptions options;
  options.cache = &cache;
  options.verify_checksums = true;
  std::unique_ptr<ssd::SsdTable> table;
  s = ssd::SsdTable::Open(options, std::move(file), number, path, &table);
  if (!s.ok()) return Fail("cannot read " + path, s, CodeOf(s));
  std::printf("table: %u blocks of %s format, %" PRIu64 " entries, keys %s .. %s\n", table->num_blocks(),
              BlockFormatName(table->format()), table->num_entries(), Escape(table->smallest()).c_str(),
              Escape(table->largest()).c_str());
  bool intact = true;
  for (uint32_t i = 0; i < table->num_blocks(); ++i) {
    std::printf("block %u", i);
    if (i < offsets.size()) std::printf(" at offset %" PRIu64, offsets[i]);
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

int DumpDbBlock(const std::string& name, const DbFlags& flags, uint64_t number, bool values) {
  std::unique_ptr<DB> db;
  int rc = OpenDb(name, flags, &db);
  if (rc != kOk) return rc;
  const std::shared_ptr<const Version> version = Impl(db.get())->CurrentVersion();
  for (int level = 0; level < kNumLevels; ++level) {
    for (const TableRef& t : version->levels[level]) {
      if (t->number != number) continue;
      if (t->residence == Residence::kSsd) {
        std::printf("table %" PRIu64 " at level %d is an SSD table\n", number, level);
        return DumpTableFile(TableFileName(name, number), values);
      }
      const Slice contents = Impl(db.get())->PmemBlockContents(*t);
      std::printf("pmem block %" PRIu64 " at level %d: pool object at offset %" PRIu64 ", %" PRIu64
                  " bytes, %" PRIu64 " entries, keys %s .. %s\n",
                  number, level, t->offset, t->size, t->entries, Escape(t->smallest).c_str(),
                  Escape(t->largest).c_str());
      if (!DumpBlock(BlockFormat::kKeySet, contents, values, "  ")) {
        std::cerr << "jigsaw: block " << number << ": damage found (see the dump)\n";
        return kDamage;
      }
      return kOk;
    }
  }
  std::cerr << "jigsaw: " << name << " has no table numbered " << number << " (jigsaw verify --verbose lists them)\n";
  return kNotFound;
}

// ---------------------------------------------------------------------------
// verify

int Verify(const std::string& name, const DbFlags& flags, bool verbose) {
  std::unique_ptr<DB> db;
  // Opening already checks every pmem block's checksum and every SSD
  // table's footer and index: damage there fails the open (exit 3).
  int rc = OpenDb(name, flags, &db);
  if (rc != kOk) return rc;
  DBImpl* impl = Impl(db.get());
  const std::shared_ptr<const Version> version = impl->CurrentVersion();
  const Comparator* ucmp = BytewiseComparator();
  uint64_t tables = 0, damaged = 0;
  for (int level = 0; level < kNumLevels; ++level) {
    const auto& run = version->levels[level];
    for (size_t i = 0; i < run.size(); ++i) {
      const TableMeta& t = *run[i];
      ++tables;
      const std::string what = std::string(t.residence == Residence::kPmem ? "pmem block " : "SSD table ") +
                               std::to_string(t.number) + " at level " + std::to_string(level) +
                               (t.residence == Residence::kSsd ? " (" + TableFileName(name, t.number) + ")" : "");
      std::vector<std::string> problems;
      const Status s = impl->VerifyTable(t);
      if (!s.ok()) problems.push_back(s.ToString());
      if (t.entries == 0 || ucmp->Compare(t.smallest, t.largest) > 0) problems.push_back("empty or inverted key range");
      if (level > 0 && i > 0 && ucmp->Compare(run[i - 1]->largest, t.smallest) > 0) {
        problems.push_back("overlaps table " + std::to_string(run[i - 1]->number) + " before it in its level");
      }
      if (!problems.empty()) ++damaged;
      for (const std::string& p : problems) std::printf("DAMAGED %s: %s\n", what.c_str(), p.c_str());
      if (problems.empty() && verbose) {
        std::printf("ok      %s: %" PRIu64 " bytes, %" PRIu64 " entries, keys %s .. %s\n", what.c_str(), t.size,
                    t.entries, Escape(t.smallest).c_str(), Escape(t.largest).c_str());
      }
    }
  }
  std::printf("%" PRIu64 " table(s) checked, %" PRIu64 " damaged\n", tables, damaged);
  if (damaged > 0) {
    std::cerr << "jigsaw: " << name << ": " << damaged << " damaged table(s)\n";
    return kDamage;
  }
  return kOk;
}

// ---------------------------------------------------------------------------
// compact, destroy, copy

int Compact(const std::string& name, const DbFlags& flags) {
  std::unique_ptr<DB> db;
  int rc = OpenDb(name, flags, &db);
  if (rc != kOk) return rc;
  const Status s = db->CompactRange(nullptr, nullptr);
  if (!s.ok()) return Fail("compact " + name, s, CodeOf(s));
  std::string levels;
  if (db->GetProperty("jigsaw.levels", &levels)) std::printf("%s", levels.c_str());
  return kOk;
}

int Destroy(const std::string& name, const DbFlags& flags, bool yes) {
  if (!yes) {
    std::cerr << "jigsaw: destroy deletes " << name << " and its pool for good; add --yes to do it\n";
    return kUsage;
  }
  std::error_code ec;
  if (!std::filesystem::is_directory(name, ec)) {
    return Fail("destroy " + name, Status::NotFound(name, "no such database directory"));
  }
  std::string origin;
  const Options options = OpenOptionsFor(name, flags, &origin);
  const Status s = DestroyDB(name, options);
  if (!s.ok()) return Fail("destroy " + name, s, CodeOf(s));
  std::printf("destroyed %s (%s)\n", name.c_str(), origin.c_str());
  return kOk;
}

struct CopyFlags {
  DbFlags from;            // --from_mode, --from_pmem_path
  std::string mode;        // destination; "" = the source's
  std::string pmem_path;   // destination pool; "" = <dst>/pool
  uint64_t pool_size_mb = Options().pmem_pool_size >> 20;
};

int Copy(const std::string& from, const std::string& to, const CopyFlags& flags) {
  std::string origin;
  const Options from_options = OpenOptionsFor(from, flags.from, &origin);
  Options to_options;
  to_options.storage_mode = flags.mode.empty() ? from_options.storage_mode : *ParseMode(flags.mode);
  to_options.pmem_path = flags.pmem_path;
  to_options.pmem_pool_size = flags.pool_size_mb << 20;
  if (to_options.storage_mode != StorageMode::kDisk) FitToPool(&to_options);
  const Status s = CopyDB(from, from_options, to, to_options);
  if (!s.ok()) {
    std::cerr << "jigsaw: copy " << from << " (" << origin << ") into " << to << ": " << s.ToString() << "\n";
    return CodeOf(s);
  }
  std::printf("copied %s into %s (%s", from.c_str(), to.c_str(), ModeName(to_options.storage_mode));
  if (to_options.storage_mode != StorageMode::kDisk) {
    std::printf(", pool %s of %" PRIu64 " MiB", PoolPathFor(to_options, to).c_str(), flags.pool_size_mb);
  }
  std::printf(")\n");
  return kOk;
}

// ---------------------------------------------------------------------------

int Main(int argc, char** argv) {
  CLI::App app("jigsaw: inspect, check, copy and destroy JigsawDB databases (docs/tool.md).\n"
               "Every command but `dump --table` opens the database with DB::Open: it takes <db>/LOCK and\n"
               "recovers the database (replays its WAL into a table and commits a manifest); there is no\n"
               "read-only open. Exit codes: 0 ok, 1 usage, 2 not found, 3 damage found, 4 other errors.");
  app.require_subcommand(1);
  app.set_version_flag("--version", JIGSAW_VERSION_STRING);

  std::string db, key, value;
  DbFlags flags;
  bool hex = false, key_hex = false;
  int rc = kOk;

  CLI::App* info = app.add_subcommand("info", "mode, formats, levels (tables and bytes), pool usage, statistics");
  info->add_option("db", db, "database directory")->required();
  AddDbFlags(info, &flags);
  info->callback([&] { rc = Info(db, flags); });

  CLI::App* get = app.add_subcommand("get", "print the value of a key (exit 2 if it is not found)");
  get->add_option("db", db, "database directory")->required();
  get->add_option("key", key, "the key")->required();
  get->add_flag("--hex", hex, "print the value in hex (default: escaped, non-printable bytes as \\xNN)");
  get->add_flag("--key_hex", key_hex, "the key is given in hex");
  AddDbFlags(get, &flags);
  get->callback([&] {
    std::string k;
    rc = DecodeKey(key, key_hex, &k) ? Get(db, flags, k, hex) : kUsage;
  });

  CLI::App* put = app.add_subcommand("put", "write a key and value (a sync write)");
  put->add_option("db", db, "database directory")->required();
  put->add_option("key", key, "the key")->required();
  put->add_option("value", value, "the value")->required();
  put->add_flag("--key_hex", key_hex, "the key and the value are given in hex");
  put->add_flag("--create_if_missing", flags.create_if_missing,
                "create the database (in --mode, default pmem) if it does not exist");
  put->add_option("--pool_size_mb", flags.pool_size_mb, "with --create_if_missing: the new pool's size in MiB")
      ->check(CLI::Range(uint64_t{16}, uint64_t{1} << 24))
      ->capture_default_str();
  AddDbFlags(put, &flags);
  put->callback([&] {
    std::string k, v;
    rc = DecodeKey(key, key_hex, &k) && DecodeKey(value, key_hex, &v) ? Put(db, flags, k, v) : kUsage;
  });

  CLI::App* del = app.add_subcommand("delete", "delete a key (a sync write; deleting a missing key is no error)");
  del->add_option("db", db, "database directory")->required();
  del->add_option("key", key, "the key")->required();
  del->add_flag("--key_hex", key_hex, "the key is given in hex");
  AddDbFlags(del, &flags);
  del->callback([&] {
    std::string k;
    rc = DecodeKey(key, key_hex, &k) ? Delete(db, flags, k) : kUsage;
  });

  ScanFlags scan_flags;
  CLI::App* scan = app.add_subcommand("scan", "print keys and values in order, one pair a line, tab-separated");
  scan->add_option("db", db, "database directory")->required();
  CLI::Option* from = scan->add_option("--from", scan_flags.from, "first key (inclusive)");
  CLI::Option* to = scan->add_option("--to", scan_flags.to, "end key (exclusive)");
  scan->add_option("--limit", scan_flags.limit, "at most this many pairs (0: all)");
  scan->add_flag("--hex", scan_flags.hex, "keys and values in hex (default: escaped, non-printable bytes as \\xNN)");
  scan->add_flag("--key_hex", key_hex, "--from and --to are given in hex");
  AddDbFlags(scan, &flags);
  scan->callback([&] {
    scan_flags.has_from = from->count() > 0;
    scan_flags.has_to = to->count() > 0;
    std::string f = scan_flags.from, t = scan_flags.to;
    if ((scan_flags.has_from && !DecodeKey(scan_flags.from, key_hex, &f)) ||
        (scan_flags.has_to && !DecodeKey(scan_flags.to, key_hex, &t))) {
      rc = kUsage;
      return;
    }
    scan_flags.from = f;
    scan_flags.to = t;
    rc = Scan(db, flags, scan_flags);
  });

  DumpFlags dump_flags;
  CLI::App* dump = app.add_subcommand(
      "dump", "one SSD table file (--table, no database opened) or one table of a database by number (<db> --block): "
              "header fields and entries");
  dump->add_option("db", dump_flags.db, "database directory (with --block)");
  CLI::Option* table_opt = dump->add_option("--table", dump_flags.table_path, "an SSD table file (<number>.jst)");
  CLI::Option* block_opt =
      dump->add_option("--block", dump_flags.block, "table number in the database (pmem block or SSD table)");
  table_opt->excludes(block_opt);
  dump->add_flag("--values", dump_flags.values, "print the values (default: their sizes)");
  AddDbFlags(dump, &flags);
  dump->callback([&] {
    if (table_opt->count() > 0) {
      if (!dump_flags.db.empty()) {
        std::cerr << "jigsaw: dump --table takes no database\n";
        rc = kUsage;
        return;
      }
      rc = DumpTableFile(dump_flags.table_path, dump_flags.values);
    } else if (block_opt->count() > 0 && !dump_flags.db.empty()) {
      rc = DumpDbBlock(dump_flags.db, flags, dump_flags.block, dump_flags.values);
    } else {
      std::cerr << "jigsaw: dump needs --table <file> or <db> --block <number>\n";
      rc = kUsage;
    }
  });

  bool verbose = false;
  CLI::App* verify = app.add_subcommand(
      "verify", "check every table (checksums, structure, key ranges, level order); exit 3 naming each damaged one");
  verify->add_option("db", db, "database directory")->required();
  verify->add_flag("--verbose", verbose, "list every table checked");
  AddDbFlags(verify, &flags);
  verify->callback([&] { rc = Verify(db, flags, verbose); });

  CLI::App* compact = app.add_subcommand("compact", "compact the whole key range down to the last level");
  compact->add_option("db", db, "database directory")->required();
  AddDbFlags(compact, &flags);
  compact->callback([&] { rc = Compact(db, flags); });

  bool yes = false;
  CLI::App* destroy = app.add_subcommand("destroy", "delete the database and its pool (needs --yes)");
  destroy->add_option("db", db, "database directory")->required();
  destroy->add_flag("--yes", yes, "really destroy it");
  AddDbFlags(destroy, &flags);
  destroy->callback([&] { rc = Destroy(db, flags, yes); });

  CopyFlags copy_flags;
  std::string dst;
  CLI::App* copy = app.add_subcommand(
      "copy", "copy every live key into a new database, of another mode or pool size (the way out of a full pool)");
  copy->add_option("src", db, "source database directory")->required();
  copy->add_option("dst", dst, "new database directory (must not exist)")->required();
  copy->add_option("--mode", copy_flags.mode, "the new database's storage mode (default: the source's)")
      ->check(CLI::IsMember({"pmem", "hybrid", "disk"}));
  copy->add_option("--pmem_path", copy_flags.pmem_path,
                   "the new database's pool file (default: <dst>/pool, which must be on tmpfs)");
  copy->add_option("--pool_size_mb", copy_flags.pool_size_mb, "the new pool's size in MiB")
      ->check(CLI::Range(uint64_t{16}, uint64_t{1} << 24))
      ->capture_default_str();
  copy->add_option("--from_mode", copy_flags.from.mode, "the source's storage mode (default: as recorded)")
      ->check(CLI::IsMember({"pmem", "hybrid", "disk"}));
  copy->add_option("--from_pmem_path", copy_flags.from.pmem_path, "the source's pool file (default: as recorded)");
  copy->callback([&] { rc = Copy(db, dst, copy_flags); });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, the version or the error
    return code == 0 ? kOk : kUsage;
  }
  return rc;
}

}  // namespace
}  // namespace jigsaw::tool

int main(int argc, char** argv) { return jigsaw::tool::Main(argc, argv); }
