// Corruption: damaged table files, WAL, MANIFEST and CURRENT (flipped or
// truncated bytes, missing files). The database must answer with a clear
// non-OK Status (Corruption or IOError; NotFound only where a named file is
// gone) or, for a torn WAL tail, recover exactly the records before the
// tear; it must never return a wrong value or crash (ASan runs this).
// POSIX Env, TempDir.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "accelkv/db.h"
#include "accelkv/env.h"
#include "db/db_test_util.h"
#include "testutil/test_util.h"
#include "util/random.h"

namespace accelkv {
namespace {

using Model = std::map<std::string, std::string>;
using test::S;

bool IsClearError(const Status& s) { return s.IsCorruption() || s.IsIOError(); }

class DBCorruptionTest : public ::testing::Test {
 protected:
  DBCorruptionTest() {
    options_.create_if_missing = true;
    options_.write_buffer_size = 64 << 10;
  }

  Env* env() { return Env::Default(); }

  // A database under `dir` holding model_, all in tables (compacted), with
  // an empty WAL.
  void BuildTableDB(const std::string& dir) {
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options_, dir, &db).ok());
    Random rnd(301);
    for (int i = 0; i < 3000; i++) {
      const std::string key = test::KeyOf(i);
      const std::string value = "value" + std::to_string(i) + test::RandomString(&rnd, 90);
      ASSERT_TRUE(db->Put(WriteOptions(), key, value).ok());
      model_[key] = value;
    }
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    ASSERT_TRUE(db->Close().ok());
    db.reset();
    ASSERT_FALSE(test::FilesWithSuffix(env(), dir, ".sst").empty());
  }

  // A fresh copy of pristine_ to damage.
  std::string Copy() {
    const std::string dir = tmp_.File("work" + std::to_string(copies_++));
    std::filesystem::copy(pristine_, dir, std::filesystem::copy_options::recursive);
    return dir;
  }

  // Opens dir and reads every key of model_ (Get, MultiGet and a scan).
  // A wrong value, a key that should not exist, or a lost key without any
  // error is a failure. Returns whether some clear error was reported.
  bool CheckNoSilentDamage(const std::string& dir, const Model& model) {
    Options options = options_;
    options.create_if_missing = false;
    std::unique_ptr<DB> db;
    Status s = DB::Open(options, dir, &db);
    if (!s.ok()) {
      EXPECT_TRUE(IsClearError(s)) << "Open: " << S(s);
      return true;
    }
    bool error = false;
    bool missing = false;
    for (const auto& [key, value] : model) {
      std::string got;
      s = db->Get(ReadOptions(), key, &got);
      if (s.ok()) {
        EXPECT_EQ(value, got) << "wrong value for " << key;
      } else if (s.IsNotFound()) {
        missing = true;
      } else {
        EXPECT_TRUE(IsClearError(s)) << key << ": " << S(s);
        error = true;
      }
    }
    std::vector<std::string> key_strings;
    for (const auto& kv : model) key_strings.push_back(kv.first);
    std::vector<Slice> keys(key_strings.begin(), key_strings.end());
    std::vector<std::string> values;
    std::vector<Status> st = db->MultiGet(ReadOptions(), keys, &values);
    for (size_t i = 0; i < keys.size(); i++) {
      if (st[i].ok()) {
        EXPECT_EQ(model.at(key_strings[i]), values[i]) << "MultiGet: wrong value";
      } else if (!st[i].IsNotFound()) {
        EXPECT_TRUE(IsClearError(st[i])) << S(st[i]);
        error = true;
      }
    }
    std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
    size_t seen = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      auto m = model.find(it->key().ToString());
      if (m == model.end()) {
        ADD_FAILURE() << "scan returned a key never written: "
                      << it->key().ToString().substr(0, 20);
        break;
      }
      EXPECT_EQ(m->second, it->value().ToString()) << "scan: wrong value";
      seen++;
    }
    if (!it->status().ok()) {
      EXPECT_TRUE(IsClearError(it->status())) << S(it->status());
      error = true;
    } else if (seen != model.size()) {
      missing = true;
    }
    EXPECT_TRUE(error || !missing) << "keys lost without any error";
    return error;
  }

  test::TempDir tmp_;
  Options options_;
  Model model_;
  std::string pristine_;
  int copies_ = 0;
};

