// Test helpers for tests/table: in-memory files, a small in-memory Env that
// counts open random-access files, and internal-key shorthands. Randomized
// tests take their seed from test::TestSeed() (testutil/test_util.h).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "accelkv/env.h"
#include "testutil/test_util.h"
#include "util/internal_key.h"

namespace accelkv::test {

// A WritableFile appending to a string.
class StringSink final : public WritableFile {
 public:
  Status Append(const Slice& data) override {
    contents_.append(data.data(), data.size());
    return Status::OK();
  }
  Status Flush() override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }
  Status Close() override { return Status::OK(); }
  const std::string& contents() const { return contents_; }

 private:
  std::string contents_;
};

// A RandomAccessFile over a copy of a string; counts reads.
class StringSource final : public RandomAccessFile {
 public:
  explicit StringSource(std::string contents, std::atomic<int>* live = nullptr);
  ~StringSource() override;
  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override;
  int reads() const { return reads_.load(); }

 private:
  const std::string contents_;
  std::atomic<int>* const live_;
  mutable std::atomic<int> reads_{0};
};

// In-memory Env for the table cache tests: flat file names, writable and
// random-access files; directory calls succeed trivially, locks and
// sequential files are NotSupported.
class MemTestEnv final : public Env {
 public:
  Status NewSequentialFile(const std::string& fname,
                           std::unique_ptr<SequentialFile>* result) override;
  Status NewRandomAccessFile(const std::string& fname,
                             std::unique_ptr<RandomAccessFile>* result) override;
  Status NewWritableFile(const std::string& fname, std::unique_ptr<WritableFile>* result) override;
  Status NewAppendableFile(const std::string& fname,
                           std::unique_ptr<WritableFile>* result) override;
  bool FileExists(const std::string& fname) override;
  Status GetChildren(const std::string& dir, std::vector<std::string>* result) override;
  Status RemoveFile(const std::string& fname) override;
  Status CreateDir(const std::string& dirname) override;
  Status RemoveDir(const std::string& dirname) override;
  Status GetFileSize(const std::string& fname, uint64_t* file_size) override;
  Status RenameFile(const std::string& src, const std::string& target) override;
  Status SyncDir(const std::string& dirname) override;
  Status LockFile(const std::string& fname, std::unique_ptr<FileLock>* lock) override;
  Status UnlockFile(std::unique_ptr<FileLock> lock) override;
  uint64_t NowMicros() override;
  void SleepForMicroseconds(int micros) override;

  void PutFile(const std::string& fname, std::string contents);
  // Appends to fname (used by the writable files).
  void AppendToFile(const std::string& fname, const Slice& data);
  int live_random_access_files() const { return live_.load(); }
  int random_access_opens() const { return opens_.load(); }

 private:
  std::mutex mu_;
  std::map<std::string, std::string> files_;
  std::atomic<int> live_{0};
  std::atomic<int> opens_{0};
};

inline std::string IKey(const std::string& user_key, SequenceNumber seq,
                        ValueType type = ValueType::kValue) {
  return InternalKey(user_key, seq, type).Encode().ToString();
}

}  // namespace accelkv::test
