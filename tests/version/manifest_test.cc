// The manifest (version/manifest.h): its codec, and the file store of disk
// mode -- a committed manifest reads back after reopening, a new commit
// replaces it whole, damage is Corruption, and a failed commit leaves the
// old manifest in force.
#include "version/manifest.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "pmem/pool_space.h"
#include "tests/support/block_test_util.h"
#include "tests/support/db_test_util.h"
#include "tests/support/fault_injection_fs.h"
#include "tests/support/forwarding_fs.h"
#include "util/checksum.h"
#include "util/coding.h"

namespace jigsaw {
namespace {

ManifestState SampleState() {
  ManifestState state;
  state.generation = 42;
  state.last_sequence = 123456789;
  state.next_number = 77;
  state.wal_segments = {{4096, 1 << 20, 70}, {8192, 2 << 20, 75}};
  state.blocks = {{1 << 20, 5000, 10, 0}, {2 << 20, 6000, 11, 1}, {3 << 20, 7000, 12, 6}};
  return state;
}

TEST(ManifestTest, RoundTrip) {
  const ManifestState state = SampleState();
  test::AlignedBuffer buffer(ManifestSize(state));
  EncodeManifest(state, buffer.data());
  ManifestState decoded;
  ASSERT_TRUE(DecodeManifest(buffer.data(), buffer.size(), &decoded).ok());
  EXPECT_EQ(decoded.generation, 42u);
  EXPECT_EQ(decoded.last_sequence, 123456789u);
  EXPECT_EQ(decoded.next_number, 77u);
  ASSERT_EQ(decoded.wal_segments.size(), 2u);
  EXPECT_EQ(decoded.wal_segments[1].number, 75u);
  ASSERT_EQ(decoded.blocks.size(), 3u);
  EXPECT_EQ(decoded.blocks[2].level, 6);
  EXPECT_EQ(decoded.blocks[1].size, 6000u);
}

TEST(ManifestTest, EveryDamageIsDetected) {
  const ManifestState state = SampleState();
  test::AlignedBuffer buffer(ManifestSize(state));
  EncodeManifest(state, buffer.data());
  ManifestState decoded;
  for (size_t pos = 0; pos < buffer.size(); ++pos) {
    test::AlignedBuffer copy(buffer.size());
    std::memcpy(copy.data(), buffer.data(), buffer.size());
    copy.data()[pos] ^= 0x10;
    Status s = DecodeManifest(copy.data(), copy.size(), &decoded);
    EXPECT_TRUE(s.IsCorruption() || s.IsNotSupported()) << "byte " << pos;
  }
  for (size_t len = 0; len < buffer.size(); ++len) {
    EXPECT_FALSE(DecodeManifest(buffer.data(), len, &decoded).ok()) << "length " << len;
  }
}

uint32_t EncodedVersion(const test::AlignedBuffer& record) { return DecodeFixed32(record.data() + 8); }

// Sets the version and the flags of block entry `block` of an encoded
// record, with its CRC made to match: a record another writer could have
// written.
void Rewrite(test::AlignedBuffer* record, const ManifestState& state, size_t block, uint32_t version, uint32_t flags) {
  char* data = record->data();
  EncodeFixed32(data + 8, version);
  char* entry = data + 64 + 24 * state.wal_segments.size() + 32 * block;
  EncodeFixed32(entry + 28, flags);
  const uint64_t size = DecodeFixed64(data + 16);
  EncodeFixed32(data + 12, crc32c::Value(data + 16, size - 16));
}

// Flag bit 1 marks a pmem table image (docs/manifest.md); a record holding
// none is written as version 2, which older builds read.
TEST(ManifestTest, TableImagesRoundTripAndNeedVersion3) {
  ManifestState state = SampleState();
  test::AlignedBuffer keyset_only(ManifestSize(state));
  EncodeManifest(state, keyset_only.data());
  EXPECT_EQ(EncodedVersion(keyset_only), 2u);

  state.blocks[1].pmem_layout = PmemLayout::kTableImage;
  state.blocks.push_back({0, 9000, 13, 5, Residence::kSsd});
  test::AlignedBuffer with_image(ManifestSize(state));
  EncodeManifest(state, with_image.data());
  EXPECT_EQ(EncodedVersion(with_image), 3u);
  ManifestState decoded;
  ASSERT_TRUE(DecodeManifest(with_image.data(), with_image.size(), &decoded).ok());
  ASSERT_EQ(decoded.blocks.size(), 4u);
  for (size_t i = 0; i < decoded.blocks.size(); ++i) {
    EXPECT_EQ(decoded.blocks[i].pmem_layout, i == 1 ? PmemLayout::kTableImage : PmemLayout::kKeySetBlock) << i;
    EXPECT_EQ(decoded.blocks[i].residence, i == 3 ? Residence::kSsd : Residence::kPmem) << i;
  }

  // An image among a pending compaction's shadows needs version 3 too.
  ManifestState pending = SampleState();
  pending.pending.push_back({2, {11}, {{5 << 20, 4000, 9, 1, Residence::kPmem, PmemLayout::kTableImage}}});
  test::AlignedBuffer shadow_image(ManifestSize(pending));
  EncodeManifest(pending, shadow_image.data());
  EXPECT_EQ(EncodedVersion(shadow_image), 3u);
  ASSERT_TRUE(DecodeManifest(shadow_image.data(), shadow_image.size(), &decoded).ok());
  ASSERT_EQ(decoded.pending.size(), 1u);
  ASSERT_EQ(decoded.pending[0].shadows.size(), 1u);
  EXPECT_EQ(decoded.pending[0].shadows[0].pmem_layout, PmemLayout::kTableImage);
  EXPECT_EQ(decoded.pending[0].shadows[0].number, 9u);
}

TEST(ManifestTest, TheImageFlagIsCorruptionInVersion2AndOnAnSsdTable) {
  ManifestState state = SampleState();
  state.blocks[0].pmem_layout = PmemLayout::kTableImage;
  test::AlignedBuffer record(ManifestSize(state));
  EncodeManifest(state, record.data());
  ManifestState decoded;
  ASSERT_TRUE(DecodeManifest(record.data(), record.size(), &decoded).ok());

  Rewrite(&record, state, 0, /*version=*/2, /*flags=*/2);  // bit 1 before version 3
  EXPECT_TRUE(DecodeManifest(record.data(), record.size(), &decoded).IsCorruption());
  Rewrite(&record, state, 0, /*version=*/3, /*flags=*/3);  // an SSD table "held in a pmem object"
  EXPECT_TRUE(DecodeManifest(record.data(), record.size(), &decoded).IsCorruption());
  Rewrite(&record, state, 0, /*version=*/3, /*flags=*/4);  // a bit no version defines
  EXPECT_TRUE(DecodeManifest(record.data(), record.size(), &decoded).IsCorruption());
  Rewrite(&record, state, 0, /*version=*/5, /*flags=*/2);
  EXPECT_TRUE(DecodeManifest(record.data(), record.size(), &decoded).IsNotSupported());
  Rewrite(&record, state, 0, /*version=*/2, /*flags=*/0);  // as an older writer: a KeySet block
  ASSERT_TRUE(DecodeManifest(record.data(), record.size(), &decoded).ok());
  EXPECT_EQ(decoded.blocks[0].pmem_layout, PmemLayout::kKeySetBlock);
}

// Range tombstones make a record version 4; without them it stays the
// version older builds read. A tombstone cut short, empty or sequence 0 is
// Corruption.
TEST(ManifestTest, RangeTombstonesAreVersion4AndRoundTrip) {
  ManifestState state = SampleState();
  {
    test::AlignedBuffer record(ManifestSize(state));
    EncodeManifest(state, record.data());
    EXPECT_EQ(DecodeFixed32(record.data() + 8), 2u);
  }
  state.range_tombstones.push_back({"apple", "banana", 7});
  state.range_tombstones.push_back({"", std::string("\xff\x00z", 3), 9});
  test::AlignedBuffer record(ManifestSize(state));
  EncodeManifest(state, record.data());
  EXPECT_EQ(DecodeFixed32(record.data() + 8), 4u);
  ManifestState decoded;
  ASSERT_TRUE(DecodeManifest(record.data(), record.size(), &decoded).ok());
  ASSERT_EQ(decoded.range_tombstones.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(decoded.range_tombstones[i].begin, state.range_tombstones[i].begin);
    EXPECT_EQ(decoded.range_tombstones[i].end, state.range_tombstones[i].end);
    EXPECT_EQ(decoded.range_tombstones[i].sequence, state.range_tombstones[i].sequence);
  }
  EXPECT_EQ(decoded.blocks.size(), state.blocks.size());
  // One tombstone more than the record holds: cut short.
  EncodeFixed32(record.data() + 60, 3);
  EncodeFixed32(record.data() + 12, crc32c::Value(record.data() + 16, record.size() - 16));
  EXPECT_TRUE(DecodeManifest(record.data(), record.size(), &decoded).IsCorruption());
  // Sequence 0.
  EncodeManifest(state, record.data());
  const uint64_t last = ManifestSize(state) - 16 - 8;  // the last tombstone: 16 bytes of header, 8 of keys
  EncodeFixed64(record.data() + last, 0);
  EncodeFixed32(record.data() + 12, crc32c::Value(record.data() + 16, record.size() - 16));
  EXPECT_TRUE(DecodeManifest(record.data(), record.size(), &decoded).IsCorruption());
}

void ExpectSameState(const ManifestState& a, const ManifestState& b) {
  EXPECT_EQ(a.generation, b.generation);
  EXPECT_EQ(a.last_sequence, b.last_sequence);
  EXPECT_EQ(a.next_number, b.next_number);
  ASSERT_EQ(a.wal_segments.size(), b.wal_segments.size());
  ASSERT_EQ(a.blocks.size(), b.blocks.size());
  for (size_t i = 0; i < a.blocks.size(); ++i) {
    EXPECT_EQ(a.blocks[i].size, b.blocks[i].size);
    EXPECT_EQ(a.blocks[i].level, b.blocks[i].level);
  }
}

TEST(FileManifestStoreTest, ACommittedManifestReadsBackAndANewOneReplacesIt) {
  test::ScratchDir dir;
  SyncStats stats;
  {
    FileManifestStore store(FileSystem::Default(), dir.path(), BytewiseComparator(), &stats);
    ManifestState state;
    bool exists = true;
    ASSERT_TRUE(store.Load(&state, &exists).ok());
    EXPECT_FALSE(exists);  // a new database
    ASSERT_TRUE(store.Commit(SampleState(), {}, {}, false).ok());
    EXPECT_TRUE(store.TakeLateError().ok());
  }
  FileManifestStore store(FileSystem::Default(), dir.path(), BytewiseComparator(), &stats);
  ManifestState loaded;
  bool exists = false;
  ASSERT_TRUE(store.Load(&loaded, &exists).ok());
  ASSERT_TRUE(exists);
  ExpectSameState(loaded, SampleState());

  ManifestState next = SampleState();
  next.generation = 43;
  next.blocks.pop_back();
  ASSERT_TRUE(store.Commit(next, {}, {}, false).ok());
  ASSERT_TRUE(store.Load(&loaded, &exists).ok());
  ExpectSameState(loaded, next);
  EXPECT_GT(stats.syncs.load(), 0u);
}

TEST(FileManifestStoreTest, DamageIsCorruptionAndAnotherComparatorIsRefused) {
  test::ScratchDir dir;
  SyncStats stats;
  FileManifestStore store(FileSystem::Default(), dir.path(), BytewiseComparator(), &stats);
  ASSERT_TRUE(store.Commit(SampleState(), {}, {}, false).ok());
  const std::string path = dir.path() + "/MANIFEST";
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(bytes.size(), 300u);

  class OtherComparator : public Comparator {
   public:
    int Compare(const Slice& a, const Slice& b) const override { return a.compare(b); }
    const char* Name() const override { return "test.Other"; }
  } other;
  FileManifestStore other_store(FileSystem::Default(), dir.path(), &other, &stats);
  ManifestState state;
  bool exists = false;
  EXPECT_FALSE(other_store.Load(&state, &exists).ok());

  for (size_t pos : {size_t{300}, bytes.size() - 1}) {  // in the record
    std::string damaged = bytes;
    damaged[pos] ^= 0x40;
    std::ofstream(path, std::ios::binary | std::ios::trunc) << damaged;
    Status s = store.Load(&state, &exists);
    EXPECT_TRUE(s.IsCorruption() || s.IsNotSupported()) << pos << ": " << s.ToString();
  }
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes.substr(0, bytes.size() / 2);
  EXPECT_FALSE(store.Load(&state, &exists).ok());
}

TEST(FileManifestStoreTest, AFailedCommitLeavesTheOldManifestInForce) {
  test::ScratchDir dir;
  SyncStats stats;
  test::FaultInjectionFileSystem fs;
  FileManifestStore store(&fs, dir.path(), BytewiseComparator(), &stats);
  ASSERT_TRUE(store.Commit(SampleState(), {}, {}, false).ok());
  fs.SetSyncNoSpace(true);  // the new manifest's sync fails
  ManifestState next = SampleState();
  next.generation = 99;
  EXPECT_FALSE(store.Commit(next, {}, {}, false).ok());
  fs.SetSyncNoSpace(false);
  ManifestState loaded;
  bool exists = false;
  ASSERT_TRUE(store.Load(&loaded, &exists).ok());
  EXPECT_EQ(loaded.generation, 42u);
}

// Power fails during a commit -- after the new manifest's sync and before
// its rename, or after the rename and before the directory sync: the file
// system then holds the old manifest or the new one, never neither (the
// crash model once dropped the renamed file, leaving no MANIFEST). A commit
// whose rename failed did not happen; one whose rename happened stands, its
// failed directory sync reported later.
TEST(FileManifestStoreTest, APowerFailureDuringACommitLeavesAManifest) {
  for (const bool before_rename : {true, false}) {
    SCOPED_TRACE(before_rename ? "before the rename" : "before the directory sync");
    test::ScratchDir dir;
    SyncStats stats;
    test::FaultInjectionFileSystem faults;
    class CrashDuringCommit final : public test::ForwardingFileSystem {
     public:
      CrashDuringCommit(test::FaultInjectionFileSystem* faults, bool before_rename)
          : ForwardingFileSystem(faults), faults_(faults), before_rename_(before_rename) {}
      Status RenameFile(const std::string& from, const std::string& to) override {
        if (armed && before_rename_) faults_->SetActive(false);
        return ForwardingFileSystem::RenameFile(from, to);
      }
      Status SyncDir(const std::string& dir) override {
        if (armed) faults_->SetActive(false);
        return ForwardingFileSystem::SyncDir(dir);
      }
      bool armed = false;

     private:
      test::FaultInjectionFileSystem* const faults_;
      const bool before_rename_;
    } fs(&faults, before_rename);
    FileManifestStore store(&fs, dir.path(), BytewiseComparator(), &stats);
    ASSERT_TRUE(store.Commit(SampleState(), {}, {}, false).ok());
    fs.armed = true;
    ManifestState next = SampleState();
    next.generation = 99;
    const Status committed = store.Commit(next, {}, {}, false);
    EXPECT_EQ(committed.ok(), !before_rename) << committed.ToString();
    if (!before_rename) {
      EXPECT_FALSE(store.TakeLateError().ok());
    }
    faults.DropUnsyncedData();
    faults.SetActive(true);
    FileManifestStore reopened(FileSystem::Default(), dir.path(), BytewiseComparator(), &stats);
    ManifestState loaded;
    bool exists = false;
    ASSERT_TRUE(reopened.Load(&loaded, &exists).ok());
    ASSERT_TRUE(exists);
    EXPECT_EQ(loaded.generation, before_rename ? 42u : 99u);
  }
}

std::unique_ptr<pmem::Pool> OpenPool(const std::string& path) {
  pmem::PoolOptions o;
  o.path = path;
  o.size = 32 << 20;
  o.create_if_missing = true;
  o.comparator_name = "jigsaw.BytewiseComparator";
  std::unique_ptr<pmem::Pool> pool;
  EXPECT_TRUE(pmem::Pool::Open(o, &pool).ok());
  return pool;
}

TEST(PoolManifestStoreTest, ACommittedManifestReadsBackAfterReopeningAndANewOneReplacesIt) {
  test::ScratchDir dir;
  const std::string path = dir.path() + "/pool";
  {
    auto pool = OpenPool(path);
    ASSERT_NE(pool, nullptr);
    pmem::PoolSpace space(pool.get());
    PoolManifestStore store(pool.get(), &space);
    ManifestState state;
    bool exists = true;
    ASSERT_TRUE(store.Load(&state, &exists).ok());
    EXPECT_FALSE(exists);
    ASSERT_TRUE(store.Commit(SampleState(), {}, {}, false).ok());
    EXPECT_NE(store.pool_object(), 0u);
  }
  auto pool = OpenPool(path);
  ASSERT_NE(pool, nullptr);
  pmem::PoolSpace space(pool.get());
  PoolManifestStore store(pool.get(), &space);
  ManifestState loaded;
  bool exists = false;
  ASSERT_TRUE(store.Load(&loaded, &exists).ok());
  ASSERT_TRUE(exists);
  ExpectSameState(loaded, SampleState());
  const uint64_t first = store.pool_object();

  ManifestState next = SampleState();
  next.generation = 43;
  next.blocks.pop_back();
  ASSERT_TRUE(store.Commit(next, {}, {}, false).ok());
  EXPECT_NE(store.pool_object(), first);
  // The old record was freed in the same commit: one manifest object left.
  EXPECT_EQ(pool->Objects(pmem::ObjectType::kManifest).size(), 1u);
  ASSERT_TRUE(store.Load(&loaded, &exists).ok());
  ExpectSameState(loaded, next);
}

}  // namespace
}  // namespace jigsaw
