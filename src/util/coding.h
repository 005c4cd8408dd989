// Little-endian fixed-width and varint encodings used by every on-disk format
// (docs/FORMAT.md). Decoders never read past the limit they are given.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "accelkv/slice.h"

namespace accelkv {

inline void EncodeFixed32(char* dst, uint32_t value) { std::memcpy(dst, &value, 4); }  // x86/LE
inline void EncodeFixed64(char* dst, uint64_t value) { std::memcpy(dst, &value, 8); }
inline uint32_t DecodeFixed32(const char* ptr) {
  uint32_t v;
  std::memcpy(&v, ptr, 4);
  return v;
}
inline uint64_t DecodeFixed64(const char* ptr) {
  uint64_t v;
  std::memcpy(&v, ptr, 8);
  return v;
}
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "AccelKV formats assume little endian");

void PutFixed32(std::string* dst, uint32_t value);
void PutFixed64(std::string* dst, uint64_t value);
void PutVarint32(std::string* dst, uint32_t value);
void PutVarint64(std::string* dst, uint64_t value);
// varint32 length, then the bytes.
void PutLengthPrefixedSlice(std::string* dst, const Slice& value);

// Each Get* consumes from *input and returns false (input unspecified) if the
// bytes are malformed or truncated.
bool GetFixed32(Slice* input, uint32_t* value);
bool GetFixed64(Slice* input, uint64_t* value);
bool GetVarint32(Slice* input, uint32_t* value);
bool GetVarint64(Slice* input, uint64_t* value);
bool GetLengthPrefixedSlice(Slice* input, Slice* result);

// Pointer-based decoders: return the byte after the value, or nullptr when
// the value is malformed or runs past limit.
const char* GetVarint32Ptr(const char* p, const char* limit, uint32_t* value);
const char* GetVarint64Ptr(const char* p, const char* limit, uint64_t* value);

int VarintLength(uint64_t v);
char* EncodeVarint32(char* dst, uint32_t value);
char* EncodeVarint64(char* dst, uint64_t value);

}  // namespace accelkv
