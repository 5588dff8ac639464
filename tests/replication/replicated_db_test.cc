// ReplicatedDB: three replicas in this process, raft over loopback TCP
// (libraft's libuv transport and log store). Writes through the leader
// reach every replica; a follower refuses writes and names the leader; a
// replica closed and reopened resumes from its log and database; a replica
// far behind is caught up by snapshot; a fourth server joins.
#include "jigsaw/replicated_db.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/db_test_util.h"

namespace jigsaw {
namespace {

// A loopback port nothing listens on now (the kernel's pick).
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  socklen_t len = sizeof(addr);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ::close(fd);
  return ntohs(addr.sin_port);
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

std::map<std::string, std::string> Contents(ReplicatedDB* db) {
  std::map<std::string, std::string> out;
  std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions(), ReadConsistency::kStale);
  for (it->SeekToFirst(); it->Valid(); it->Next()) out[it->key().ToString()] = it->value().ToString();
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return out;
}

class ReplicatedDBTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (uint64_t id = 1; id <= 4; ++id) servers_.push_back(ReplicaServer{id, "127.0.0.1:" + std::to_string(FreePort())});
    replicas_.resize(4);
  }
  void TearDown() override {
    for (auto& r : replicas_) r.reset();
  }

  ReplicaOptions OptionsFor(size_t i, bool bootstrap) const {
    ReplicaOptions options;
    options.self = servers_[i];
    options.dir = scratch_.path() + "/replica" + std::to_string(i + 1);
    options.db_options = test::SmallModeOptions(StorageMode::kDisk);
    if (bootstrap) options.bootstrap.assign(servers_.begin(), servers_.begin() + 3);
    options.election_timeout_ms = 300;
    options.heartbeat_timeout_ms = 50;
    options.snapshot_threshold = 64;
    options.snapshot_trailing = 16;
    return options;
  }
  void OpenReplica(size_t i, bool bootstrap = true) {
    const Status s = ReplicatedDB::Open(OptionsFor(i, bootstrap), &replicas_[i]);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // The index of the replica that leads, once one does.
  size_t Leader() {
    size_t leader = 0;
    EXPECT_TRUE(WaitFor([&] {
      for (size_t i = 0; i < replicas_.size(); ++i) {
        if (replicas_[i] != nullptr && replicas_[i]->GetStatus().role == "leader") {
          leader = i;
          return true;
        }
      }
      return false;
    }));
    return leader;
  }
  // Puts keys [first, first + n) through the leader, retrying a write the
  // leader refused while leadership moved; into acked.
  void WriteKeys(int first, int n, std::map<std::string, std::string>* acked) {
    for (int k = first; k < first + n; ++k) {
      const std::string key = test::NumberedKey(k), value = test::NumberedValue(k);
      Status s;
      ASSERT_TRUE(WaitFor([&] {
        s = replicas_[Leader()]->Put(WriteOptions(), key, value);
        return s.ok();
      })) << s.ToString();
      (*acked)[key] = value;
    }
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

  test::ScratchDir scratch_;
  std::vector<ReplicaServer> servers_;
  std::vector<std::unique_ptr<ReplicatedDB>> replicas_;
};

TEST_F(ReplicatedDBTest, WritesThroughTheLeaderReachEveryReplica) {
  for (size_t i = 0; i < 3; ++i) OpenReplica(i);
  std::map<std::string, std::string> acked;
  WriteKeys(0, 300, &acked);
  const size_t leader = Leader();
  std::string value;
  ASSERT_TRUE(replicas_[leader]->Get(ReadOptions(), ReadConsistency::kLinearizable, test::NumberedKey(7), &value).ok());
  EXPECT_EQ(value, test::NumberedValue(7));
  Converge();
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(Contents(replicas_[i].get()), acked) << "replica " << i;

  const size_t follower = (leader + 1) % 3;
  const Status refused = replicas_[follower]->Put(WriteOptions(), "k", "v");
  EXPECT_TRUE(ReplicatedDB::IsNotLeader(refused)) << refused.ToString();
  EXPECT_EQ(replicas_[follower]->Leader().id, servers_[leader].id);
  EXPECT_TRUE(ReplicatedDB::IsNotLeader(
      replicas_[follower]->Get(ReadOptions(), ReadConsistency::kLinearizable, test::NumberedKey(7), &value)));
  ASSERT_TRUE(replicas_[follower]->Get(ReadOptions(), ReadConsistency::kStale, test::NumberedKey(7), &value).ok());
  EXPECT_EQ(value, test::NumberedValue(7));
  EXPECT_TRUE(replicas_[leader]->Put(WriteOptions(), Slice(std::string("\0jigsaw.replication/x", 21)), "v")
                  .IsInvalidArgument());
  EXPECT_EQ(replicas_[leader]->GetStatus().voters.size(), 3u);
}

TEST_F(ReplicatedDBTest, AClosedLeaderIsReplacedAndResumesWhereItStopped) {
  for (size_t i = 0; i < 3; ++i) OpenReplica(i);
  std::map<std::string, std::string> acked;
  WriteKeys(0, 200, &acked);
  const size_t old_leader = Leader();
  replicas_[old_leader].reset();
  WriteKeys(200, 200, &acked);  // through the new leader
  EXPECT_NE(Leader(), old_leader);
  OpenReplica(old_leader);
  Converge();
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(Contents(replicas_[i].get()), acked) << "replica " << i;
}

TEST_F(ReplicatedDBTest, AReplicaFarBehindIsCaughtUpBySnapshot) {
  for (size_t i = 0; i < 3; ++i) OpenReplica(i);
  std::map<std::string, std::string> acked;
  WriteKeys(0, 20, &acked);
  const size_t behind = (Leader() + 1) % 3;
  replicas_[behind].reset();
  WriteKeys(20, 400, &acked);  // several snapshots, the log truncated past it
  OpenReplica(behind);
  Converge();
  EXPECT_GE(replicas_[behind]->GetStatus().snapshots_installed, 1u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(Contents(replicas_[i].get()), acked) << "replica " << i;
}

TEST_F(ReplicatedDBTest, AServerJoinsAndAnotherLeaves) {
  for (size_t i = 0; i < 3; ++i) OpenReplica(i);
  std::map<std::string, std::string> acked;
  WriteKeys(0, 100, &acked);
  OpenReplica(3, /*bootstrap=*/false);
  Status s;
  ASSERT_TRUE(WaitFor([&] {
    s = replicas_[Leader()]->AddServer(servers_[3]);
    return s.ok();
  })) << s.ToString();
  WriteKeys(100, 100, &acked);
  Converge();
  EXPECT_EQ(Contents(replicas_[3].get()), acked);
  const size_t leader = Leader();
  const size_t leaving = (leader + 1) % 3;
  ASSERT_TRUE(replicas_[leader]->RemoveServer(servers_[leaving].id).ok());
  replicas_[leaving].reset();
  WriteKeys(200, 50, &acked);
  Converge();
  for (size_t i = 0; i < 4; ++i) {
    if (replicas_[i] != nullptr) {
      EXPECT_EQ(Contents(replicas_[i].get()), acked) << "replica " << i;
    }
  }
  EXPECT_EQ(replicas_[Leader()]->GetStatus().voters.size(), 3u);
}

}  // namespace
}  // namespace jigsaw