void FlipByte(const std::string& path, uint64_t offset) {
  std::string data;
  ASSERT_TRUE(ReadFileToString(Env::Default(), path, &data).ok());
  ASSERT_LT(offset, data.size());
  data[offset] = static_cast<char>(data[offset] ^ 0x5a);
  ASSERT_TRUE(WriteStringToFile(Env::Default(), data, path, true).ok());
}

void Truncate(const std::string& path, uint64_t size) { std::filesystem::resize_file(path, size); }

uint64_t FileSize(const std::string& path) { return std::filesystem::file_size(path); }

TEST_F(DBCorruptionTest, FlippedTableBytes) {
  pristine_ = tmp_.File("pristine");
  ASSERT_NO_FATAL_FAILURE(BuildTableDB(pristine_));
  const std::vector<std::string> tables = test::FilesWithSuffix(env(), pristine_, ".sst");
  Random rnd(test::TestSeed());
  for (const std::string& table : tables) {
    const uint64_t size = FileSize(pristine_ + "/" + table);
    // Offsets spread over the file: data blocks (the first half, which must
    // report an error), then filter/properties/index/footer, where a
    // harmless flip is allowed but a wrong answer is not.
    std::vector<uint64_t> offsets = {0, size / 4, size / 2 - 1, size - 1, size - 30, size - 64};
    for (int i = 0; i < 6; i++) offsets.push_back(rnd.Uniform(size));
    for (uint64_t off : offsets) {
      SCOPED_TRACE(table + " offset " + std::to_string(off) + " of " + std::to_string(size));
      const std::string dir = Copy();
      ASSERT_NO_FATAL_FAILURE(FlipByte(dir + "/" + table, off));
      const bool error = CheckNoSilentDamage(dir, model_);
      if (off < size / 2) {
        EXPECT_TRUE(error) << "a flipped data byte went unnoticed";
      }
    }
  }
}

TEST_F(DBCorruptionTest, TruncatedTable) {
  pristine_ = tmp_.File("pristine");
  ASSERT_NO_FATAL_FAILURE(BuildTableDB(pristine_));
  const std::string table = test::FilesWithSuffix(env(), pristine_, ".sst").front();
  const uint64_t size = FileSize(pristine_ + "/" + table);
  for (uint64_t new_size : {uint64_t{0}, uint64_t{10}, uint64_t{63}, size / 2, size - 1}) {
    SCOPED_TRACE(table + " truncated to " + std::to_string(new_size));
    const std::string dir = Copy();
    Truncate(dir + "/" + table, new_size);
    EXPECT_TRUE(CheckNoSilentDamage(dir, model_)) << "a truncated table went unnoticed";
  }
}

TEST_F(DBCorruptionTest, MissingTableFile) {
  pristine_ = tmp_.File("pristine");
  ASSERT_NO_FATAL_FAILURE(BuildTableDB(pristine_));
  const std::string dir = Copy();
  const std::string table = test::FilesWithSuffix(env(), dir, ".sst").front();
  ASSERT_TRUE(env()->RemoveFile(dir + "/" + table).ok());
  Options options = options_;
  options.create_if_missing = false;
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, dir, &db);
  EXPECT_TRUE(s.IsCorruption()) << S(s);
}

