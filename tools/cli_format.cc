#include "tools/cli_format.h"

#include <cstdio>

namespace accelkv::cli {

namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string EscapeBytes(const Slice& bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (unsigned char c : bytes.view()) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kHexDigits[c >> 4]);
      out.push_back(kHexDigits[c & 15]);
    }
  }
  return out;
}

std::string HexBytes(const Slice& bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes.view()) {
    out.push_back(kHexDigits[c >> 4]);
    out.push_back(kHexDigits[c & 15]);
  }
  return out;
}

bool DecodeHex(const Slice& hex, std::string* bytes) {
  if (hex.size() % 2 != 0) return false;
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = HexValue(hex[i]);
    const int lo = HexValue(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out.push_back(static_cast<char>((hi << 4) | lo));
  }
  *bytes = std::move(out);
  return true;
}

std::string TruncatedForm(const Slice& bytes, size_t max_bytes, bool hex) {
  const Slice head(bytes.data(), bytes.size() < max_bytes ? bytes.size() : max_bytes);
  std::string out = hex ? HexBytes(head) : EscapeBytes(head);
  if (head.size() < bytes.size()) out += "...(" + std::to_string(bytes.size()) + " bytes)";
  return out;
}

std::string FormatDouble(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, value);
  return buf;
}

}  // namespace accelkv::cli
