// jigsaw_replica: serves one replica of a replicated JigsawDB database
// (docs/replication.md): raft over TCP with libraft's libuv transport, and
// the client protocol for `jigsaw --cluster ...` on a second address. Runs
// until SIGINT or SIGTERM, then closes the replica cleanly.
//
//   jigsaw_replica --id 1 --raft 127.0.0.1:9001 --client 127.0.0.1:9101
//       --dir /var/lib/replica1
//       --bootstrap 1@127.0.0.1:9001,2@127.0.0.1:9002,3@127.0.0.1:9003
#include <CLI/CLI.hpp>

#include <signal.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "jigsaw/replica_service.h"
#include "jigsaw/replicated_db.h"

namespace {

// "id@host:port,..." into servers; false if malformed.
bool ParseServers(const std::string& list, std::vector<jigsaw::ReplicaServer>* servers) {
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    const size_t at = item.find('@');
    if (at == std::string::npos || at == 0) return false;
    jigsaw::ReplicaServer server;
    try {
      server.id = std::stoull(item.substr(0, at));
    } catch (...) {
      return false;
    }
    server.address = item.substr(at + 1);
    if (server.id == 0 || server.address.empty()) return false;
    servers->push_back(server);
  }
  return !servers->empty();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("jigsaw_replica: one replica of a replicated JigsawDB database (docs/replication.md)");
  uint64_t id = 0;
  std::string raft_address, client_address, dir, bootstrap, mode = "disk", pmem_path;
  uint64_t pool_mb = 1024;
  unsigned election_ms = 1000, heartbeat_ms = 100, snapshot_threshold = 65536, snapshot_trailing = 8192,
           install_snapshot_ms = 30000;
  app.add_option("--id", id, "this server's raft id (> 0)")->required();
  app.add_option("--raft", raft_address, "host:port for raft traffic")->required();
  app.add_option("--client", client_address, "host:port for clients (jigsaw --cluster)")->required();
  app.add_option("--dir", dir, "the replica's directory")->required();
  app.add_option("--bootstrap", bootstrap,
                 "a new cluster's voters, id@host:port,... (the same on each; ignored once the replica has state)");
  app.add_option("--mode", mode, "storage mode of a new database: pmem, hybrid or disk")->capture_default_str();
  app.add_option("--pmem_path", pmem_path, "pool path prefix (pool modes; default: inside each generation)");
  app.add_option("--pool_mb", pool_mb, "pool size in MiB (pool modes)")->capture_default_str();
  app.add_option("--election_ms", election_ms, "raft election timeout")->capture_default_str();
  app.add_option("--heartbeat_ms", heartbeat_ms, "raft heartbeat timeout")->capture_default_str();
  app.add_option("--snapshot_threshold", snapshot_threshold, "entries between snapshots")->capture_default_str();
  app.add_option("--snapshot_trailing", snapshot_trailing, "entries kept after a snapshot")->capture_default_str();
  app.add_option("--install_snapshot_ms", install_snapshot_ms, "wait for a follower to acknowledge a snapshot")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  jigsaw::ReplicaOptions options;
  options.self = jigsaw::ReplicaServer{id, raft_address};
  options.dir = dir;
  if (mode == "pmem") {
    options.db_options.storage_mode = jigsaw::StorageMode::kPmem;
  } else if (mode == "hybrid") {
    options.db_options.storage_mode = jigsaw::StorageMode::kHybrid;
  } else if (mode == "disk") {
    options.db_options.storage_mode = jigsaw::StorageMode::kDisk;
  } else {
    std::cerr << "jigsaw_replica: --mode must be pmem, hybrid or disk\n";
    return 1;
  }
  options.db_options.pmem_path = pmem_path;
  options.db_options.pmem_pool_size = pool_mb << 20;
  if (!bootstrap.empty() && !ParseServers(bootstrap, &options.bootstrap)) {
    std::cerr << "jigsaw_replica: --bootstrap must be id@host:port,...\n";
    return 1;
  }
  options.election_timeout_ms = election_ms;
  options.heartbeat_timeout_ms = heartbeat_ms;
  options.snapshot_threshold = snapshot_threshold;
  options.snapshot_trailing = snapshot_trailing;
  options.install_snapshot_timeout_ms = install_snapshot_ms;

  // SIGINT and SIGTERM are taken by sigwait below, never by a handler:
  // blocked before any thread starts, so every thread inherits the mask.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  std::unique_ptr<jigsaw::ReplicatedDB> db;
  jigsaw::Status s = jigsaw::ReplicatedDB::Open(options, &db);
  if (!s.ok()) {
    std::cerr << "jigsaw_replica: open " << dir << ": " << s.ToString() << "\n";
    return 4;
  }
  std::unique_ptr<jigsaw::ReplicaService> service;
  s = jigsaw::ReplicaService::Start(db.get(), client_address, &service);
  if (!s.ok()) {
    std::cerr << "jigsaw_replica: serve " << client_address << ": " << s.ToString() << "\n";
    return 4;
  }
  std::printf("jigsaw_replica %llu: raft %s, clients %s, directory %s\n", static_cast<unsigned long long>(id),
              raft_address.c_str(), service->address().c_str(), dir.c_str());
  std::fflush(stdout);
  int signal = 0;
  sigwait(&stop, &signal);
  service.reset();
  db.reset();
  return 0;
}