// Byte ranges of the payloads of the physical records of a log file
// (docs/FORMAT.md, "WAL"; the MANIFEST uses the same format).
std::vector<std::pair<uint64_t, uint64_t>> LogPayloads(const std::string& data) {
  constexpr uint64_t kBlock = 32768, kHeader = 7;
  std::vector<std::pair<uint64_t, uint64_t>> out;
  uint64_t off = 0;
  while (off + kHeader <= data.size()) {
    const uint64_t left = kBlock - off % kBlock;
    if (left < kHeader) {
      off += left;
      continue;
    }
    const uint64_t len = static_cast<uint8_t>(data[off + 4]) |
                         (static_cast<uint64_t>(static_cast<uint8_t>(data[off + 5])) << 8);
    if (len == 0 && data[off + 6] == 0) break;  // zero padding
    if (off + kHeader + len > data.size()) break;
    out.emplace_back(off + kHeader, off + kHeader + len);
    off += kHeader + len;
  }
  return out;
}

TEST_F(DBCorruptionTest, CorruptManifestFailsOpen) {
  pristine_ = tmp_.File("pristine");
  ASSERT_NO_FATAL_FAILURE(BuildTableDB(pristine_));
  const std::vector<std::string> manifests = test::FilesWithPrefix(env(), pristine_, "MANIFEST-");
  ASSERT_EQ(1u, manifests.size());
  std::string data;
  ASSERT_TRUE(ReadFileToString(env(), pristine_ + "/" + manifests[0], &data).ok());
  const auto payloads = LogPayloads(data);
  ASSERT_FALSE(payloads.empty());
  Options options = options_;
  options.create_if_missing = false;
  Random rnd(test::TestSeed());
  // A flipped byte in any record's payload or checksum: the checksum no
  // longer matches, and the database must not open on a partial history.
  for (const auto& [begin, end] : payloads) {
    std::vector<uint64_t> offsets = {begin - 7};  // the crc
    if (end > begin) offsets.push_back(begin + rnd.Uniform(end - begin));
    for (uint64_t off : offsets) {
      SCOPED_TRACE("MANIFEST byte " + std::to_string(off) + " of " + std::to_string(data.size()));
      const std::string dir = Copy();
      ASSERT_NO_FATAL_FAILURE(FlipByte(dir + "/" + manifests[0], off));
      std::unique_ptr<DB> db;
      Status s = DB::Open(options, dir, &db);
      EXPECT_TRUE(s.IsCorruption()) << S(s);
    }
  }
  // Truncation: a clear error (the tables the lost edits named are still
  // there, so an older state would lose data silently); never wrong data.
  for (uint64_t new_size : {uint64_t{0}, uint64_t{5}, data.size() / 2}) {
    SCOPED_TRACE("MANIFEST truncated to " + std::to_string(new_size));
    const std::string dir = Copy();
    Truncate(dir + "/" + manifests[0], new_size);
    EXPECT_TRUE(CheckNoSilentDamage(dir, model_)) << "a truncated MANIFEST went unnoticed";
  }
}

TEST_F(DBCorruptionTest, BadCurrentFile) {
  pristine_ = tmp_.File("pristine");
  ASSERT_NO_FATAL_FAILURE(BuildTableDB(pristine_));
  Options options = options_;
  options.create_if_missing = false;
  const std::vector<std::string> contents = {"",   "MANIFEST-999999\n",   "garbage", "MANIFEST-\n",
                                             "\n", std::string(1000, 'M')};
  for (const std::string& c : contents) {
    SCOPED_TRACE("CURRENT = '" + c.substr(0, 20) + "'");
    const std::string dir = Copy();
    ASSERT_TRUE(WriteStringToFile(env(), c, dir + "/CURRENT", true).ok());
    std::unique_ptr<DB> db;
    Status s = DB::Open(options, dir, &db);
    EXPECT_TRUE(IsClearError(s) || s.IsNotFound()) << S(s);
    EXPECT_EQ(nullptr, db.get());
  }
  // CURRENT gone: the database looks missing, and must not be silently
  // recreated without create_if_missing.
  const std::string dir = Copy();
  ASSERT_TRUE(env()->RemoveFile(dir + "/CURRENT").ok());
  std::unique_ptr<DB> db;
  EXPECT_FALSE(DB::Open(options, dir, &db).ok());
}

