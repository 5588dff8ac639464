// jigsaw: the command-line tool for JigsawDB databases (docs/tool.md).
//
//   jigsaw info <db>                 mode, formats, levels, pool usage
//   jigsaw get|put|delete <db> ...   one key
//   jigsaw delete-range <db> <begin> <end>   every key in [begin, end)
//   jigsaw scan <db> [--from K] [--to K] [--limit N] [--hex]
//   jigsaw dump --table <file.jst> | dump <db> --number <number>
//   jigsaw verify <db>               every table checked; exit 3 on damage
//   jigsaw compact <db> | destroy <db> --yes | copy <src> <dst> ...
//   jigsaw checkpoint <db> <dir>     a disk-mode copy, tables hard-linked
//   jigsaw updates <db> --since N    the change feed: every batch from N on
//   jigsaw ingest <db> <file>...     bulk ingest of TableFileWriter files
//   jigsaw --cluster A,B,C put|get|delete|scan|status|load|verify ...
//                                    a replicated database's clients
//                                    (tools/cluster.cc)
//
// Every command except `dump --table` opens the database through
// DB::Open, which takes <db>/LOCK (a database open elsewhere is refused)
// and recovers it: the WAL is replayed into a new L0 table and a manifest
// committed, and background compactions may run while it is open; `info`,
// `get`, `scan`, `dump --number` and `verify` write nothing else. With
// --read_only, `info`, `get`, `scan`, `verify` and `checkpoint` open a
// disk-mode database with DB::OpenForReadOnly instead: no lock, nothing
// written, beside a process that has it open.
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
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "db/db_identity.h"
#include "format/block.h"
#include "format/keyset_block.h"
#include "jigsaw/db.h"
#include "jigsaw/file_system.h"
#include "jigsaw/version.h"
#include "pmem/pool.h"
#include "pmem/pool_sizing.h"
#include "ssd/block_cache.h"
#include "ssd/table.h"
#include "tools/cluster.h"
#include "tools/tool.h"
#include "util/coding.h"
#include "util/memory_file.h"
#include "version/filename.h"

namespace jigsaw::tool {
namespace {


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

  std::vector<LiveTableMetaData> tables;
  db->GetLiveTablesMetaData(&tables);
  // Formats: what this build writes, and the block versions found.
  std::map<uint32_t, uint64_t> keyset_versions;  // pmem blocks by KeySet version
  uint64_t pmem_images = 0, ssd_keyset = 0, ssd_classic = 0;
  struct LevelSummary {
    uint64_t tables = 0, pmem = 0, ssd = 0, bytes = 0, entries = 0;
  };
  std::vector<LevelSummary> levels(kNumLevels);
  for (const LiveTableMetaData& t : tables) {
    switch (t.storage) {
      case TableStorage::kPmemBlock: ++keyset_versions[t.format_version]; break;
      case TableStorage::kPmemTableImage: ++pmem_images; break;
      case TableStorage::kSsdTable: ++(t.block_format == TableFormat::kClassic ? ssd_classic : ssd_keyset); break;
    }
    LevelSummary& level = levels.at(t.level);
    ++level.tables;
    ++(t.storage == TableStorage::kSsdTable ? level.ssd : level.pmem);
    level.bytes += t.size;
    level.entries += t.entries;
  }
  std::printf("formats       IDENTITY %d, pool layout %u, SSD tables %u, KeySet blocks up to v%u\n",
              DatabaseIdentity::kFormatVersion, pmem::Pool::kFormatVersion, ssd::kTableFormatVersion,
              keyset::kLatestVersion);
  // Every version this build reads, newest first.
  std::printf("pmem tables   ");
  for (uint32_t v = keyset::kLatestVersion; v > 0; --v) std::printf("%" PRIu64 " KeySet v%u, ", keyset_versions[v], v);
  std::printf("%" PRIu64 " table images of classic blocks\n", pmem_images);
  std::printf("SSD tables    %" PRIu64 " of KeySet blocks, %" PRIu64 " of classic blocks\n", ssd_keyset, ssd_classic);

