// JsonLine: builds one JSON object on one line ({"a":1,"b":"x"}), the format
// of accelkv-bench's --json output (one object per workload run).
//
// Strings are escaped per RFC 8259 (quote, backslash, control characters as
// \uXXXX; other bytes pass through); non-finite doubles become null.
//
// Thread safety: none; one builder per line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace accelkv_bench {

class JsonLine {
 public:
  JsonLine& Add(std::string_view name, std::string_view value);
  JsonLine& Add(std::string_view name, const char* value) {
    return Add(name, std::string_view(value));
  }
  JsonLine& Add(std::string_view name, int64_t value);
  JsonLine& Add(std::string_view name, uint64_t value);
  JsonLine& Add(std::string_view name, int value) { return Add(name, int64_t{value}); }
  JsonLine& Add(std::string_view name, double value);
  JsonLine& Add(std::string_view name, bool value);
  JsonLine& AddNull(std::string_view name);
  // A nested object: "name":{...}.
  JsonLine& AddObject(std::string_view name, const JsonLine& object);

  // The object, without a trailing newline.
  std::string str() const { return body_ + "}"; }

  static void AppendEscaped(std::string_view s, std::string* out);

 private:
  void Key(std::string_view name);
  std::string body_ = "{";
};

}  // namespace accelkv_bench
