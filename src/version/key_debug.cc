#include "version/key_debug.h"

#include <cstdio>

#include "util/internal_key.h"

namespace accelkv {

std::string EscapeKey(const Slice& key) {
  std::string out = "'";
  for (size_t i = 0; i < key.size(); i++) {
    const auto c = static_cast<unsigned char>(key[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out.append(buf);
    }
  }
  out.push_back('\'');
  return out;
}

std::string InternalKeyDebugString(const Slice& internal_key) {
  ParsedInternalKey parsed;
  if (!ParseInternalKey(internal_key, &parsed)) {
    return "(bad internal key " + EscapeKey(internal_key) + ")";
  }
  return EscapeKey(parsed.user_key) + "@" + std::to_string(parsed.sequence) +
         (parsed.type == ValueType::kValue ? ":put" : ":del");
}

}  // namespace accelkv
