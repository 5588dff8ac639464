// The replica state machine under libraft's in-process fixture: whole
// clusters, deterministic, with crashes, partitions, snapshots and
// membership changes. After each, every acknowledged write is on every
// live replica, the replicas hold the same contents, and a write that was
// never acknowledged is whole or absent.
#include "replication/state_machine.h"

extern "C" {
#include <raft/fixture.h>
}

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "jigsaw/db.h"
#include "jigsaw/iterator.h"
#include "tests/support/db_test_util.h"

namespace jigsaw::replication {
namespace {

constexpr unsigned kMaxMsecs = 60'000;  // fixture time, not wall time

// A replica's contents, the replication's own keys left out.
std::map<std::string, std::string> UserContents(DB* db) {
  std::map<std::string, std::string> out;
  std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (!IsReservedKey(it->key())) out[it->key().ToString()] = it->value().ToString();
  }
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return out;
}

// One proposal: a batch of keys "b<batch>-<k>", and whether raft
// acknowledged it.
struct Proposal {
  struct raft_apply request {};
  int batch = 0;
  bool done = false;
  int status = -1;
  void* result = nullptr;
};

class Cluster {
 public:
  Cluster(unsigned n, const Options& options, const std::string& base) : options_(options), base_(base) {
    std::filesystem::create_directories(base);
    EXPECT_EQ(raft_fixture_initialize(&fixture_), 0);
    for (unsigned i = 0; i < n; ++i) Grow();
    struct raft_configuration conf;
    EXPECT_EQ(raft_fixture_configuration(&fixture_, n, &conf), 0);
    EXPECT_EQ(raft_fixture_bootstrap(&fixture_, &conf), 0);
    raft_configuration_close(&conf);
    EXPECT_EQ(raft_fixture_start(&fixture_), 0);
    started_ = true;
  }
  ~Cluster() {
    raft_fixture_close(&fixture_);
    machines_.clear();
  }

  // Adds a server (not yet in the configuration) and returns its index.
  unsigned Grow() {
    const unsigned i = static_cast<unsigned>(machines_.size());
    std::unique_ptr<StateMachine> machine;
    const Status s = StateMachine::Open(options_, base_ + "/replica" + std::to_string(i), &machine);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_EQ(raft_fixture_grow(&fixture_, machine->fsm()), 0);
    machine->Attach(raft_fixture_get(&fixture_, i));
    machines_.push_back(std::move(machine));
    if (started_) {
      EXPECT_EQ(raft_start(raft_fixture_get(&fixture_, i)), 0);  // joins when the leader adds it
    }
    return i;
  }

  struct raft_fixture* fixture() { return &fixture_; }
  StateMachine* machine(unsigned i) { return machines_[i].get(); }
  struct raft* raft(unsigned i) { return raft_fixture_get(&fixture_, i); }
  unsigned size() const { return static_cast<unsigned>(machines_.size()); }

  unsigned Leader() {
    EXPECT_TRUE(raft_fixture_step_until_has_leader(&fixture_, kMaxMsecs));
    return raft_fixture_leader_index(&fixture_);
  }

  // Steps until a server other than `excluded` leads; returns it.
  unsigned NewLeaderOtherThan(unsigned excluded) {
    EXPECT_TRUE(raft_fixture_step_until(
        &fixture_,
        [](struct raft_fixture* f, void* arg) {
          return f->leader_id != 0 && raft_fixture_leader_index(f) != *static_cast<unsigned*>(arg);
        },
        &excluded, kMaxMsecs));
    return raft_fixture_leader_index(&fixture_);
  }

  // Proposes batch `batch` (keys b<batch>-0..4) on server i.
  std::unique_ptr<Proposal> Propose(unsigned i, int batch) {
    auto p = std::make_unique<Proposal>();
    p->batch = batch;
    p->request.data = p.get();
    WriteBatch wb;
    for (int k = 0; k < 5; ++k) wb.Put(Key(batch, k), Value(batch, k));
    std::string command;
    EXPECT_TRUE(EncodeCommand(wb, false, nullptr, &command).ok());
    struct raft_buffer buf;
    buf.len = command.size();
    buf.base = raft_malloc(buf.len);
    std::memcpy(buf.base, command.data(), buf.len);
    const int rv = raft_apply(raft(i), &p->request, &buf, 1, [](struct raft_apply* req, int status, void* result) {
      auto* proposal = static_cast<Proposal*>(req->data);
      proposal->done = true;
      proposal->status = status;
      proposal->result = result;
    });
    if (rv != 0) {
      raft_free(buf.base);
      p->done = true;
      p->status = rv;
    }
    return p;
  }

