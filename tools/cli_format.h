// Text forms of keys and values for the accelkv tool.
//
// Escaped form: printable ASCII (0x20..0x7e) except '\' as is, every other
// byte as \xNN (lowercase hex), so the output is unambiguous and one line.
// Hex form: every byte as two lowercase hex digits.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>

#include "accelkv/slice.h"

namespace accelkv::cli {

std::string EscapeBytes(const Slice& bytes);
std::string HexBytes(const Slice& bytes);
// Decodes hex text (either case, even length). False on anything else.
bool DecodeHex(const Slice& hex, std::string* bytes);

// The escaped (or hex) form of the first `max_bytes` bytes, followed by
// "...(N bytes)" when the input is longer.
std::string TruncatedForm(const Slice& bytes, size_t max_bytes, bool hex);

// "12.345" (seconds with millisecond precision) and similar fixed-point text.
std::string FormatDouble(double value, int decimals);

}  // namespace accelkv::cli
