// ReplicatedDB: one replica of a JigsawDB database kept by Canonical's raft
// (libraft) over TCP. Part of the optional replication library
// (jigsaw_replication, built when libraft and libuv are present); the
// guarantees are docs/replication.md's.
//
// Writes go through the leader and return once a majority of the voters
// has the entry in its raft log and this replica has applied it. Reads are
// local: kStale reads whatever this replica has applied; kLinearizable
// (leader only) first commits a raft barrier, so the read sees every write
// acknowledged anywhere before it began.
//
// Thread-safety: every method may be called from any thread. Raft runs on
// a thread of its own (a libuv loop) per replica.
#ifndef JIGSAW_INCLUDE_JIGSAW_REPLICATED_DB_H_
#define JIGSAW_INCLUDE_JIGSAW_REPLICATED_DB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jigsaw/db.h"
#include "jigsaw/export.h"
#include "jigsaw/iterator.h"
#include "jigsaw/options.h"
#include "jigsaw/slice.h"
#include "jigsaw/status.h"
#include "jigsaw/write_batch.h"

namespace jigsaw {

struct ReplicaServer {
  uint64_t id = 0;      // raft server id, > 0, unique in the cluster
  std::string address;  // "host:port" its raft transport listens on
};

struct ReplicaOptions {
  ReplicaServer self;
  // The replica's directory: <dir>/raft holds the raft log and snapshots,
  // the database generations sit beside it (docs/replication.md).
  std::string dir;
  // The database's options (storage mode, sizes, ...). create_if_missing is
  // implied for a new replica.
  Options db_options;
  // A new cluster's voters, given identically to each of them at its first
  // open; ignored by a replica that already has raft state. Empty for a
  // replica that joins an existing cluster (AddServer on the leader).
  std::vector<ReplicaServer> bootstrap;
  unsigned election_timeout_ms = 1000;
  unsigned heartbeat_timeout_ms = 100;
  // A snapshot (a checkpoint of the database, archived in memory: it
  // costs the database's size) after this many entries; this many entries
  // stay in the log after it, for followers a little behind. libraft holds
  // the log since the last snapshot in memory.
  unsigned snapshot_threshold = 65536;
  unsigned snapshot_trailing = 8192;
  // How long the leader waits for a follower to acknowledge a snapshot it
  // sent before it sends it again (a follower that was down when it was
  // sent never does).
  unsigned install_snapshot_timeout_ms = 30000;
  // How long Write, a linearizable read or a membership change waits
  // before it returns IOError (the outcome of a timed-out write is unknown:
  // it may still commit).
  unsigned request_timeout_ms = 10000;
};

enum class ReadConsistency {
  kLinearizable,  // on the leader, after a raft barrier
  kStale,         // what this replica has applied, on any replica
};

struct ReplicaStatus {
  uint64_t id = 0;
  std::string role;  // "leader", "follower", "candidate", "unavailable"
  uint64_t leader_id = 0;
  std::string leader_address;
  uint64_t term = 0;
  uint64_t commit_index = 0;
  uint64_t applied_index = 0;       // raft's
  uint64_t db_applied_index = 0;    // recorded in the database
  uint64_t last_log_index = 0;
  uint64_t snapshots_installed = 0;
  std::vector<ReplicaServer> voters;
};

class JIGSAW_EXPORT ReplicatedDB {
 public:
  // Opens (creating if new) the replica and starts its raft server.
  [[nodiscard]] static Status Open(const ReplicaOptions& options, std::unique_ptr<ReplicatedDB>* db);
  virtual ~ReplicatedDB();

  // Through the leader: on another replica, IOError for which IsNotLeader
  // is true (Leader() names the leader, if one is known). `options.sync`
  // is applied on every replica. A batch naming a key that begins with
  // "\0jigsaw.replication/" is InvalidArgument.
  [[nodiscard]] virtual Status Write(const WriteOptions& options, WriteBatch* batch) = 0;
  [[nodiscard]] Status Put(const WriteOptions& options, const Slice& key, const Slice& value);
  [[nodiscard]] Status Delete(const WriteOptions& options, const Slice& key);

  [[nodiscard]] virtual Status Get(const ReadOptions& options, ReadConsistency consistency, const Slice& key,
                                   std::string* value) = 0;
  // A kLinearizable iterator that cannot be had (not the leader, a barrier
  // failed) is one whose status() says why.
  virtual std::unique_ptr<Iterator> NewIterator(const ReadOptions& options, ReadConsistency consistency) = 0;

  // Membership, on the leader: a new server joins as a voter once it has
  // caught up; RemoveServer takes one out; TransferLeadership hands the
  // lead to `id` (0: the most up-to-date voter).
  [[nodiscard]] virtual Status AddServer(const ReplicaServer& server) = 0;
  [[nodiscard]] virtual Status RemoveServer(uint64_t id) = 0;
  [[nodiscard]] virtual Status TransferLeadership(uint64_t id) = 0;

  virtual ReplicaStatus GetStatus() = 0;
  // The leader as this replica knows it (id 0: none known).
  virtual ReplicaServer Leader() = 0;

  // True for the Status a write or linearizable read returns on a replica
  // that is not the leader.
  static bool IsNotLeader(const Status& status);
};

}  // namespace jigsaw

#endif  // JIGSAW_INCLUDE_JIGSAW_REPLICATED_DB_H_