  // Writes batches [first, first + n) through the leader, one at a time,
  // each acknowledged; into `acked`.
  void WriteThroughLeader(int first, int n, std::map<std::string, std::string>* acked) {
    for (int b = first; b < first + n; ++b) {
      std::unique_ptr<Proposal> p = Propose(Leader(), b);
      const bool done = raft_fixture_step_until(
          &fixture_, [](struct raft_fixture*, void* arg) { return static_cast<Proposal*>(arg)->done; }, p.get(),
          kMaxMsecs);
      ASSERT_TRUE(done) << "batch " << b;
      if (p->status != 0) {  // leadership moved meanwhile: try again
        --b;
        continue;
      }
      EXPECT_EQ(p->result, nullptr);
      for (int k = 0; k < 5; ++k) (*acked)[Key(b, k)] = Value(b, k);
    }
  }

  // Steps until every live server has applied the leader's commit index.
  void Converge(const std::vector<unsigned>& live) {
    const unsigned leader = Leader();
    // A barrier commits an entry of the leader's term, so the commit index
    // covers everything before it.
    struct raft_barrier barrier {};
    bool done = false;
    barrier.data = &done;
    ASSERT_EQ(raft_barrier(raft(leader), &barrier, [](struct raft_barrier* req, int) {
                *static_cast<bool*>(req->data) = true;
              }),
              0);
    ASSERT_TRUE(raft_fixture_step_until(
        &fixture_, [](struct raft_fixture*, void* arg) { return *static_cast<bool*>(arg); }, &done, kMaxMsecs));
    const raft_index commit = raft(leader)->commit_index;
    for (unsigned i : live) ASSERT_TRUE(raft_fixture_step_until_applied(&fixture_, i, commit, kMaxMsecs)) << i;
  }

  static std::string Key(int batch, int k) { return "b" + std::to_string(batch) + "-" + std::to_string(k); }
  static std::string Value(int batch, int k) { return "value of batch " + std::to_string(batch) + " key " + std::to_string(k); }

 private:
  const Options options_;
  const std::string base_;
  struct raft_fixture fixture_ {};
  bool started_ = false;
  std::vector<std::unique_ptr<StateMachine>> machines_;
};

class ReplicationTest : public ::testing::TestWithParam<StorageMode> {
 protected:
  Options ReplicaOptions() const {
    Options options = test::SmallModeOptions(GetParam());
    options.pmem_pool_size = uint64_t{64} << 20;
    return options;
  }

  // Every live replica holds exactly the same contents, which include every
  // acknowledged write, and every batch is whole or absent.
  static void ExpectConverged(Cluster* cluster, const std::vector<unsigned>& live,
                              const std::map<std::string, std::string>& acked, int batches) {
    ASSERT_FALSE(live.empty());
    const std::map<std::string, std::string> first = UserContents(cluster->machine(live[0])->db().get());
    for (unsigned i : live) {
      EXPECT_EQ(UserContents(cluster->machine(i)->db().get()), first) << "replica " << i;
      EXPECT_EQ(cluster->machine(i)->applied_index(), cluster->machine(live[0])->applied_index()) << i;
    }
    for (const auto& [key, value] : acked) {
      auto it = first.find(key);
      ASSERT_TRUE(it != first.end()) << "acknowledged " << key << " is missing";
      EXPECT_EQ(it->second, value);
    }
    for (int b = 0; b < batches; ++b) {
      int present = 0;
      for (int k = 0; k < 5; ++k) present += first.count(Cluster::Key(b, k)) > 0 ? 1 : 0;
      EXPECT_TRUE(present == 0 || present == 5) << "batch " << b << " is half applied: " << present << " of 5";
    }
  }

