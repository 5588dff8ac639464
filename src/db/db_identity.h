// A database's identity and the rules that keep one database from being
// opened, created or destroyed as another (docs/durability.md, "Identity and
// locking").
//
// <db>/IDENTITY (docs/identity.md) names the database: a random id, whether
// it keeps its data in a pmem pool (kPmem and kHybrid, which may be reopened
// in each other's mode) or only in files (kDisk), and where its pool was
// last opened. The pool records the same id in its root. Every open checks
// the options against both before anything is created or deleted.
//
// Thread-safety: free functions, no shared state.
#ifndef JIGSAW_DB_DB_IDENTITY_H_
#define JIGSAW_DB_DB_IDENTITY_H_

#include <memory>
#include <string>
#include <vector>

#include "jigsaw/file_system.h"
#include "jigsaw/options.h"
#include "jigsaw/status.h"

namespace jigsaw {

struct DatabaseIdentity {
  static constexpr int kFormatVersion = 1;
  std::string database_id;  // 32 hex digits
  bool uses_pool = false;   // kPmem or kHybrid; false: kDisk
  std::string pool_path;    // where the pool was last opened ("" for kDisk)
  // Written before anything else of a new database and cleared after its
  // first commit: what a crash leaves in between is the debris of a creation
  // (no write was ever acknowledged), which the next open may clear away.
  bool creating = false;
};

// Reads <dir>/IDENTITY. NotFound if there is none; Corruption if it is
// malformed; NotSupported for a newer format version.
Status ReadIdentity(FileSystem* fs, const std::string& dir, DatabaseIdentity* identity);
// Replaces <dir>/IDENTITY atomically and durably (temporary file, sync,
// rename, directory sync).
Status WriteIdentity(FileSystem* fs, const std::string& dir, const DatabaseIdentity& identity);

// The pool file a database's options name: pmem_path, or <dir>/pool.
std::string PoolPathFor(const Options& options, const std::string& dir);

// What an open found in the directory and the pool, and what it decided.
struct OpenPlan {
  DatabaseIdentity identity;   // the database's (a new id when creating)
  bool identity_exists = false;  // IDENTITY was there before this open
  bool identity_outdated = false;  // it names another pool path: rewrite it once open
  bool creating = false;       // no committed database yet: this open makes one
  // A creation a crash interrupted left numbered files without a MANIFEST
  // (disk mode): the open deletes them before creating.
  bool clear_leftovers = false;
  std::vector<std::string> children_before;  // entries of the directory before the open
};

// Decides, with the directory locked, whether `options` may open the
// database in `dir`: checks the IDENTITY against the storage mode and the
// pool (its recorded id), and refuses to create a database over the traces
// of another one (a MANIFEST, table or log files, a pool that belongs to a
// database elsewhere). Changes nothing. InvalidArgument names both sides.
Status PlanOpen(FileSystem* fs, const Options& options, const std::string& dir, OpenPlan* plan);

// A file this engine creates in a database directory (src/filename.h).
bool IsDatabaseFileName(const std::string& name);

}  // namespace jigsaw

#endif  // JIGSAW_DB_DB_IDENTITY_H_
