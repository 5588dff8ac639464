// A replica's client protocol over TCP (docs/replication.md, "Client
// protocol"): ReplicaService serves a ReplicatedDB's clients, ReplicaClient
// talks to a cluster of them. Part of the optional replication library.
#ifndef JIGSAW_INCLUDE_JIGSAW_REPLICA_SERVICE_H_
#define JIGSAW_INCLUDE_JIGSAW_REPLICA_SERVICE_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jigsaw/export.h"
#include "jigsaw/replicated_db.h"
#include "jigsaw/slice.h"
#include "jigsaw/status.h"

namespace jigsaw {

class JIGSAW_EXPORT ReplicaService {
 public:
  // Listens on `address` ("host:port"; port 0 picks one) and serves `db`'s
  // clients, a thread per connection, until destroyed. `db` must outlive
  // the service.
  [[nodiscard]] static Status Start(ReplicatedDB* db, const std::string& address,
                                    std::unique_ptr<ReplicaService>* service);
  virtual ~ReplicaService();
  // The address it listens on, its port resolved.
  virtual std::string address() const = 0;
};

class JIGSAW_EXPORT ReplicaClient {
 public:
  // `addresses`: the replicas' client addresses. A write or linearizable
  // read goes to the leader, found by trying them in turn (a replica that
  // is not the leader, or cannot be reached, passes it to the next) until
  // `timeout_ms` has passed; a stale read goes to the first address.
  explicit ReplicaClient(std::vector<std::string> addresses, unsigned timeout_ms = 10000);
  ~ReplicaClient();
  ReplicaClient(const ReplicaClient&) = delete;
  ReplicaClient& operator=(const ReplicaClient&) = delete;

  // OK once the cluster has committed and the leader applied the write.
  // After an error the write may or may not have been applied.
  [[nodiscard]] Status Put(const Slice& key, const Slice& value, bool sync = false);
  [[nodiscard]] Status Delete(const Slice& key, bool sync = false);
  [[nodiscard]] Status Get(const Slice& key, std::string* value,
                           ReadConsistency consistency = ReadConsistency::kLinearizable);
  // Up to `limit` pairs from the first key >= start, in order.
  [[nodiscard]] Status Scan(const Slice& start, uint32_t limit, std::vector<std::pair<std::string, std::string>>* out,
                            ReadConsistency consistency = ReadConsistency::kLinearizable);
  // The replica at `address`'s ReplicaStatus, one "name=value" a line.
  [[nodiscard]] Status GetStatus(const std::string& address, std::string* text);

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

}  // namespace jigsaw

#endif  // JIGSAW_INCLUDE_JIGSAW_REPLICA_SERVICE_H_
