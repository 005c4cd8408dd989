// ValueFactory: values derived from (key, seed, version, size), so that every
// read can be checked against the key it was read under.
//
// Layout of a value of n >= kMinValueSize bytes:
//   [0, 4)  version, little-endian uint32 (1 for the first write of a key,
//           +1 for every later write of it in this run)
//   [4, 8)  tag: low 32 bits of XXH64(key | version | n, seed)
//   [8, n)  n-8 bytes of a seeded random buffer, starting at an offset
//           derived from the same hash (incompressible, like db_bench's)
// A truncated, extended, foreign or stale-but-rewritten value fails Check.
//
// Thread safety: immutable after construction; Make and Check may run
// concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace accelkv_bench {

inline constexpr size_t kMinValueSize = 8;

class ValueFactory {
 public:
  explicit ValueFactory(uint64_t seed);

  // REQUIRES: size >= kMinValueSize.
  void Make(std::string_view key, uint32_t version, size_t size, std::string* out) const;

  // The hash that places and tags the value of (key, version, size). A
  // workload that knows its next put one op ahead computes it once, for
  // Prefetch and then MakeFromHash.
  uint64_t Hash(std::string_view key, uint32_t version, size_t size) const;
  // Make, given hash = Hash(key, version, size). REQUIRES: as Make.
  void MakeFromHash(uint64_t hash, uint32_t version, size_t size, std::string* out) const;

  // Starts loading the random-buffer lines that the value of hash (of that
  // size) copies first (the body starts at a hashed offset, so each value's
  // copy would otherwise wait for cache misses in the 1 MiB buffer).
  void Prefetch(uint64_t hash, size_t size) const;

  // True and *version set when value is exactly what Make produced for key
  // at some version; otherwise false and *why says what is wrong.
  bool Check(std::string_view key, std::string_view value, uint32_t* version,
             std::string* why) const;

 private:
  bool BodyMatches(uint64_t hash, std::string_view body) const;

  static constexpr size_t kBufferSize = 1 << 20;
  uint64_t seed_;
  std::string buffer_;
};

}  // namespace accelkv_bench
