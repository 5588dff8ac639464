// `jigsaw --cluster host:port,... <command>`: a replicated database's
// clients (docs/tool.md, "Cluster commands"; docs/replication.md).
#include "tools/cluster.h"

#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#ifdef JIGSAW_WITH_REPLICATION
#include "jigsaw/replica_service.h"
#endif

namespace jigsaw::tool {

#ifndef JIGSAW_WITH_REPLICATION

int ClusterMain(int, char**) {
  std::cerr << "jigsaw: --cluster: this jigsaw was built without the replication module (libraft)\n";
  return kUsage;
}

#else

namespace {

std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

ReadConsistency ConsistencyOf(bool stale) {
  return stale ? ReadConsistency::kStale : ReadConsistency::kLinearizable;
}

// `load`: keys <prefix><first>.. <prefix><first + count - 1>, each value
// "value-" + key, written one at a time; each acknowledged key is appended
// to `acked` (and flushed) as soon as the cluster acknowledges it.
int Load(ReplicaClient* client, const std::string& prefix, uint64_t first, uint64_t count, const std::string& acked,
         bool sync) {
  std::ofstream out(acked, std::ios::app);
  if (!out) return Fail("load", Status::IOError(acked, "cannot be opened"));
  for (uint64_t i = first; i < first + count; ++i) {
    const std::string key = prefix + std::to_string(i);
    const Status s = client->Put(key, "value-" + key, sync);
    if (!s.ok()) return Fail("load: put " + key, s);
    out << key << "\n";
    out.flush();
  }
  std::printf("loaded %llu keys\n", static_cast<unsigned long long>(count));
  return kOk;
}

// `verify`: every key listed in `acked` is on the first replica given,
// with its value (stale reads: that replica's own state).
int Verify(ReplicaClient* client, const std::string& acked) {
  std::ifstream in(acked);
  if (!in) return Fail("verify", Status::IOError(acked, "cannot be opened"));
  std::string key, value;
  uint64_t checked = 0, missing = 0;
  while (std::getline(in, key)) {
    if (key.empty()) continue;
    ++checked;
    const Status s = client->Get(key, &value, ReadConsistency::kStale);
    if (s.IsNotFound() || (s.ok() && value != "value-" + key)) {
      if (missing++ < 10) std::cerr << "jigsaw: verify: " << key << (s.ok() ? " has a wrong value" : " is missing") << "\n";
    } else if (!s.ok()) {
      return Fail("verify: get " + key, s);
    }
  }
  std::printf("verified %llu keys: %llu missing\n", static_cast<unsigned long long>(checked),
              static_cast<unsigned long long>(missing));
  return missing == 0 ? kOk : kDamage;
}

}  // namespace

int ClusterMain(int argc, char** argv) {
  CLI::App app("jigsaw --cluster: the clients of a replicated JigsawDB database (docs/replication.md).\n"
               "Writes and linearizable reads go to the leader; --stale reads the first replica given.\n"
               "Exit codes: 0 ok, 1 usage, 2 not found, 3 acknowledged keys missing (verify), 4 other errors.");
  std::string cluster, key, value, acked, prefix = "key", start;
  bool stale = false, sync = false;
  uint64_t first = 0, count = 0;
  uint32_t limit = 100;
  int rc = kOk;
  app.add_option("--cluster", cluster, "the replicas' client addresses, host:port,...")->required();
  app.require_subcommand(1);
  ReplicaClient* client = nullptr;
  std::unique_ptr<ReplicaClient> owned;
  auto connect = [&] {
    owned = std::make_unique<ReplicaClient>(SplitList(cluster));
    client = owned.get();
  };

  CLI::App* put = app.add_subcommand("put", "write a key and value through the leader");
  put->add_option("key", key)->required();
  put->add_option("value", value)->required();
  put->add_flag("--sync", sync, "apply it with WriteOptions::sync on every replica");
  put->callback([&] {
    connect();
    const Status s = client->Put(key, value, sync);
    rc = s.ok() ? kOk : Fail("put", s);
  });
  CLI::App* del = app.add_subcommand("delete", "delete a key through the leader");
  del->add_option("key", key)->required();
  del->add_flag("--sync", sync, "apply it with WriteOptions::sync on every replica");
  del->callback([&] {
    connect();
    const Status s = client->Delete(key, sync);
    rc = s.ok() ? kOk : Fail("delete", s);
  });
  CLI::App* get = app.add_subcommand("get", "print a key's value (exit 2 if not found)");
  get->add_option("key", key)->required();
  get->add_flag("--stale", stale, "read the first replica's state, leader or not");
  get->callback([&] {
    connect();
    const Status s = client->Get(key, &value, ConsistencyOf(stale));
    if (s.ok()) {
      std::printf("%s\n", Escape(value).c_str());
      rc = kOk;
    } else {
      rc = s.IsNotFound() ? kNotFound : Fail("get", s);
    }
  });
  CLI::App* scan = app.add_subcommand("scan", "print keys and values from --start, tab-separated");
  scan->add_option("--start", start, "first key (default: the first)");
  scan->add_option("--limit", limit, "at most this many")->capture_default_str();
  scan->add_flag("--stale", stale, "read the first replica's state, leader or not");
  scan->callback([&] {
    connect();
    std::vector<std::pair<std::string, std::string>> pairs;
    const Status s = client->Scan(start, limit, &pairs, ConsistencyOf(stale));
    if (!s.ok()) {
      rc = Fail("scan", s);
      return;
    }
    for (const auto& [k, v] : pairs) std::printf("%s\t%s\n", Escape(k).c_str(), Escape(v).c_str());
  });
  CLI::App* status = app.add_subcommand("status", "each replica's role, term, indexes and voters");
  status->callback([&] {
    connect();
    for (const std::string& address : SplitList(cluster)) {
      std::string text;
      const Status s = client->GetStatus(address, &text);
      std::printf("[%s]\n%s", address.c_str(), s.ok() ? text.c_str() : ("error=" + s.ToString() + "\n").c_str());
      if (!s.ok()) rc = kError;
    }
  });
  CLI::App* load = app.add_subcommand("load", "write keys <prefix><first>.. one by one, logging each acknowledged key");
  load->add_option("--count", count, "how many keys")->required();
  load->add_option("--first", first, "the first key's number")->capture_default_str();
  load->add_option("--prefix", prefix, "key prefix")->capture_default_str();
  load->add_option("--acked", acked, "file each acknowledged key is appended to")->required();
  load->add_flag("--sync", sync, "apply each with WriteOptions::sync on every replica");
  load->callback([&] {
    connect();
    rc = Load(client, prefix, first, count, acked, sync);
  });
  CLI::App* verify = app.add_subcommand("verify", "check that every key in --acked is on the first replica given");
  verify->add_option("--acked", acked, "the file `load` wrote")->required();
  verify->callback([&] {
    connect();
    rc = Verify(client, acked);
  });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kOk : kUsage;
  }
  return rc;
}

#endif  // JIGSAW_WITH_REPLICATION

}  // namespace jigsaw::tool