  std::printf("\nlevel  tables  (pmem    ssd)          bytes  entries\n");
  for (int level = 0; level < kNumLevels; ++level) {
    const LevelSummary& l = levels[level];
    std::printf("L%-5d %6" PRIu64 "  (%4" PRIu64 " %6" PRIu64 ") %14" PRIu64 " %8" PRIu64 "\n", level, l.tables, l.pmem,
                l.ssd, l.bytes, l.entries);
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

int DeleteRange(const std::string& name, const DbFlags& flags, const std::string& begin, const std::string& end) {
  std::unique_ptr<DB> db;
  int rc = OpenDb(name, flags, &db);
  if (rc != kOk) return rc;
  WriteOptions sync;
  sync.sync = true;
  const Status s = db->DeleteRange(sync, begin, end);
  return s.ok() ? kOk : Fail("delete-range " + Escape(begin) + " " + Escape(end), s, CodeOf(s));
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
  const Slice from(scan.from), to(scan.to);
  read.iterate_lower_bound = scan.has_from ? &from : nullptr;
  read.iterate_upper_bound = scan.has_to ? &to : nullptr;
  std::unique_ptr<Iterator> it = db->NewIterator(read);
  uint64_t n = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
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
// verify

int Verify(const std::string& name, const DbFlags& flags, bool verbose) {
  std::unique_ptr<DB> db;
  // Opening already checks every pmem block's checksum and every SSD
  // table's footer and index: damage there fails the open (exit 3).
  int rc = OpenDb(name, flags, &db);
  if (rc != kOk) return rc;
  std::vector<TableCheck> checks;
  (void)db->VerifyTables(&checks);  // each table's finding is in `checks`
  uint64_t tables = 0, damaged = 0;
  for (const TableCheck& check : checks) {
    const LiveTableMetaData& t = check.table;
    ++tables;
    const std::string what = std::string(t.storage == TableStorage::kSsdTable         ? "SSD table "
                                         : t.storage == TableStorage::kPmemTableImage ? "pmem table image "
                                                                                      : "pmem block ") +
                             std::to_string(t.number) + " at level " + std::to_string(t.level) +
                             (t.storage == TableStorage::kSsdTable ? " (" + t.file_name + ")" : "");
    if (!check.status.ok()) {
      ++damaged;
      std::printf("DAMAGED %s: %s\n", what.c_str(), check.status.ToString().c_str());
    } else if (verbose) {
      std::printf("ok      %s: %" PRIu64 " bytes, %" PRIu64 " entries, keys %s .. %s\n", what.c_str(), t.size,
                  t.entries, Escape(t.smallest_key).c_str(), Escape(t.largest_key).c_str());
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

int Checkpoint(const std::string& name, const std::string& dir, const DbFlags& flags) {
  std::unique_ptr<DB> db;
  int rc = OpenDb(name, flags, &db);
  if (rc != kOk) return rc;
  uint64_t sequence = 0;
  const Status s = db->CreateCheckpoint(dir, &sequence);
  if (!s.ok()) return Fail("checkpoint " + name, s, CodeOf(s));
  std::printf("checkpoint of %s at sequence %" PRIu64 " in %s (a disk-mode database)\n", name.c_str(), sequence,
              dir.c_str());
  return kOk;
}

// Prints the change feed from `since` on: a line "@<sequence> <count>"
// per batch, then one "put <key> <value>" or "delete <key>" per update.
int Updates(const std::string& name, const DbFlags& flags, uint64_t since, uint64_t limit, bool hex) {
  std::unique_ptr<DB> db;
  int rc = OpenDb(name, flags, &db);
  if (rc != kOk) return rc;
  std::unique_ptr<TransactionLogIterator> it;
  Status s = db->GetUpdatesSince(since, &it);
  if (!s.ok()) return Fail("updates since " + std::to_string(since), s, s.IsNotFound() ? kNotFound : CodeOf(s));
  struct Printer : WriteBatch::Handler {
    bool hex = false;
    std::string Show(const Slice& bytes) const { return hex ? Hex(bytes) : Escape(bytes); }
    void Put(const Slice& key, const Slice& value) override {
      std::printf("put %s %s\n", Show(key).c_str(), Show(value).c_str());
    }
    void Delete(const Slice& key) override { std::printf("delete %s\n", Show(key).c_str()); }
    Status DeleteRange(const Slice& begin, const Slice& end) override {
      std::printf("delete-range %s %s\n", Show(begin).c_str(), Show(end).c_str());
      return Status::OK();
    }
  } printer;
  printer.hex = hex;
  uint64_t n = 0;
  for (; it->Valid() && (limit == 0 || n < limit); it->Next(), ++n) {
    BatchResult batch = it->GetBatch();
    std::printf("@%" PRIu64 " %u\n", batch.sequence, batch.batch.Count());
    s = batch.batch.Iterate(&printer);
    if (!s.ok()) return Fail("updates", s, CodeOf(s));
  }
  s = it->status();
  if (!s.ok()) return Fail("updates", s, CodeOf(s));
  return kOk;
}

int Ingest(const std::string& name, const DbFlags& flags, const std::vector<std::string>& files, bool move) {
  std::unique_ptr<DB> db;
  int rc = OpenDb(name, flags, &db);
  if (rc != kOk) return rc;
  IngestExternalFileOptions options;
  options.move_files = move;
  const Status s = db->IngestExternalFile(files, options);
  if (!s.ok()) return Fail("ingest into " + name, s, CodeOf(s));
  std::printf("ingested %zu file(s) into %s at sequence %" PRIu64 "\n", files.size(), name.c_str(),
              db->GetLatestSequenceNumber());
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

int Repair(const std::string& name, const DbFlags& flags) {
  std::error_code ec;
  if (!std::filesystem::is_directory(name, ec) && !std::filesystem::is_directory(name + ".repair", ec)) {
    return Fail("repair " + name, Status::NotFound(name, "no such database directory"));
  }
  std::string origin;
  const Options options = OpenOptionsFor(name, flags, &origin);
  RepairReport report;
  const Status s = RepairDB(name, options, &report);
  std::printf("%s", report.ToString().c_str());
  if (!s.ok()) return Fail("repair " + name + " (" + origin + ")", s, CodeOf(s));
  std::printf("repaired %s (%s)\n", name.c_str(), origin.c_str());
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

// What the subcommands' arguments are parsed into, and the exit code of the one that ran.
struct CommandLine {
  std::string db, key, value;
  DbFlags flags;
  bool hex = false, key_hex = false;
  ScanFlags scan;
  DumpFlags dump;
  bool verbose = false;
  bool yes = false;
  CopyFlags copy;
  std::string dst;
  uint64_t since = 1, limit = 0;
  std::vector<std::string> files;
  bool move = false;
  int rc = kOk;
};

// Defines `info`: its arguments, and a callback that runs it.
void AddInfoCommand(CLI::App* app, CommandLine* cl) {
  CLI::App* info = app->add_subcommand("info", "mode, formats, levels (tables and bytes), pool usage, statistics");
  info->add_option("db", cl->db, "database directory")->required();
  AddDbFlags(info, &cl->flags);
  AddReadOnlyFlag(info, &cl->flags);
  info->callback([cl] { cl->rc = Info(cl->db, cl->flags); });
}

// Defines `get`: its arguments, and a callback that runs it.
void AddGetCommand(CLI::App* app, CommandLine* cl) {
  CLI::App* get = app->add_subcommand("get", "print the value of a key (exit 2 if it is not found)");
  get->add_option("db", cl->db, "database directory")->required();
  get->add_option("key", cl->key, "the key")->required();
  get->add_flag("--hex", cl->hex, "print the value in hex (default: escaped, non-printable bytes as \\xNN)");
  get->add_flag("--key_hex", cl->key_hex, "the key is given in hex");
  AddDbFlags(get, &cl->flags);
  AddReadOnlyFlag(get, &cl->flags);
  get->callback([cl] {
    std::string k;
    cl->rc = DecodeKey(cl->key, cl->key_hex, &k) ? Get(cl->db, cl->flags, k, cl->hex) : kUsage;
  });
}

// Defines `put`: its arguments, and a callback that runs it.
void AddPutCommand(CLI::App* app, CommandLine* cl) {
  CLI::App* put = app->add_subcommand("put", "write a key and value (a sync write)");
  put->add_option("db", cl->db, "database directory")->required();
  put->add_option("key", cl->key, "the key")->required();
  put->add_option("value", cl->value, "the value")->required();
  put->add_flag("--key_hex", cl->key_hex, "the key and the value are given in hex");
  put->add_flag("--create_if_missing", cl->flags.create_if_missing,
                "create the database (in --mode, default pmem) if it does not exist");
  put->add_option("--pool_size_mb", cl->flags.pool_size_mb, "with --create_if_missing: the new pool's size in MiB")
      ->check(CLI::Range(uint64_t{16}, uint64_t{1} << 24))
      ->capture_default_str();
  AddDbFlags(put, &cl->flags);
  put->callback([cl] {
    std::string k, v;
    cl->rc = DecodeKey(cl->key, cl->key_hex, &k) && DecodeKey(cl->value, cl->key_hex, &v)
                 ? Put(cl->db, cl->flags, k, v)
                 : kUsage;
  });
}

// Defines `delete`: its arguments, and a callback that runs it.
void AddDeleteCommand(CLI::App* app, CommandLine* cl) {
  CLI::App* del = app->add_subcommand("delete", "delete a key (a sync write; deleting a missing key is no error)");
  del->add_option("db", cl->db, "database directory")->required();
  del->add_option("key", cl->key, "the key")->required();
  del->add_flag("--key_hex", cl->key_hex, "the key is given in hex");
  AddDbFlags(del, &cl->flags);
  del->callback([cl] {
    std::string k;
    cl->rc = DecodeKey(cl->key, cl->key_hex, &k) ? Delete(cl->db, cl->flags, k) : kUsage;
  });
}

// Defines `delete-range`: its arguments, and a callback that runs it.
void AddDeleteRangeCommand(CLI::App* app, CommandLine* cl) {
  CLI::App* del = app->add_subcommand(
      "delete-range", "delete every key k with begin <= k < end (one range tombstone; a sync write)");
  del->add_option("db", cl->db, "database directory")->required();
  del->add_option("begin", cl->key, "the first key deleted")->required();
  del->add_option("end", cl->value, "the first key after the range (not deleted)")->required();
  del->add_flag("--key_hex", cl->key_hex, "both keys are given in hex");
  AddDbFlags(del, &cl->flags);
  del->callback([cl] {
    std::string begin, end;
    cl->rc = DecodeKey(cl->key, cl->key_hex, &begin) && DecodeKey(cl->value, cl->key_hex, &end)
                 ? DeleteRange(cl->db, cl->flags, begin, end)
                 : kUsage;
  });
}

// Defines `scan`: its arguments, and a callback that decodes --from and --to and runs it.
void AddScanCommand(CLI::App* app, CommandLine* cl) {
  ScanFlags& scan_flags = cl->scan;
  CLI::App* scan = app->add_subcommand("scan", "print keys and values in order, one pair a line, tab-separated");
  scan->add_option("db", cl->db, "database directory")->required();
  CLI::Option* from = scan->add_option("--from", scan_flags.from, "first key (inclusive)");
  CLI::Option* to = scan->add_option("--to", scan_flags.to, "end key (exclusive)");
  scan->add_option("--limit", scan_flags.limit, "at most this many pairs (0: all)");
  scan->add_flag("--hex", scan_flags.hex, "keys and values in hex (default: escaped, non-printable bytes as \\xNN)");
  scan->add_flag("--key_hex", cl->key_hex, "--from and --to are given in hex");
  AddDbFlags(scan, &cl->flags);
  AddReadOnlyFlag(scan, &cl->flags);
  scan->callback([cl, from, to] {
    ScanFlags& args = cl->scan;
    args.has_from = from->count() > 0;
    args.has_to = to->count() > 0;
    std::string f = args.from, t = args.to;
    if ((args.has_from && !DecodeKey(args.from, cl->key_hex, &f)) ||
        (args.has_to && !DecodeKey(args.to, cl->key_hex, &t))) {
      cl->rc = kUsage;
      return;
    }
    args.from = f;
    args.to = t;
    cl->rc = Scan(cl->db, cl->flags, args);
  });
}

// Defines `dump`: its arguments, and a callback that checks which form was given and runs it.
void AddDumpCommand(CLI::App* app, CommandLine* cl) {
  DumpFlags& dump_flags = cl->dump;
  CLI::App* dump = app->add_subcommand(
      "dump", "one SSD table file (--table, no database opened) or one table of a database by number (<db> --number): "
              "header fields and entries");
  dump->add_option("db", dump_flags.db, "database directory (with --number)");
  CLI::Option* table_opt = dump->add_option("--table", dump_flags.table_path, "an SSD table file (<number>.jst)");
  CLI::Option* number_opt = dump->add_option("--number,--block", dump_flags.number,
                                             "table number in the database (pmem block or SSD table); --block is "
                                             "its old name");
  table_opt->excludes(number_opt);
  dump->add_flag("--values", dump_flags.values, "print the values (default: their sizes)");
  AddDbFlags(dump, &cl->flags);
  dump->callback([cl, table_opt, number_opt] {
    const DumpFlags& args = cl->dump;
    if (table_opt->count() > 0) {
      if (!args.db.empty()) {
        std::cerr << "jigsaw: dump --table takes no database\n";
        cl->rc = kUsage;
        return;
      }
      cl->rc = DumpTableFile(args.table_path, args.values);
    } else if (number_opt->count() > 0 && !args.db.empty()) {
      cl->rc = DumpDbTable(args.db, cl->flags, args.number, args.values);
    } else {
      std::cerr << "jigsaw: dump needs --table <file> or <db> --number <number>\n";
      cl->rc = kUsage;
    }
  });
}

// Defines `verify`, `compact`, `repair` and `destroy`: their arguments, and callbacks that run them.
void AddMaintenanceCommands(CLI::App* app, CommandLine* cl) {
  CLI::App* verify = app->add_subcommand(
      "verify", "check every table (checksums, structure, key ranges, level order); exit 3 naming each damaged one");
  verify->add_option("db", cl->db, "database directory")->required();
  verify->add_flag("--verbose", cl->verbose, "list every table checked");
  AddDbFlags(verify, &cl->flags);
  AddReadOnlyFlag(verify, &cl->flags);
  verify->callback([cl] { cl->rc = Verify(cl->db, cl->flags, cl->verbose); });

  CLI::App* compact = app->add_subcommand("compact", "compact the whole key range down to the last level");
  compact->add_option("db", cl->db, "database directory")->required();
  AddDbFlags(compact, &cl->flags);
  compact->callback([cl] { cl->rc = Compact(cl->db, cl->flags); });

  CLI::App* repair = app->add_subcommand(
      "repair", "rebuild a damaged database from its readable blocks and log records; the old one is kept at <db>.lost");
  repair->add_option("db", cl->db, "database directory")->required();
  AddDbFlags(repair, &cl->flags);
  repair->callback([cl] { cl->rc = Repair(cl->db, cl->flags); });

  CLI::App* destroy = app->add_subcommand("destroy", "delete the database and its pool (needs --yes)");
  destroy->add_option("db", cl->db, "database directory")->required();
  destroy->add_flag("--yes", cl->yes, "really destroy it");
  AddDbFlags(destroy, &cl->flags);
  destroy->callback([cl] { cl->rc = Destroy(cl->db, cl->flags, cl->yes); });
}

// Defines `copy`, `checkpoint`, `updates` and `ingest`: their arguments, and callbacks that run them.
void AddCopyCommand(CLI::App* app, CommandLine* cl) {
  CopyFlags& copy_flags = cl->copy;
  CLI::App* copy = app->add_subcommand(
      "copy", "copy every live key into a new database, of another mode or pool size (the way out of a full pool)");
  copy->add_option("src", cl->db, "source database directory")->required();
  copy->add_option("dst", cl->dst, "new database directory (must not exist)")->required();
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
  copy->callback([cl] { cl->rc = Copy(cl->db, cl->dst, cl->copy); });

  CLI::App* checkpoint = app->add_subcommand(
      "checkpoint", "write a checkpoint: a disk-mode database of every write, SSD tables hard-linked, pmem tables "
                    "written out (DB::CreateCheckpoint)");
  checkpoint->add_option("db", cl->db, "database directory")->required();
  checkpoint->add_option("dir", cl->dst, "the checkpoint's directory (must not exist)")->required();
  AddDbFlags(checkpoint, &cl->flags);
  AddReadOnlyFlag(checkpoint, &cl->flags);
  checkpoint->callback([cl] { cl->rc = Checkpoint(cl->db, cl->dst, cl->flags); });

  CLI::App* updates = app->add_subcommand(
      "updates", "print the change feed: every committed batch from a sequence number on, from the live and "
                 "archived logs (DB::GetUpdatesSince)");
  updates->add_option("db", cl->db, "database directory")->required();
  updates->add_option("--since", cl->since, "the first sequence number")->capture_default_str();
  updates->add_option("--limit", cl->limit, "at most this many batches (0: all)");
  updates->add_flag("--hex", cl->hex, "print keys and values in hex");
  AddDbFlags(updates, &cl->flags);
  updates->callback([cl] { cl->rc = Updates(cl->db, cl->flags, cl->since, cl->limit, cl->hex); });

  CLI::App* ingest = app->add_subcommand(
      "ingest", "add table files written by TableFileWriter, in one atomic change (DB::IngestExternalFile)");
  ingest->add_option("db", cl->db, "database directory")->required();
  ingest->add_option("files", cl->files, "table files (key ranges must not overlap)")->required();
  ingest->add_flag("--move", cl->move, "link the files in and remove them (default: copy)");
  AddDbFlags(ingest, &cl->flags);
  ingest->callback([cl] { cl->rc = Ingest(cl->db, cl->flags, cl->files, cl->move); });
}

// Defines the subcommands, parses the command line and runs the one given; returns its exit code, or kUsage for a
// command line that does not parse (kOk for --help and --version).
int Main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]).rfind("--cluster", 0) == 0) return ClusterMain(argc, argv);
  CLI::App app("jigsaw: inspect, check, copy and destroy JigsawDB databases (docs/tool.md).\n"
               "Every command but `dump --table` opens the database with DB::Open: it takes <db>/LOCK and\n"
               "recovers the database (replays its WAL into a table and commits a manifest); --read_only opens\n"
               "a disk-mode database without writing. Exit codes: 0 ok, 1 usage, 2 not found, 3 damage found, 4 other errors.");
  app.require_subcommand(1);
  app.set_version_flag("--version", JIGSAW_VERSION_STRING);

  CommandLine cl;
  AddInfoCommand(&app, &cl);
  AddGetCommand(&app, &cl);
  AddPutCommand(&app, &cl);
  AddDeleteCommand(&app, &cl);
  AddDeleteRangeCommand(&app, &cl);
  AddScanCommand(&app, &cl);
  AddDumpCommand(&app, &cl);
  AddMaintenanceCommands(&app, &cl);
  AddCopyCommand(&app, &cl);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);  // prints help, the version or the error
    return code == 0 ? kOk : kUsage;
  }
  return cl.rc;
}

}  // namespace
}  // namespace jigsaw::tool

int main(int argc, char** argv) { return jigsaw::tool::Main(argc, argv); }