  test::ScratchDir scratch_;
};

TEST_P(ReplicationTest, WritesReachEveryReplica) {
  Cluster cluster(3, ReplicaOptions(), scratch_.path());
  std::map<std::string, std::string> acked;
  cluster.WriteThroughLeader(0, 200, &acked);
  cluster.Converge({0, 1, 2});
  ExpectConverged(&cluster, {0, 1, 2}, acked, 200);
  EXPECT_EQ(UserContents(cluster.machine(0)->db().get()), acked);
}

TEST_P(ReplicationTest, LeaderCrashElectsAnotherAndTheOldOneCatchesUp) {
  Cluster cluster(3, ReplicaOptions(), scratch_.path());
  std::map<std::string, std::string> acked;
  cluster.WriteThroughLeader(0, 100, &acked);
  const unsigned old_leader = cluster.Leader();
  // In flight when it dies: may commit or not, never in part.
  std::unique_ptr<Proposal> in_flight = cluster.Propose(old_leader, 100);
  raft_fixture_kill(cluster.fixture(), old_leader);
  ASSERT_NE(cluster.NewLeaderOtherThan(old_leader), old_leader);
  cluster.WriteThroughLeader(101, 100, &acked);
  raft_fixture_revive(cluster.fixture(), old_leader);
  cluster.Converge({0, 1, 2});
  ExpectConverged(&cluster, {0, 1, 2}, acked, 201);
}

TEST_P(ReplicationTest, WritesToAnIsolatedLeaderAreNeverApplied) {
  Cluster cluster(3, ReplicaOptions(), scratch_.path());
  std::map<std::string, std::string> acked;
  cluster.WriteThroughLeader(0, 50, &acked);
  const unsigned old_leader = cluster.Leader();
  for (unsigned j = 0; j < 3; ++j) {
    if (j != old_leader) {
      raft_fixture_saturate(cluster.fixture(), old_leader, j);
      raft_fixture_saturate(cluster.fixture(), j, old_leader);
    }
  }
  std::vector<std::unique_ptr<Proposal>> lost;
  for (int b = 50; b < 60; ++b) lost.push_back(cluster.Propose(old_leader, b));
  // The majority side elects a leader of its own and goes on.
  ASSERT_NE(cluster.NewLeaderOtherThan(old_leader), old_leader);
  raft_fixture_step_until_elapsed(cluster.fixture(), 2000);
  for (unsigned j = 0; j < 3; ++j) {
    if (j != old_leader) {
      raft_fixture_desaturate(cluster.fixture(), old_leader, j);
      raft_fixture_desaturate(cluster.fixture(), j, old_leader);
    }
  }
  cluster.WriteThroughLeader(60, 50, &acked);
  cluster.Converge({0, 1, 2});
  ExpectConverged(&cluster, {0, 1, 2}, acked, 110);
  const std::map<std::string, std::string> contents = UserContents(cluster.machine(0)->db().get());
  for (const auto& p : lost) {
    EXPECT_TRUE(!p->done || p->status != 0) << "batch " << p->batch << " acknowledged by an isolated leader";
    EXPECT_EQ(contents.count(Cluster::Key(p->batch, 0)), 0u) << "batch " << p->batch;
  }
}

TEST_P(ReplicationTest, AFollowerFarBehindCatchesUpBySnapshot) {
  Cluster cluster(3, ReplicaOptions(), scratch_.path());
  for (unsigned i = 0; i < 3; ++i) {
    raft_set_snapshot_threshold(cluster.raft(i), 32);
    raft_set_snapshot_trailing(cluster.raft(i), 8);
  }
  std::map<std::string, std::string> acked;
  cluster.WriteThroughLeader(0, 20, &acked);
  const unsigned follower = (cluster.Leader() + 1) % 3;
  raft_fixture_kill(cluster.fixture(), follower);
  cluster.WriteThroughLeader(20, 300, &acked);
  // Its first install fails part way, as a crash would leave it; the
  // leader sends the snapshot again.
  int failures = 0;
  cluster.machine(follower)->crash_point = [&](int step) { return step == 2 && failures++ == 0; };
  raft_fixture_revive(cluster.fixture(), follower);
  cluster.Converge({0, 1, 2});
  EXPECT_EQ(failures, 2);  // the failed install, then one that passed step 2
  EXPECT_GE(cluster.machine(follower)->restores(), 1u);
  ExpectConverged(&cluster, {0, 1, 2}, acked, 320);
  // The replaced generation is gone.
  int generations = 0;
  for (const auto& e : std::filesystem::directory_iterator(scratch_.path() + "/replica" + std::to_string(follower))) {
    generations += e.path().filename().string().rfind("db-", 0) == 0 ? 1 : 0;
  }
  EXPECT_EQ(generations, 1);
}

TEST_P(ReplicationTest, MembershipChangesAddAndRemoveServers) {
  Cluster cluster(3, ReplicaOptions(), scratch_.path());
  std::map<std::string, std::string> acked;
  cluster.WriteThroughLeader(0, 50, &acked);
  const unsigned added = cluster.Grow();
  struct Change {
    struct raft_change request {};
    bool done = false;
    int status = -1;
  };
  auto change = [&](auto&& call) {
    Change c;
    c.request.data = &c;
    ASSERT_EQ(call(&c.request,
                   [](struct raft_change* req, int status) {
                     auto* ch = static_cast<Change*>(req->data);
                     ch->done = true;
                     ch->status = status;
                   }),
              0);
    ASSERT_TRUE(raft_fixture_step_until(
        cluster.fixture(), [](struct raft_fixture*, void* arg) { return static_cast<Change*>(arg)->done; }, &c,
        kMaxMsecs));
    ASSERT_EQ(c.status, 0);
  };
  const raft_id added_id = cluster.raft(added)->id;
  change([&](struct raft_change* req, raft_change_cb cb) {
    return raft_add(cluster.raft(cluster.Leader()), req, added_id, cluster.raft(added)->address, cb);
  });
  change([&](struct raft_change* req, raft_change_cb cb) {
    return raft_assign(cluster.raft(cluster.Leader()), req, added_id, RAFT_VOTER, cb);
  });
  cluster.WriteThroughLeader(50, 50, &acked);
  cluster.Converge({0, 1, 2, added});
  ExpectConverged(&cluster, {0, 1, 2, added}, acked, 100);

  // Remove a follower that is not the new one; the other three go on.
  const unsigned leader = cluster.Leader();
  unsigned removed = 0;
  while (removed == leader || removed == added) ++removed;
  const raft_id removed_id = cluster.raft(removed)->id;
  change([&](struct raft_change* req, raft_change_cb cb) {
    return raft_remove(cluster.raft(cluster.Leader()), req, removed_id, cb);
  });
  raft_fixture_kill(cluster.fixture(), removed);
  cluster.WriteThroughLeader(100, 50, &acked);
  std::vector<unsigned> live;
  for (unsigned i = 0; i < cluster.size(); ++i) {
    if (i != removed) live.push_back(i);
  }
  cluster.Converge(live);
  ExpectConverged(&cluster, live, acked, 150);
}

TEST_P(ReplicationTest, AMalformedEntryIsRecordedButNotApplied) {
  Cluster cluster(3, ReplicaOptions(), scratch_.path());
  std::map<std::string, std::string> acked;
  cluster.WriteThroughLeader(0, 5, &acked);
  Proposal p;
  p.request.data = &p;
  struct raft_buffer buf;
  buf.len = 7;
  buf.base = raft_malloc(buf.len);
  std::memcpy(buf.base, "garbage", buf.len);
  ASSERT_EQ(raft_apply(cluster.raft(cluster.Leader()), &p.request, &buf, 1,
                       [](struct raft_apply* req, int status, void* result) {
                         auto* proposal = static_cast<Proposal*>(req->data);
                         proposal->done = true;
                         proposal->status = status;
                         proposal->result = result;
                       }),
            0);
  ASSERT_TRUE(raft_fixture_step_until(
      cluster.fixture(), [](struct raft_fixture*, void* arg) { return static_cast<Proposal*>(arg)->done; }, &p,
      kMaxMsecs));
  EXPECT_EQ(p.status, 0);
  EXPECT_EQ(p.result, &kMalformedCommand);
  cluster.WriteThroughLeader(5, 5, &acked);
  cluster.Converge({0, 1, 2});
  ExpectConverged(&cluster, {0, 1, 2}, acked, 10);
  EXPECT_EQ(UserContents(cluster.machine(0)->db().get()), acked);
}

// A batch the database refuses (a range delete whose begin is past its end
// in the comparator's order, which EncodeCommand cannot see without the
// comparator) is recorded like a malformed entry: the cluster goes on.
TEST_P(ReplicationTest, AnEntryTheDatabaseRefusesDoesNotStopTheCluster) {
  Cluster cluster(3, ReplicaOptions(), scratch_.path());
  std::map<std::string, std::string> acked;
  cluster.WriteThroughLeader(0, 5, &acked);
  WriteBatch reversed;
  reversed.Put("x", "never applied");
  reversed.DeleteRange("z", "a");
  std::string command;
  ASSERT_TRUE(EncodeCommand(reversed, false, nullptr, &command).ok());
  Proposal p;
  p.request.data = &p;
  struct raft_buffer buf;
  buf.len = command.size();
  buf.base = raft_malloc(buf.len);
  std::memcpy(buf.base, command.data(), buf.len);
  ASSERT_EQ(raft_apply(cluster.raft(cluster.Leader()), &p.request, &buf, 1,
                       [](struct raft_apply* req, int status, void* result) {
                         auto* proposal = static_cast<Proposal*>(req->data);
                         proposal->done = true;
                         proposal->status = status;
                         proposal->result = result;
                       }),
            0);
  ASSERT_TRUE(raft_fixture_step_until(
      cluster.fixture(), [](struct raft_fixture*, void* arg) { return static_cast<Proposal*>(arg)->done; }, &p,
      kMaxMsecs));
  EXPECT_EQ(p.status, 0);
  EXPECT_EQ(p.result, &kMalformedCommand);
  cluster.WriteThroughLeader(5, 5, &acked);
  cluster.Converge({0, 1, 2});
  ExpectConverged(&cluster, {0, 1, 2}, acked, 10);
  EXPECT_EQ(UserContents(cluster.machine(0)->db().get()), acked);
}

INSTANTIATE_TEST_SUITE_P(Modes, ReplicationTest, ::testing::Values(StorageMode::kPmem, StorageMode::kDisk),
                         test::ModeName);

// The state machine alone: its commands, its reopen, and a restore stopped
// at each of its steps as a crash would stop it.
class StateMachineTest : public ::testing::Test {
 protected:
  Options ReplicaOptions() const {
    Options options = test::SmallModeOptions(StorageMode::kDisk);
    return options;
  }
  test::ScratchDir scratch_;
};

TEST_F(StateMachineTest, ACommandMayNotNameAReservedKey) {
  WriteBatch batch;
  batch.Put("user", "v");
  std::string command;
  EXPECT_TRUE(EncodeCommand(batch, true, nullptr, &command).ok());
  EXPECT_EQ(command.size() % 8, 0u);  // what libraft's log store reads back
  batch.Put(AppliedIndexKey(), "x");
  const Status s = EncodeCommand(batch, true, nullptr, &command);
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  WriteBatch deletes;
  deletes.Delete(Slice(std::string("\0jigsaw.replication/other", 25)));
  EXPECT_TRUE(EncodeCommand(deletes, false, nullptr, &command).IsInvalidArgument());
  WriteBatch reversed;
  reversed.DeleteRange("z", "a");
  EXPECT_TRUE(EncodeCommand(reversed, false, BytewiseComparator(), &command).IsInvalidArgument());
}

TEST_F(StateMachineTest, AReopenedReplicaResumesAtItsAppliedIndex) {
  std::map<std::string, std::string> acked;
  uint64_t applied = 0;
  {
    Cluster cluster(1, ReplicaOptions(), scratch_.path());
    cluster.WriteThroughLeader(0, 30, &acked);
    applied = cluster.machine(0)->applied_index();
    EXPECT_GE(applied, 30u);
  }
  std::unique_ptr<StateMachine> machine;
  Options options = ReplicaOptions();
  options.create_if_missing = false;
  ASSERT_TRUE(StateMachine::Open(options, scratch_.path() + "/replica0", &machine).ok());
  EXPECT_EQ(machine->applied_index(), applied);
  EXPECT_EQ(UserContents(machine->db().get()), acked);
}

TEST_F(StateMachineTest, ARestoreStoppedAtAnyStepLeavesTheOldOrTheNewDatabase) {
  // A snapshot of a one-server cluster's 40 batches.
  std::map<std::string, std::string> newer;
  struct raft_buffer* bufs = nullptr;
  unsigned n_bufs = 0;
  uint64_t newer_index = 0;
  test::ScratchDir source_dir;
  Cluster source(1, ReplicaOptions(), source_dir.path());
  source.WriteThroughLeader(0, 40, &newer);
  newer_index = source.machine(0)->applied_index();
  struct raft_fsm* fsm = source.machine(0)->fsm();
  ASSERT_EQ(fsm->snapshot(fsm, &bufs, &n_bufs), 0);
  ASSERT_EQ(n_bufs, 1u);
  const std::string archive(static_cast<const char*>(bufs[0].base), bufs[0].len);
  ASSERT_EQ(fsm->snapshot_finalize(fsm, &bufs, &n_bufs), 0);

  for (int step = 1; step <= 5; ++step) {
    SCOPED_TRACE("crash at step " + std::to_string(step));
    const std::string dir = scratch_.path() + "/target" + std::to_string(step);
    std::map<std::string, std::string> older;
    uint64_t older_index = 0;
    {
      Cluster target(1, ReplicaOptions(), dir);
      target.WriteThroughLeader(1000, 5, &older);
      older_index = target.machine(0)->applied_index();
      StateMachine* machine = target.machine(0);
      machine->crash_point = [step](int at) { return at == step; };
      struct raft_buffer buf;
      buf.len = archive.size();
      buf.base = raft_malloc(buf.len);
      std::memcpy(buf.base, archive.data(), buf.len);
      const int rv = machine->fsm()->restore(machine->fsm(), &buf);
      if (rv != 0) raft_free(buf.base);  // on failure the caller (raft) frees it
      EXPECT_EQ(rv == 0, step == 5);
    }
    std::unique_ptr<StateMachine> reopened;
    Options options = ReplicaOptions();
    options.create_if_missing = false;
    ASSERT_TRUE(StateMachine::Open(options, dir + "/replica0", &reopened).ok());
    const bool is_new = step >= 4;
    EXPECT_EQ(reopened->applied_index(), is_new ? newer_index : older_index);
    EXPECT_EQ(UserContents(reopened->db().get()), is_new ? newer : older);
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir + "/replica0")) {
      names.push_back(e.path().filename().string());
    }
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names.size(), 2u) << "left over: " << ::testing::PrintToString(names);
  }
}

