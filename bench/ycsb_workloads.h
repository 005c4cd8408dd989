// YCSB core workload definitions (workloads/workload{a..f} of YCSB 0.17):
//
//   workload  read  update  insert  scan  rmw   request distribution
//   a         0.50  0.50                        zipfian
//   b         0.95  0.05                        zipfian
//   c         1.00                              zipfian
//   d         0.95          0.05                latest
//   e                       0.05    0.95        zipfian (scan length uniform 1..max)
//   f         0.50                        0.50  zipfian
//   load      inserts --num records, in insert order
//
// A record is one key ("user" + fnvhash64(n)) whose value holds all
// fieldcount x fieldlength bytes; update and insert write the whole record
// (writeallfields), read reads it (readallfields), read-modify-write reads
// then writes it (one timed operation, as YCSB measures it). The zipfian
// chooser is ScrambledZipfian over records + expected inserts, redrawing
// keys not inserted yet, as CoreWorkload does.
//
// Thread safety: YcsbMix is plain data.
#pragma once

#include <string>

namespace accelkv_bench {

struct YcsbMix {
  enum class Distribution { kZipfian, kLatest, kUniform };
  double read = 0, update = 0, insert = 0, scan = 0, read_modify_write = 0;
  Distribution distribution = Distribution::kZipfian;
};

// False for names other than ycsb-a ... ycsb-f.
bool GetYcsbMix(const std::string& workload, YcsbMix* mix);

}  // namespace accelkv_bench
