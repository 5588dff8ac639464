// ReplicatedDB: three replicas in this process, raft over loopback TCP
// (libraft's libuv transport and log store). Writes through the leader
// reach every replica; a follower refuses writes and names the leader; a
// replica closed and reopened resumes from its log and database; a replica
// far behind is caught up by snapshot; a fourth server joins.
#include "jigsaw/replicated_db.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/replica_test_util.h"

namespace jigsaw {
namespace {

using test::WaitFor;

std::map<std::string, std::string> Contents(ReplicatedDB* db) {
  std::map<std::string, std::string> out;
  std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions(), ReadConsistency::kStale);
  for (it->SeekToFirst(); it->Valid(); it->Next()) out[it->key().ToString()] = it->value().ToString();
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return out;
}

class ReplicatedDBTest : public ::testing::Test {
 protected:
  void OpenReplica(size_t i, bool bootstrap = true) { cluster_.Open(i, bootstrap); }
  size_t Leader() { return cluster_.Leader(); }
  void Converge() { cluster_.Converge(); }
  ReplicatedDB* replica(size_t i) { return cluster_.replica(i); }

  // Puts keys [first, first + n) through the leader, retrying a write the
  // leader refused while leadership moved; into acked.
  void WriteKeys(int first, int n, std::map<std::string, std::string>* acked) {
    for (int k = first; k < first + n; ++k) {
      const std::string key = test::NumberedKey(k), value = test::NumberedValue(k);
      Status s;
      ASSERT_TRUE(WaitFor([&] {
        s = replica(Leader())->Put(WriteOptions(), key, value);
        return s.ok();
      })) << s.ToString();
      (*acked)[key] = value;
    }
  }

  test::ScratchDir scratch_;
  test::ReplicaCluster cluster_{scratch_.path()};
};

TEST_F(ReplicatedDBTest, WritesThroughTheLeaderReachEveryReplica) {
  for (size_t i = 0; i < 3; ++i) OpenReplica(i);
  std::map<std::string, std::string> acked;
  WriteKeys(0, 300, &acked);
  const size_t leader = Leader();
  std::string value;
  ASSERT_TRUE(replica(leader)->Get(ReadOptions(), ReadConsistency::kLinearizable, test::NumberedKey(7), &value).ok());
  EXPECT_EQ(value, test::NumberedValue(7));
  Converge();
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(Contents(replica(i)), acked) << "replica " << i;

  const size_t follower = (leader + 1) % 3;
  const Status refused = replica(follower)->Put(WriteOptions(), "k", "v");
  EXPECT_TRUE(ReplicatedDB::IsNotLeader(refused)) << refused.ToString();
  EXPECT_EQ(replica(follower)->Leader().id, cluster_.server(leader).id);
  EXPECT_TRUE(ReplicatedDB::IsNotLeader(
      replica(follower)->Get(ReadOptions(), ReadConsistency::kLinearizable, test::NumberedKey(7), &value)));
  ASSERT_TRUE(replica(follower)->Get(ReadOptions(), ReadConsistency::kStale, test::NumberedKey(7), &value).ok());
  EXPECT_EQ(value, test::NumberedValue(7));
  EXPECT_TRUE(replica(leader)->Put(WriteOptions(), Slice(std::string("\0jigsaw.replication/x", 21)), "v")
                  .IsInvalidArgument());
  EXPECT_EQ(replica(leader)->GetStatus().voters.size(), 3u);
}

TEST_F(ReplicatedDBTest, AClosedLeaderIsReplacedAndResumesWhereItStopped) {
  for (size_t i = 0; i < 3; ++i) OpenReplica(i);
  std::map<std::string, std::string> acked;
  WriteKeys(0, 200, &acked);
  const size_t old_leader = Leader();
  cluster_.Close(old_leader);
  WriteKeys(200, 200, &acked);  // through the new leader
  EXPECT_NE(Leader(), old_leader);
  OpenReplica(old_leader);
  Converge();
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(Contents(replica(i)), acked) << "replica " << i;
}

TEST_F(ReplicatedDBTest, AReplicaWhoseAddressIsTakenFailsToOpenAndLeavesNothingRunning) {
  const int port = std::stoi(cluster_.server(0).address.substr(cluster_.server(0).address.rfind(':') + 1));
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const sockaddr_in addr = test::LoopbackAddress(port);
  const bool taken = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) == 0 && ::listen(fd, 4) == 0;
  std::unique_ptr<ReplicatedDB> db;
  const Status s = taken ? ReplicatedDB::Open(cluster_.OptionsFor(0, true), &db) : Status::OK();
  ::close(fd);
  ASSERT_TRUE(taken) << "could not listen on " << port;
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(db, nullptr);
  OpenReplica(0);  // the same directory opens once the address is free
  EXPECT_NE(replica(0), nullptr);
}

TEST_F(ReplicatedDBTest, AReplicaFarBehindIsCaughtUpBySnapshot) {
  for (size_t i = 0; i < 3; ++i) OpenReplica(i);
  std::map<std::string, std::string> acked;
  WriteKeys(0, 20, &acked);
  const size_t behind = (Leader() + 1) % 3;
  cluster_.Close(behind);
  WriteKeys(20, 400, &acked);  // several snapshots, the log truncated past it
  OpenReplica(behind);
  Converge();
  EXPECT_GE(replica(behind)->GetStatus().snapshots_installed, 1u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(Contents(replica(i)), acked) << "replica " << i;
}

TEST_F(ReplicatedDBTest, LeadershipMovesWhereItIsSent) {
  for (size_t i = 0; i < 3; ++i) OpenReplica(i);
  std::map<std::string, std::string> acked;
  WriteKeys(0, 20, &acked);
  const size_t old_leader = Leader();
  const size_t target = (old_leader + 2) % 3;
  ASSERT_TRUE(replica(old_leader)->TransferLeadership(cluster_.server(target).id).ok());
  EXPECT_TRUE(WaitFor([&] { return replica(target)->GetStatus().role == "leader"; }));
  EXPECT_TRUE(ReplicatedDB::IsNotLeader(replica(old_leader)->TransferLeadership(0)));
  WriteKeys(20, 20, &acked);
  Converge();
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(Contents(replica(i)), acked) << "replica " << i;
}

TEST_F(ReplicatedDBTest, AServerJoinsAndAnotherLeaves) {
  for (size_t i = 0; i < 3; ++i) OpenReplica(i);
  std::map<std::string, std::string> acked;
  WriteKeys(0, 100, &acked);
  OpenReplica(3, /*bootstrap=*/false);
  Status s;
  ASSERT_TRUE(WaitFor([&] {
    s = replica(Leader())->AddServer(cluster_.server(3));
    return s.ok();
  })) << s.ToString();
  WriteKeys(100, 100, &acked);
  Converge();
  EXPECT_EQ(Contents(replica(3)), acked);
  const size_t leader = Leader();
  const size_t leaving = (leader + 1) % 3;
  ASSERT_TRUE(replica(leader)->RemoveServer(cluster_.server(leaving).id).ok());
  cluster_.Close(leaving);
  WriteKeys(200, 50, &acked);
  Converge();
  for (size_t i = 0; i < 4; ++i) {
    if (replica(i) != nullptr) {
      EXPECT_EQ(Contents(replica(i)), acked) << "replica " << i;
    }
  }
  EXPECT_EQ(replica(Leader())->GetStatus().voters.size(), 3u);
}

}  // namespace
}  // namespace jigsaw
