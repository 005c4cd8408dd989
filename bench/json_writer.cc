#include "json_writer.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace accelkv_bench {

void JsonLine::AppendEscaped(std::string_view s, std::string* out) {
  out->push_back('"');
  for (char c : s) {
    const unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (u < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", u);
          out->append(buf);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

void JsonLine::Key(std::string_view name) {
  if (body_.size() > 1) body_.push_back(',');
  AppendEscaped(name, &body_);
  body_.push_back(':');
}

JsonLine& JsonLine::Add(std::string_view name, std::string_view value) {
  Key(name);
  AppendEscaped(value, &body_);
  return *this;
}

JsonLine& JsonLine::Add(std::string_view name, int64_t value) {
  Key(name);
  body_ += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::Add(std::string_view name, uint64_t value) {
  Key(name);
  body_ += std::to_string(value);
  return *this;
}

JsonLine& JsonLine::Add(std::string_view name, double value) {
  Key(name);
  if (!std::isfinite(value)) {
    body_ += "null";
    return *this;
  }
  // The shortest of 15 or 17 significant digits that reads back exactly.
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.15g", value);
  if (std::strtod(buf, nullptr) != value) std::snprintf(buf, sizeof(buf), "%.17g", value);
  body_ += buf;
  return *this;
}

JsonLine& JsonLine::Add(std::string_view name, bool value) {
  Key(name);
  body_ += value ? "true" : "false";
  return *this;
}

JsonLine& JsonLine::AddNull(std::string_view name) {
  Key(name);
  body_ += "null";
  return *this;
}

JsonLine& JsonLine::AddObject(std::string_view name, const JsonLine& object) {
  Key(name);
  body_ += object.str();
  return *this;
}

}  // namespace accelkv_bench
