// The jigsaw tool's shared parts (tools/tool.h): printing, and opening a
// database as <db>/IDENTITY records it.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "db/db_identity.h"
#include "jigsaw/file_system.h"
#include "pmem/pool.h"
#include "pmem/pool_sizing.h"
#include "tools/tool.h"
#include "version/filename.h"

namespace jigsaw::tool {

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

int Fail(const std::string& what, const Status& s, int code) {
  std::cerr << "jigsaw: " << what << ": " << s.ToString() << "\n";
  return code;
}

// The exit code of a failed operation: damage is 3, anything else 4.
int CodeOf(const Status& s) { return s.IsCorruption() ? kDamage : kError; }

// ---------------------------------------------------------------------------
// Opening a database

void AddDbFlags(CLI::App* sub, DbFlags* flags) {
  sub->add_option("--mode", flags->mode,
                  "storage mode: pmem, hybrid or disk (default: what <db>/IDENTITY records; a pool database "
                  "with SSD tables opens as hybrid)")
      ->check(CLI::IsMember({"pmem", "hybrid", "disk"}));
  sub->add_option("--pmem_path", flags->pmem_path,
                  "pool file (default: where <db>/IDENTITY says it was last opened, else <db>/pool)");
}

void AddReadOnlyFlag(CLI::App* sub, DbFlags* flags) {
  sub->add_flag("--read_only", flags->read_only,
                "open a disk-mode database read-only (DB::OpenForReadOnly): no lock, nothing written; works while "
                "another process has it open");
}

namespace {

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

}  // namespace

// Halves memtable_size and table_size (not below 64 KiB) until a pool of
// options->pmem_pool_size holds them (docs/sizing.md).
void FitToPool(Options* options) {
  while (MinimumPoolSize(*options) > options->pmem_pool_size) {
    if (options->memtable_size > (64 << 10)) {
      options->memtable_size /= 2;
    } else if (options->table_size > (64 << 10)) {
      options->table_size /= 2;
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
  // A database that keeps logs for its change feed keeps them through the
  // tool's open too: its recovery archives the logs it replays, and
  // nothing archived is removed.
  std::error_code archive_ec;
  if (std::filesystem::is_directory(db + "/archive", archive_ec)) options.wal_size_limit_mb = UINT64_MAX >> 20;
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
int OpenDb(const std::string& db, const DbFlags& flags, std::unique_ptr<DB>* out, Options* used,
           std::string* origin_out) {
  std::string origin;
  const Options options = OpenOptionsFor(db, flags, &origin);
  if (used != nullptr) *used = options;
  if (origin_out != nullptr) *origin_out = origin;
  const Status s = flags.read_only ? DB::OpenForReadOnly(options, db, out) : DB::Open(options, db, out);
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


}  // namespace jigsaw::tool
