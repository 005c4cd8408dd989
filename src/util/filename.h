// Names of the files in a database directory (docs/FORMAT.md, "Files"):
//   NNNNNN.log   WAL           NNNNNN.sst   table
//   MANIFEST-NNNNNN            CURRENT      names the live MANIFEST
//   LOCK         NNNNNN.dbtmp  temporary    LOG   info log
#pragma once

#include <cstdint>
#include <string>

#include "accelkv/env.h"
#include "accelkv/slice.h"
#include "accelkv/status.h"

namespace accelkv {

enum class FileType {
  kLogFile,
  kLockFile,
  kTableFile,
  kDescriptorFile,
  kCurrentFile,
  kTempFile,
  kInfoLogFile
};

std::string LogFileName(const std::string& dbname, uint64_t number);
std::string TableFileName(const std::string& dbname, uint64_t number);
std::string DescriptorFileName(const std::string& dbname, uint64_t number);
std::string CurrentFileName(const std::string& dbname);
std::string LockFileName(const std::string& dbname);
std::string TempFileName(const std::string& dbname, uint64_t number);
std::string InfoLogFileName(const std::string& dbname);
std::string OldInfoLogFileName(const std::string& dbname);  // LOG.old

// Parses a file name (not a path). False if it is not one of ours.
bool ParseFileName(const std::string& filename, uint64_t* number, FileType* type);

}  // namespace accelkv
