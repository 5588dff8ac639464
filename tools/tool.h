// What the jigsaw tool's commands share (tools/jigsaw.cc): exit codes, how
// keys and values are printed, how a database is opened, and the dump
// command (tools/dump.cc).
#ifndef JIGSAW_TOOLS_TOOL_H_
#define JIGSAW_TOOLS_TOOL_H_

#include <CLI/CLI.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "jigsaw/db.h"
#include "jigsaw/options.h"
#include "jigsaw/slice.h"
#include "jigsaw/status.h"

namespace jigsaw::tool {

enum ExitCode : int { kOk = 0, kUsage = 1, kNotFound = 2, kDamage = 3, kError = 4 };

// Printable ASCII as is, a backslash doubled, any other byte as \xNN.
std::string Escape(const Slice& s);
// Two lowercase hex digits per byte.
std::string Hex(const Slice& s);
// Hex digits (even count) into bytes; false if malformed.
bool FromHex(const std::string& hex, std::string* out);
const char* ModeName(StorageMode mode);
std::optional<StorageMode> ParseMode(const std::string& name);
// Prints "jigsaw: <what>: <status>" to stderr and returns `code`.
int Fail(const std::string& what, const Status& s, int code = kError);
// The exit code of a failed operation: damage is 3, anything else 4.
int CodeOf(const Status& s);

// The flags every database command takes.
struct DbFlags {
  std::string mode;       // "" = as <db>/IDENTITY records (else Options' default, pmem)
  std::string pmem_path;  // "" = as recorded (else Options' default, <db>/pool)
  // put only: create the database if it does not exist, with a pool of
  // this size (pool modes).
  bool create_if_missing = false;
  uint64_t pool_size_mb = Options().pmem_pool_size >> 20;
  // info, get, scan, verify: open with DB::OpenForReadOnly (disk mode):
  // no lock, nothing written, beside a process that has it open.
  bool read_only = false;
};

// Adds --read_only to a subcommand that only reads.
void AddReadOnlyFlag(CLI::App* sub, DbFlags* flags);

// Adds --mode and --pmem_path to a subcommand.
void AddDbFlags(CLI::App* sub, DbFlags* flags);
// Halves memtable_size and block_size (not below 64 KiB) until a pool of
// options->pmem_pool_size holds them (docs/sizing.md).
void FitToPool(Options* options);
// The Options that open the existing database `db`; *origin says where the
// mode and pool came from.
Options OpenOptionsFor(const std::string& db, const DbFlags& flags, std::string* origin);
// Opens `db` for a command; on failure prints the error (with a hint when
// the options disagree with the database) and returns its exit code.
int OpenDb(const std::string& db, const DbFlags& flags, std::unique_ptr<DB>* out, Options* used = nullptr,
           std::string* origin_out = nullptr);

// dump (tools/dump.cc, docs/tool.md).
struct DumpFlags {
  std::string table_path;     // --table
  std::string db;             // <db> with --number
  uint64_t number = 0;        // --number (old name: --block)
  bool values = false;        // print values, not only their sizes
};

// Prints the table file at `path` (footer, index, each block); exit code.
int DumpTableFile(const std::string& path, bool values);
// Prints table `number` of database `name` (a pmem block or an SSD table).
int DumpDbTable(const std::string& name, const DbFlags& flags, uint64_t number, bool values);

}  // namespace jigsaw::tool

#endif  // JIGSAW_TOOLS_TOOL_H_
