// "jigsaw-raft": JigsawDB replicated three ways under Canonical's raft
// (docs/replication.md), for the cost of replication beside "jigsaw".
// Three ReplicatedDB replicas run in this process, in <dir>/replica1..3,
// each with the options "jigsaw" would use (its pool, in pool modes,
// inside its directory: --pmem_path is not used), raft between them over
// loopback TCP with libraft's libuv log store in <dir>/replicaN/raft.
// Writes go through the leader and return once a majority has them in its
// raft log and the leader applied them; reads are the leader's own
// (ReadConsistency::kStale: a linearizable read adds one raft barrier).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "bench/engines.h"
#include "jigsaw/replicated_db.h"

namespace jigsaw::bench {
namespace {

int FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  int port = 0;
  socklen_t len = sizeof(addr);
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  if (fd >= 0) ::close(fd);
  return port;
}

class RaftEngine final : public Engine {
 public:
  static std::unique_ptr<Engine> Open(const EngineConfig& config, std::string* error) {
    auto engine = std::make_unique<RaftEngine>();
    std::vector<ReplicaServer> servers;
    for (uint64_t id = 1; id <= 3; ++id) {
      const int port = FreeLoopbackPort();
      if (port == 0) {
        *error = "no free loopback port";
        return nullptr;
      }
      servers.push_back(ReplicaServer{id, "127.0.0.1:" + std::to_string(port)});
    }
    for (size_t i = 0; i < servers.size(); ++i) {
      ReplicaOptions options;
      options.self = servers[i];
      options.dir = config.dir + "/replica" + std::to_string(i + 1);
      options.db_options = JigsawOptionsFor(config);
      options.db_options.pmem_path.clear();
      options.bootstrap = servers;
      options.election_timeout_ms = 500;
      options.heartbeat_timeout_ms = 50;
      std::unique_ptr<ReplicatedDB> replica;
      const Status s = ReplicatedDB::Open(options, &replica);
      if (!s.ok()) {
        *error = options.dir + ": " + s.ToString();
        return nullptr;
      }
      engine->replicas_.push_back(std::move(replica));
    }
    if (!engine->FindLeader()) {
      *error = "no raft leader was elected within 30 s";
      return nullptr;
    }
    return engine;
  }

  const char* name() const override { return "jigsaw-raft"; }
  std::string Describe() override { return "3 replicas, raft over loopback TCP"; }

  std::string Put(std::string_view key, std::string_view value, bool sync) override {
    WriteBatch batch;
    batch.Put(Slice(key.data(), key.size()), Slice(value.data(), value.size()));
    return Write(&batch, sync);
  }
  std::string Delete(const std::string& key, bool sync) override {
    WriteBatch batch;
    batch.Delete(key);
    return Write(&batch, sync);
  }
  int Get(std::string_view key, std::string* value) override {
    const Status s = Leader()->Get(ReadOptions(), ReadConsistency::kStale, Slice(key.data(), key.size()), value);
    return s.ok() ? 1 : s.IsNotFound() ? 0 : -1;
  }
  int64_t MultiGet(const std::vector<std::string>& keys) override {
    int64_t found = 0;
    std::string value;
    for (const std::string& key : keys) {
      const int r = Get(key, &value);
      if (r < 0) return -1;
      found += r;
    }
    return found;
  }
  uint64_t Scan(uint64_t limit, bool reverse, uint64_t* bytes) override {
    return ScanIterator(NewIterator().get(), limit, reverse, bytes);
  }
  bool SeekAndRead(const std::string& key) override {
    std::unique_ptr<Iterator> it = NewIterator();
    it->Seek(key);
    return it->Valid() && it->value().size() < (size_t{1} << 40);
  }
  uint64_t ScanFrom(const std::string& key, uint64_t count, uint64_t* bytes) override {
    return ScanForward(NewIterator().get(), key, count, bytes);
  }
  std::string CompactAll() override { return "compact is not measured for jigsaw-raft"; }
  std::string Stats() override {
    const ReplicaStatus st = Leader()->GetStatus();
    return "raft: leader " + std::to_string(st.id) + ", term " + std::to_string(st.term) + ", commit index " +
           std::to_string(st.commit_index) + "\n";
  }

 private:
  ReplicatedDB* Leader() { return replicas_[leader_.load(std::memory_order_relaxed)].get(); }
  std::unique_ptr<Iterator> NewIterator() { return Leader()->NewIterator(ReadOptions(), ReadConsistency::kStale); }

  bool FindLeader() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (std::chrono::steady_clock::now() < deadline) {
      for (size_t i = 0; i < replicas_.size(); ++i) {
        if (replicas_[i]->GetStatus().role == "leader") {
          leader_.store(i, std::memory_order_relaxed);
          return true;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

  // Through the leader; if the lead moved, found again and retried.
  std::string Write(WriteBatch* batch, bool sync) {
    WriteOptions options;
    options.sync = sync;
    Status s = Leader()->Write(options, batch);
    for (int attempt = 0; attempt < 3 && ReplicatedDB::IsNotLeader(s); ++attempt) {
      if (!FindLeader()) break;
      s = Leader()->Write(options, batch);
    }
    return s.ok() ? "" : s.ToString();
  }

  std::vector<std::unique_ptr<ReplicatedDB>> replicas_;
  std::atomic<size_t> leader_{0};
};

}  // namespace

std::unique_ptr<Engine> OpenRaftEngine(const EngineConfig& config, std::string* error) {
  return RaftEngine::Open(config, error);
}

}  // namespace jigsaw::bench
