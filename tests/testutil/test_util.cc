#include "testutil/test_util.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace accelkv {
namespace test {

TempDir::TempDir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = (tmp != nullptr && tmp[0] != '\0') ? tmp : "/tmp";
  std::string templ = base + "/accelkv-test-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr) {
    std::perror(("TempDir: mkdtemp " + templ).c_str());
    std::abort();
  }
  path_ = templ;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);  // best effort
}

uint64_t TestSeed() {
  uint64_t seed;
  const char* env = std::getenv("ACCELKV_SEED");
  if (env != nullptr && env[0] != '\0') {
    seed = std::strtoull(env, nullptr, 10);
  } else {
    seed = static_cast<uint64_t>(std::chrono::system_clock::now().time_since_epoch().count()) ^
           (static_cast<uint64_t>(::getpid()) << 32);
  }
  std::fprintf(stderr, "ACCELKV_SEED=%llu\n", static_cast<unsigned long long>(seed));
  return seed;
}

std::string RandomString(Random* rnd, size_t len) {
  std::string s(len, '\0');
  for (size_t i = 0; i < len; i++) s[i] = static_cast<char>(rnd->Next() & 0xff);
  return s;
}

}  // namespace test
}  // namespace accelkv
