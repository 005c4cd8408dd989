#include "values.h"

#include <algorithm>
#include <cstring>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "rng.h"

namespace accelkv_bench {

namespace {

void PutFixed32(char* dst, uint32_t v) {
  for (int i = 0; i < 4; i++) dst[i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

uint32_t GetFixed32(const char* src) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++)
    v |= static_cast<uint32_t>(static_cast<unsigned char>(src[i])) << (8 * i);
  return v;
}

}  // namespace

ValueFactory::ValueFactory(uint64_t seed) : seed_(seed) {
  Rng rng(seed ^ 0x76616c7565ull);
  buffer_.resize(kBufferSize);
  for (size_t i = 0; i < kBufferSize; i += 8) {
    const uint64_t r = rng.Next();
    std::memcpy(&buffer_[i], &r, 8);
  }
}

uint64_t ValueFactory::Hash(std::string_view key, uint32_t version, size_t size) const {
  // Two one-shot hashes, the key's seeding the tail's (cheaper than the
  // streaming state, whose inlined update GCC 12 flags with a false
  // -Warray-bounds at -O3).
  char tail[12];
  PutFixed32(tail, version);
  const uint64_t size64 = size;
  std::memcpy(tail + 4, &size64, 8);
  return XXH64(tail, sizeof(tail), XXH64(key.data(), key.size(), seed_));
}

void ValueFactory::Make(std::string_view key, uint32_t version, size_t size,
                        std::string* out) const {
  MakeFromHash(Hash(key, version, size), version, size, out);
}

void ValueFactory::MakeFromHash(uint64_t h, uint32_t version, size_t size, std::string* out) const {
  out->resize(size);
  char* p = out->data();
  PutFixed32(p, version);
  PutFixed32(p + 4, static_cast<uint32_t>(h));
  size_t offset = (h >> 32) % kBufferSize;
  size_t done = kMinValueSize;
  while (done < size) {
    const size_t n = std::min(size - done, kBufferSize - offset);
    std::memcpy(p + done, buffer_.data() + offset, n);
    done += n;
    offset = 0;
  }
}

void ValueFactory::Prefetch(uint64_t hash, size_t size) const {
  // At most the first 256 bytes: a longer copy streams, and the hardware
  // prefetcher follows it.
  constexpr size_t kMaxBytes = 256;
  const size_t body = std::min(size - std::min(size, kMinValueSize), kMaxBytes);
  if (body == 0) return;
  const size_t offset = (hash >> 32) % kBufferSize;
  const size_t first = offset & ~size_t{63};
  for (size_t at = first; at < offset + body; at += 64) {
    __builtin_prefetch(buffer_.data() + at % kBufferSize);
  }
}

bool ValueFactory::BodyMatches(uint64_t hash, std::string_view body) const {
  size_t offset = (hash >> 32) % kBufferSize;
  size_t done = 0;
  while (done < body.size()) {
    const size_t n = std::min(body.size() - done, kBufferSize - offset);
    if (std::memcmp(body.data() + done, buffer_.data() + offset, n) != 0) return false;
    done += n;
    offset = 0;
  }
  return true;
}

bool ValueFactory::Check(std::string_view key, std::string_view value, uint32_t* version,
                         std::string* why) const {
  if (value.size() < kMinValueSize) {
    *why = "value of " + std::to_string(value.size()) + " bytes is shorter than its header";
    return false;
  }
  const uint32_t v = GetFixed32(value.data());
  const uint64_t h = Hash(key, v, value.size());
  if (GetFixed32(value.data() + 4) != static_cast<uint32_t>(h)) {
    *why = "value header does not match the key (version " + std::to_string(v) + ", " +
           std::to_string(value.size()) + " bytes)";
    return false;
  }
  if (!BodyMatches(h, value.substr(kMinValueSize))) {
    *why = "value body differs from the one written (version " + std::to_string(v) + ")";
    return false;
  }
  *version = v;
  return true;
}

}  // namespace accelkv_bench
