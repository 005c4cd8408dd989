// Human-readable forms of keys for DebugString output (not a format: do not
// parse). Non-printable bytes are escaped as \xNN.
//
// Thread safety: pure functions.
#pragma once

#include <string>

#include "accelkv/slice.h"

namespace accelkv {

// 'user_key' with non-printable bytes escaped.
std::string EscapeKey(const Slice& key);

// 'user_key'@sequence:type for a well-formed internal key ("put" or "del"),
// else "(bad internal key <escaped bytes>)".
std::string InternalKeyDebugString(const Slice& internal_key);

}  // namespace accelkv
