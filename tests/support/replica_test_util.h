// What the replication tests over loopback TCP share: free ports, waits,
// and a cluster of ReplicatedDB replicas in this process.
#ifndef JIGSAW_TESTS_SUPPORT_REPLICA_TEST_UTIL_H_
#define JIGSAW_TESTS_SUPPORT_REPLICA_TEST_UTIL_H_

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "jigsaw/replicated_db.h"
#include "tests/support/db_test_util.h"

namespace jigsaw::test {

// 127.0.0.1:port.
inline sockaddr_in LoopbackAddress(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

// A loopback port nothing is bound to now, below the kernel's ephemeral
// range: a port from that range, while its replica is closed, can become
// the local end of an outgoing connection or another test's pick, and the
// replica could not reopen on it. Each process starts at its own offset.
inline int FreePort() {
  static int next = -1;
  int low = 32768;
  if (FILE* f = std::fopen("/proc/sys/net/ipv4/ip_local_port_range", "r")) {
    int high = 0;
    if (std::fscanf(f, "%d %d", &low, &high) != 2) low = 32768;
    std::fclose(f);
  }
  const int first = 10000, span = std::max(low - first, 1000);
  if (next < 0) next = static_cast<int>((static_cast<unsigned>(::getpid()) * 61u) % static_cast<unsigned>(span));
  for (int tries = 0; tries < span; ++tries) {
    const int port = first + (next++ % span);
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    const sockaddr_in addr = LoopbackAddress(port);
    const bool free = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0;
    ::close(fd);
    if (free) return port;
  }
  ADD_FAILURE() << "no free loopback port below " << low;
  return 0;
}

// Polls `done` until it holds or 60 s pass: a wait, not a measurement.
template <typename Pred>
bool WaitFor(Pred done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// Up to four replicas (ids 1-4) in `dir`/replicaN, disk mode; the first
// three are a new cluster's voters.
class ReplicaCluster {
 public:
  explicit ReplicaCluster(std::string dir) : dir_(std::move(dir)) {
    for (uint64_t id = 1; id <= 4; ++id) servers_.push_back(ReplicaServer{id, "127.0.0.1:" + std::to_string(FreePort())});
    replicas_.resize(4);
  }
  ~ReplicaCluster() {
    for (auto& r : replicas_) r.reset();
  }

  ReplicaOptions OptionsFor(size_t i, bool bootstrap) const {
    ReplicaOptions options;
    options.self = servers_[i];
    options.dir = dir_ + "/replica" + std::to_string(i + 1);
    options.db_options = SmallModeOptions(StorageMode::kDisk);
    if (bootstrap) options.bootstrap.assign(servers_.begin(), servers_.begin() + 3);
    options.election_timeout_ms = 300;
    options.heartbeat_timeout_ms = 50;
    options.snapshot_threshold = 64;
    options.snapshot_trailing = 16;
    options.install_snapshot_timeout_ms = 2000;
    return options;
  }
  void Open(size_t i, bool bootstrap = true) {
    const Status s = ReplicatedDB::Open(OptionsFor(i, bootstrap), &replicas_[i]);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  void Close(size_t i) { replicas_[i].reset(); }
  ReplicatedDB* replica(size_t i) { return replicas_[i].get(); }
  const ReplicaServer& server(size_t i) const { return servers_[i]; }

  // The index of the replica that leads, once one does; throws (failing
  // the test) if none does within the wait.
  size_t Leader() {
    size_t leader = 0;
    const bool found = WaitFor([&] {
      for (size_t i = 0; i < replicas_.size(); ++i) {
        if (replicas_[i] != nullptr && replicas_[i]->GetStatus().role == "leader") {
          leader = i;
          return true;
        }
      }
      return false;
    });
    if (!found) throw std::runtime_error("no replica became the leader within the wait");
    return leader;
  }

  // Waits until every open replica has applied what the leader committed
  // (raft's applied index: barriers and configuration entries count too).
  void Converge() {
    const uint64_t commit = replicas_[Leader()]->GetStatus().commit_index;
    for (auto& r : replicas_) {
      if (r == nullptr) continue;
      EXPECT_TRUE(WaitFor([&] { return r->GetStatus().applied_index >= commit; }));
    }
  }

 private:
  const std::string dir_;
  std::vector<ReplicaServer> servers_;
  std::vector<std::unique_ptr<ReplicatedDB>> replicas_;
};

}  // namespace jigsaw::test

#endif  // JIGSAW_TESTS_SUPPORT_REPLICA_TEST_UTIL_H_