// WAL with one synced record per Put (distinct keys); the file size after
// each acknowledged Put marks that record's end.
class DBWalCorruptionTest : public DBCorruptionTest {
 protected:
  void BuildWalDB(int n) {
    // Record ends come from the live file's size, which a memory-mapped WAL
    // rounds up to its window: write the WAL with write(2). (The mapped
    // WAL's zero tail is tested in MmapWalTailIsTheLogsEnd and by the crash
    // tests.)
    options_.allow_mmap_writes = false;
    pristine_ = tmp_.File("pristine");
    std::unique_ptr<DB> db;
    ASSERT_TRUE(DB::Open(options_, pristine_, &db).ok());
    const std::vector<std::string> logs = test::FilesWithSuffix(env(), pristine_, ".log");
    ASSERT_EQ(1u, logs.size());
    log_name_ = logs[0];
    WriteOptions wo;
    wo.sync = true;
    Random rnd(17);
    for (int i = 0; i < n; i++) {
      const std::string key = test::KeyOf(i);
      const std::string value =
          "v" + std::to_string(i) + test::RandomString(&rnd, rnd.Uniform(200));
      ASSERT_TRUE(db->Put(wo, key, value).ok());
      entries_.emplace_back(key, value);
      ends_.push_back(FileSize(pristine_ + "/" + log_name_));
    }
    ASSERT_TRUE(db->Close().ok());  // writes no table: the data is in the WAL only
    ASSERT_EQ(ends_.back(), FileSize(pristine_ + "/" + log_name_));
  }

  // The database of dir must hold exactly the first `count` entries.
  void ExpectPrefix(const std::string& dir, size_t count, const Options& options) {
    std::unique_ptr<DB> db;
    Status s = DB::Open(options, dir, &db);
    ASSERT_TRUE(s.ok()) << S(s);
    Model got;
    ASSERT_TRUE(test::ReadAll(db.get(), ReadOptions(), &got).ok());
    Model want(entries_.begin(), entries_.begin() + static_cast<long>(count));
    EXPECT_EQ(want.size(), got.size());
    EXPECT_TRUE(want == got) << "recovered state is not the first " << count << " writes";
    // And the recovered database takes writes and survives another reopen.
    ASSERT_TRUE(db->Put(WriteOptions(), "after", "x").ok());
    ASSERT_TRUE(db->Close().ok());
    db.reset();
    ASSERT_TRUE(DB::Open(options, dir, &db).ok());
    std::string v;
    EXPECT_TRUE(db->Get(ReadOptions(), "after", &v).ok());
    ASSERT_TRUE(test::ReadAll(db.get(), ReadOptions(), &got).ok());
    EXPECT_EQ(want.size() + 1, got.size());
  }

  std::string log_name_;
  std::vector<std::pair<std::string, std::string>> entries_;
  std::vector<uint64_t> ends_;
};

TEST_F(DBWalCorruptionTest, TornTailKeepsAcknowledgedPrefix) {
  ASSERT_NO_FATAL_FAILURE(BuildWalDB(100));
  Options options = options_;
  options.create_if_missing = false;
  Random rnd(test::TestSeed());
  std::vector<uint64_t> cuts = {
      0, 1, 6, 7, ends_[0], ends_[0] + 3, ends_.back() - 1, ends_.back() - 7, ends_.back() - 8};
  for (int i = 0; i < 12; i++) cuts.push_back(rnd.Uniform(ends_.back() + 1));
  for (uint64_t cut : cuts) {
    SCOPED_TRACE("WAL cut at " + std::to_string(cut) + " of " + std::to_string(ends_.back()));
    const std::string dir = Copy();
    Truncate(dir + "/" + log_name_, cut);
    const size_t survivors =
        static_cast<size_t>(std::upper_bound(ends_.begin(), ends_.end(), cut) - ends_.begin());
    ASSERT_NO_FATAL_FAILURE(ExpectPrefix(dir, survivors, options));
    // Paranoid checks tolerate a torn tail too.
    const std::string dir2 = Copy();
    Truncate(dir2 + "/" + log_name_, cut);
    Options paranoid = options;
    paranoid.paranoid_checks = true;
    ASSERT_NO_FATAL_FAILURE(ExpectPrefix(dir2, survivors, paranoid));
  }
}

