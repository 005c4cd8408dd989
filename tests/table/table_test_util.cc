#include "table/table_test_util.h"

#include <chrono>
#include <cstring>
#include <thread>

namespace accelkv::test {

StringSource::StringSource(std::string contents, std::atomic<int>* live)
    : contents_(std::move(contents)), live_(live) {
  if (live_ != nullptr) live_->fetch_add(1);
}

StringSource::~StringSource() {
  if (live_ != nullptr) live_->fetch_sub(1);
}

Status StringSource::Read(uint64_t offset, size_t n, Slice* result, char* scratch) const {
  reads_.fetch_add(1);
  if (offset > contents_.size()) return Status::IOError("read past end of file");
  const size_t avail = contents_.size() - static_cast<size_t>(offset);
  if (n > avail) n = avail;
  std::memcpy(scratch, contents_.data() + offset, n);
  *result = Slice(scratch, n);
  return Status::OK();
}

Status MemTestEnv::NewSequentialFile(const std::string& fname,
                                     std::unique_ptr<SequentialFile>* /*result*/) {
  return Status::NotSupported("MemTestEnv sequential files", fname);
}

Status MemTestEnv::NewRandomAccessFile(const std::string& fname,
                                       std::unique_ptr<RandomAccessFile>* result) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = files_.find(fname);
  if (it == files_.end()) return Status::NotFound(fname);
  opens_.fetch_add(1);
  *result = std::make_unique<StringSource>(it->second, &live_);
  return Status::OK();
}

namespace {

class MemTestWritableFile final : public WritableFile {
 public:
  MemTestWritableFile(MemTestEnv* env, std::string fname) : env_(env), fname_(std::move(fname)) {}
  Status Append(const Slice& data) override {
    env_->AppendToFile(fname_, data);
    return Status::OK();
  }
  Status Flush() override { return Status::OK(); }
  Status Sync() override { return Status::OK(); }
  Status Close() override { return Status::OK(); }

 private:
  MemTestEnv* const env_;
  const std::string fname_;
};

}  // namespace

Status MemTestEnv::NewWritableFile(const std::string& fname,
                                   std::unique_ptr<WritableFile>* result) {
  PutFile(fname, std::string());
  *result = std::make_unique<MemTestWritableFile>(this, fname);
  return Status::OK();
}

Status MemTestEnv::NewAppendableFile(const std::string& fname,
                                     std::unique_ptr<WritableFile>* /*result*/) {
  return Status::NotSupported("MemTestEnv appendable files", fname);
}

bool MemTestEnv::FileExists(const std::string& fname) {
  std::lock_guard<std::mutex> l(mu_);
  return files_.count(fname) != 0;
}

Status MemTestEnv::GetChildren(const std::string& dir, std::vector<std::string>* result) {
  std::lock_guard<std::mutex> l(mu_);
  result->clear();
  const std::string prefix = dir + "/";
  for (const auto& [name, data] : files_) {
    if (name.compare(0, prefix.size(), prefix) == 0) result->push_back(name.substr(prefix.size()));
  }
  return Status::OK();
}

Status MemTestEnv::RemoveFile(const std::string& fname) {
  std::lock_guard<std::mutex> l(mu_);
  return files_.erase(fname) == 1 ? Status::OK() : Status::NotFound(fname);
}

Status MemTestEnv::CreateDir(const std::string& /*dirname*/) { return Status::OK(); }
Status MemTestEnv::RemoveDir(const std::string& /*dirname*/) { return Status::OK(); }

Status MemTestEnv::GetFileSize(const std::string& fname, uint64_t* file_size) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = files_.find(fname);
  if (it == files_.end()) return Status::NotFound(fname);
  *file_size = it->second.size();
  return Status::OK();
}

Status MemTestEnv::RenameFile(const std::string& src, const std::string& target) {
  std::lock_guard<std::mutex> l(mu_);
  auto it = files_.find(src);
  if (it == files_.end()) return Status::NotFound(src);
  files_[target] = std::move(it->second);
  files_.erase(src);
  return Status::OK();
}

Status MemTestEnv::SyncDir(const std::string& /*dirname*/) { return Status::OK(); }

Status MemTestEnv::LockFile(const std::string& fname, std::unique_ptr<FileLock>* /*lock*/) {
  return Status::NotSupported("MemTestEnv locks", fname);
}

Status MemTestEnv::UnlockFile(std::unique_ptr<FileLock> /*lock*/) { return Status::OK(); }

uint64_t MemTestEnv::NowMicros() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

void MemTestEnv::SleepForMicroseconds(int micros) {
  std::this_thread::sleep_for(std::chrono::microseconds(micros));
}

void MemTestEnv::AppendToFile(const std::string& fname, const Slice& data) {
  std::lock_guard<std::mutex> l(mu_);
  files_[fname].append(data.data(), data.size());
}

void MemTestEnv::PutFile(const std::string& fname, std::string contents) {
  std::lock_guard<std::mutex> l(mu_);
  files_[fname] = std::move(contents);
}

}  // namespace accelkv::test
