// Key formats of the two key spaces a run uses.
//
//   db_bench keys (fillseq ... deleterandom): the key's index in decimal,
//     zero-padded to key_size bytes ("0000000000000042"), so byte order is
//     index order and a key parses back to its index.
//   missing keys (readmissing): index padded to key_size-1 digits plus '.';
//     never equal to a db_bench key.
//   YCSB keys (ycsb-*): "user" + decimal of YCSB's fnvhash64(index), as
//     YCSB's CoreWorkload.buildKeyName with orderedinserts=false and
//     zeropadding=1; their length varies (the --key-size knob does not apply).
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace accelkv_bench {

// Smallest key_size that holds every index below `count` plus the '.' of a
// missing key.
size_t MinDbBenchKeySize(uint64_t count);

// REQUIRES: key_size >= MinDbBenchKeySize(index + 1).
void DbBenchKey(uint64_t index, size_t key_size, std::string* out);
void MissingKey(uint64_t index, size_t key_size, std::string* out);
// True and *index set if key is a db_bench key of key_size bytes.
bool ParseDbBenchKey(std::string_view key, size_t key_size, uint64_t* index);

void YcsbKey(uint64_t index, std::string* out);

}  // namespace accelkv_bench