// A memory-mapped WAL copied while its DB is open (as a crash leaves it):
// the file runs on in zeros past the last record, over several 32 KiB
// blocks; recovery reads them as the log's end, paranoid or not.
TEST_F(DBWalCorruptionTest, MmapWalTailIsTheLogsEnd) {
  Options options = options_;
  options.allow_mmap_writes = true;
  options.paranoid_checks = true;
  options.write_buffer_size =
      8 << 20;  // no flush: nothing changes the directory while it is copied
  pristine_ = tmp_.File("pristine");
  std::unique_ptr<DB> db;
  ASSERT_TRUE(DB::Open(options, pristine_, &db).ok());
  const std::vector<std::string> logs = test::FilesWithSuffix(env(), pristine_, ".log");
  ASSERT_EQ(1u, logs.size());
  Random rnd(test::TestSeed());
  // About 100 KB of records: into the WAL's second window (64 KiB, then
  // 128 KiB), which leaves over 64 KiB of zeros.
  for (int i = 0; i < 600; i++) {
    const std::string value = test::RandomString(&rnd, rnd.Uniform(300));
    ASSERT_TRUE(db->Put(WriteOptions(), test::KeyOf(i), value).ok());
    entries_.emplace_back(test::KeyOf(i), value);
  }
  const std::string dir = Copy();  // the DB still open: the WAL's window is mapped
  // 64 + 128 KiB mapped, and the third window (256 KiB) allocated too once
  // the helper that maps it ahead has run.
  const uint64_t wal_size = FileSize(dir + "/" + logs[0]);
  ASSERT_TRUE(wal_size == 3 * 65536u || wal_size == 7 * 65536u)
      << wal_size << ": not in the second window";
  ASSERT_TRUE(db->Close().ok());
  db.reset();
  options.create_if_missing = false;
  ASSERT_NO_FATAL_FAILURE(ExpectPrefix(dir, entries_.size(), options));
}

TEST_F(DBWalCorruptionTest, FlippedRecordIsDroppedOrFailsWhenParanoid) {
  ASSERT_NO_FATAL_FAILURE(BuildWalDB(60));
  ASSERT_LT(ends_.back(), 32768u) << "the test assumes a one-block WAL";
  Options options = options_;
  options.create_if_missing = false;
  Random rnd(test::TestSeed());
  for (int round = 0; round < 10; round++) {
    const size_t victim = round == 0 ? ends_.size() - 1 : rnd.Uniform(ends_.size());
    const uint64_t begin = victim == 0 ? 0 : ends_[victim - 1];
    const uint64_t off = begin + rnd.Uniform(ends_[victim] - begin);
    SCOPED_TRACE("record " + std::to_string(victim) + " byte " + std::to_string(off));
    // Not paranoid: the damaged record and the rest of its block (here: the
    // rest of the log) are dropped; what came before is intact. A flipped
    // length byte may instead read as a torn tail, with the same result.
    const std::string dir = Copy();
    ASSERT_NO_FATAL_FAILURE(FlipByte(dir + "/" + log_name_, off));
    ASSERT_NO_FATAL_FAILURE(ExpectPrefix(dir, victim, options));
    // Paranoid: Open fails, unless the flip made it look like a torn tail.
    const std::string dir2 = Copy();
    ASSERT_NO_FATAL_FAILURE(FlipByte(dir2 + "/" + log_name_, off));
    Options paranoid = options;
    paranoid.paranoid_checks = true;
    std::unique_ptr<DB> db;
    Status s = DB::Open(paranoid, dir2, &db);
    const bool length_byte = off == begin + 4 || off == begin + 5;
    if (!length_byte) {
      EXPECT_TRUE(s.IsCorruption()) << S(s);
    }
    if (!s.ok()) {
      EXPECT_TRUE(IsClearError(s)) << S(s);
    }
  }
}

}  // namespace
}  // namespace accelkv
