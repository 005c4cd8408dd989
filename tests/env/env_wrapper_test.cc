// EnvWrapper: a subclass overrides what it changes and gets the target's
// behaviour for the rest, and the calls with options reach the target with
// their options (Env's own defaults for those calls drop them). The shared
// behaviour suite also runs through a wrapper (env_test.cc,
// "WrappedPosixDirect").
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "accelkv/env.h"

namespace accelkv {
namespace {

// Records the options of the calls that take them, then forwards.
class OptionsRecordingEnv final : public EnvWrapper {
 public:
  using EnvWrapper::EnvWrapper;

  Status NewRandomAccessFile(const std::string& fname, const RandomAccessFileOptions& options,
                             std::unique_ptr<RandomAccessFile>* result) override {
    ++random_with_options;
    random_options = options;
    return EnvWrapper::NewRandomAccessFile(fname, options, result);
  }
  Status NewWritableFile(const std::string& fname, const WritableFileOptions& options,
                         std::unique_ptr<WritableFile>* result) override {
    ++writable_with_options;
    writable_options = options;
    return EnvWrapper::NewWritableFile(fname, options, result);
  }

  int random_with_options = 0;
  int writable_with_options = 0;
  RandomAccessFileOptions random_options;
  WritableFileOptions writable_options;
};

// Counts removals and refuses those of one name; forwards everything else.
class RemoveCountingEnv final : public EnvWrapper {
 public:
  using EnvWrapper::EnvWrapper;

  Status RemoveFile(const std::string& fname) override {
    ++removals;
    if (fname == refused) return Status::IOError(fname, "refused by the test");
    return target()->RemoveFile(fname);
  }

  int removals = 0;
  std::string refused;
};

class EnvWrapperTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mem_ = NewMemEnv(Env::Default());
    ASSERT_TRUE(mem_->CreateDir("/w").ok());
  }

  std::unique_ptr<Env> mem_;
};

TEST_F(EnvWrapperTest, CallsWithOptionsReachTheTargetWithTheirOptions) {
  OptionsRecordingEnv recorder(mem_.get());
  EnvWrapper wrapper(&recorder);
  ASSERT_EQ(wrapper.target(), &recorder);

  WritableFileOptions wo;
  wo.use_direct_writes = true;
  wo.use_mmap_writes = true;
  wo.io_priority = IOPriority::kLow;
  std::unique_ptr<WritableFile> w;
  ASSERT_TRUE(wrapper.NewWritableFile("/w/f", wo, &w).ok());
  ASSERT_TRUE(w->Append("abc").ok());
  ASSERT_TRUE(w->Close().ok());
  EXPECT_EQ(recorder.writable_with_options, 1);
  EXPECT_TRUE(recorder.writable_options.use_direct_writes);
  EXPECT_TRUE(recorder.writable_options.use_mmap_writes);
  EXPECT_EQ(recorder.writable_options.io_priority, IOPriority::kLow);

  RandomAccessFileOptions ro;
  ro.use_mmap_reads = true;
  ro.use_direct_reads = true;
  ro.io_priority = IOPriority::kLow;
  std::unique_ptr<RandomAccessFile> r;
  ASSERT_TRUE(wrapper.NewRandomAccessFile("/w/f", ro, &r).ok());
  EXPECT_EQ(recorder.random_with_options, 1);
  EXPECT_TRUE(recorder.random_options.use_mmap_reads);
  EXPECT_TRUE(recorder.random_options.use_direct_reads);
  EXPECT_EQ(recorder.random_options.io_priority, IOPriority::kLow);
  char scratch[8];
  Slice got;
  ASSERT_TRUE(r->Read(0, 3, &got, scratch).ok());
  EXPECT_EQ(got.ToString(), "abc");

  // The calls without options stay calls without options.
  ASSERT_TRUE(wrapper.NewWritableFile("/w/g", &w).ok());
  ASSERT_TRUE(w->Close().ok());
  ASSERT_TRUE(wrapper.NewRandomAccessFile("/w/g", &r).ok());
  EXPECT_EQ(recorder.writable_with_options, 1);
  EXPECT_EQ(recorder.random_with_options, 1);
}

TEST_F(EnvWrapperTest, AnOverrideChangesOneCallAndTheRestReachTheTarget) {
  RemoveCountingEnv env(mem_.get());
  env.refused = "/w/keep";
  ASSERT_TRUE(WriteStringToFile(&env, "1", "/w/keep", /*sync=*/true).ok());
  ASSERT_TRUE(WriteStringToFile(&env, "22", "/w/gone", /*sync=*/false).ok());

  // The rest of the calls see the target's files.
  EXPECT_TRUE(mem_->FileExists("/w/keep"));
  EXPECT_TRUE(env.FileExists("/w/gone"));
  uint64_t size = 0;
  ASSERT_TRUE(env.GetFileSize("/w/gone", &size).ok());
  EXPECT_EQ(size, 2u);
  std::vector<std::string> children;
  ASSERT_TRUE(env.GetChildren("/w", &children).ok());
  EXPECT_EQ(children.size(), 2u);

  EXPECT_TRUE(env.RemoveFile("/w/keep").IsIOError());
  EXPECT_TRUE(env.RemoveFile("/w/gone").ok());
  EXPECT_EQ(env.removals, 2);
  EXPECT_TRUE(mem_->FileExists("/w/keep"));
  EXPECT_FALSE(mem_->FileExists("/w/gone"));

  ASSERT_TRUE(env.RenameFile("/w/keep", "/w/kept").ok());
  std::string data;
  ASSERT_TRUE(ReadFileToString(mem_.get(), "/w/kept", &data).ok());
  EXPECT_EQ(data, "1");

  std::unique_ptr<FileLock> lock;
  ASSERT_TRUE(env.LockFile("/w/LOCK", &lock).ok());
  std::unique_ptr<FileLock> other;
  EXPECT_TRUE(mem_->LockFile("/w/LOCK", &other).IsBusy());  // held, through the wrapper
  ASSERT_TRUE(env.UnlockFile(std::move(lock)).ok());
  EXPECT_TRUE(mem_->LockFile("/w/LOCK", &other).ok());  // released, through the wrapper
  ASSERT_TRUE(mem_->UnlockFile(std::move(other)).ok());
}

}  // namespace
}  // namespace accelkv
