#include "util/filename.h"

#include <cstdio>

namespace accelkv {
namespace {

std::string MakeFileName(const std::string& dbname, uint64_t number, const char* suffix) {
  char buf[100];
  std::snprintf(buf, sizeof(buf), "/%06llu.%s", static_cast<unsigned long long>(number), suffix);
  return dbname + buf;
}

// Parses a decimal number that fills all of s. False on overflow or junk.
bool ParseNumber(const std::string& s, uint64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

}  // namespace

std::string LogFileName(const std::string& dbname, uint64_t number) {
  return MakeFileName(dbname, number, "log");
}
std::string TableFileName(const std::string& dbname, uint64_t number) {
  return MakeFileName(dbname, number, "sst");
}
std::string DescriptorFileName(const std::string& dbname, uint64_t number) {
  char buf[100];
  std::snprintf(buf, sizeof(buf), "/MANIFEST-%06llu", static_cast<unsigned long long>(number));
  return dbname + buf;
}
std::string CurrentFileName(const std::string& dbname) { return dbname + "/CURRENT"; }
std::string LockFileName(const std::string& dbname) { return dbname + "/LOCK"; }
std::string TempFileName(const std::string& dbname, uint64_t number) {
  return MakeFileName(dbname, number, "dbtmp");
}
std::string InfoLogFileName(const std::string& dbname) { return dbname + "/LOG"; }

std::string OldInfoLogFileName(const std::string& dbname) { return dbname + "/LOG.old"; }

bool ParseFileName(const std::string& filename, uint64_t* number, FileType* type) {
  if (filename == "CURRENT") {
    *number = 0;
    *type = FileType::kCurrentFile;
    return true;
  }
  if (filename == "LOCK") {
    *number = 0;
    *type = FileType::kLockFile;
    return true;
  }
  if (filename == "LOG" || filename == "LOG.old") {
    *number = 0;
    *type = FileType::kInfoLogFile;
    return true;
  }
  const std::string manifest = "MANIFEST-";
  if (filename.rfind(manifest, 0) == 0) {
    if (!ParseNumber(filename.substr(manifest.size()), number)) return false;
    *type = FileType::kDescriptorFile;
    return true;
  }
  size_t dot = filename.find('.');
  if (dot == std::string::npos) return false;
  if (!ParseNumber(filename.substr(0, dot), number)) return false;
  std::string suffix = filename.substr(dot + 1);
  if (suffix == "log") {
    *type = FileType::kLogFile;
  } else if (suffix == "sst") {
    *type = FileType::kTableFile;
  } else if (suffix == "dbtmp") {
    *type = FileType::kTempFile;
  } else {
    return false;
  }
  return true;
}

}  // namespace accelkv