TEST_F(StateMachineTest, ADamagedSnapshotIsRefusedAndChangesNothing) {
  test::ScratchDir source_dir;
  std::map<std::string, std::string> newer, older;
  Cluster source(1, ReplicaOptions(), source_dir.path());
  source.WriteThroughLeader(0, 10, &newer);
  struct raft_fsm* fsm = source.machine(0)->fsm();
  struct raft_buffer* bufs = nullptr;
  unsigned n_bufs = 0;
  ASSERT_EQ(fsm->snapshot(fsm, &bufs, &n_bufs), 0);
  std::string archive(static_cast<const char*>(bufs[0].base), bufs[0].len);
  ASSERT_EQ(fsm->snapshot_finalize(fsm, &bufs, &n_bufs), 0);
  archive[archive.size() / 2] ^= 0x5a;

  Cluster target(1, ReplicaOptions(), scratch_.path());
  target.WriteThroughLeader(100, 3, &older);
  StateMachine* machine = target.machine(0);
  const uint64_t index = machine->applied_index();
  struct raft_buffer buf;
  buf.len = archive.size();
  buf.base = raft_malloc(buf.len);
  std::memcpy(buf.base, archive.data(), buf.len);
  EXPECT_EQ(machine->fsm()->restore(machine->fsm(), &buf), RAFT_CORRUPT);
  raft_free(buf.base);
  EXPECT_EQ(machine->applied_index(), index);
  EXPECT_EQ(UserContents(machine->db().get()), older);
}

}  // namespace
}  // namespace jigsaw::replication
