#include "tools/cli_command.h"

#include <limits>

#include "tools/cli_format.h"
#include "tools/cli_usage.h"

namespace accelkv::cli {

bool BuildDbOptions(const Args& args, bool create_default, Options* options,
                    WriteOptions* write_options, std::string* error) {
  options->create_if_missing = args.Flag("create-if-missing", create_default);
  write_options->sync = args.Flag("sync", false);
  constexpr uint64_t kMaxBytes = uint64_t{1} << 40;
  const uint64_t write_buffer = args.Number("write-buffer-size", options->write_buffer_size);
  const uint64_t block_size = args.Number("block-size", options->block_size);
  const uint64_t bloom_bits =
      args.Number("bloom-bits", static_cast<uint64_t>(options->bloom_bits_per_key));
  const uint64_t cache_size = args.Number("cache-size", options->block_cache_size);
  if (write_buffer == 0 || write_buffer > kMaxBytes) {
    *error = "--write-buffer-size must be between 1 and 1T";
    return false;
  }
  if (block_size == 0 || block_size > (uint64_t{1} << 30)) {
    *error = "--block-size must be between 1 and 1G";
    return false;
  }
  if (bloom_bits > 64) {
    *error = "--bloom-bits must be between 0 and 64";
    return false;
  }
  if (cache_size > kMaxBytes) {
    *error = "--cache-size must be at most 1T";
    return false;
  }
  options->write_buffer_size = static_cast<size_t>(write_buffer);
  options->block_size = static_cast<size_t>(block_size);
  options->bloom_bits_per_key = static_cast<int>(bloom_bits);
  options->block_cache_size = static_cast<size_t>(cache_size);
  return true;
}

int UsageError(std::ostream& err, const std::string& message) {
  err << "accelkv: " << message << "\n\n" << UsageText();
  return kExitUsage;
}

int Fail(std::ostream& err, const std::string& what, const Status& status) {
  err << "accelkv: " << what << ": " << status.ToString() << "\n";
  return kExitFailure;
}

bool InputBytes(const CommandContext& ctx, const std::string& text, std::string* bytes) {
  if (!ctx.hex) {
    *bytes = text;
    return true;
  }
  if (DecodeHex(text, bytes)) return true;
  UsageError(ctx.err, "not hex: '" + text + "'");
  return false;
}

std::string OutputBytes(const CommandContext& ctx, const Slice& bytes) {
  return ctx.hex ? HexBytes(bytes) : EscapeBytes(bytes);
}

Status OpenDb(const CommandContext& ctx, std::unique_ptr<DB>* db) {
  return DB::Open(ctx.options, ctx.db_path, db);
}

int CloseDb(const CommandContext& ctx, std::unique_ptr<DB> db, int result) {
  const Status s = db->Close();
  db.reset();
  if (result != kExitOk) return result;
  if (!s.ok()) return Fail(ctx.err, "close", s);
  return kExitOk;
}

}  // namespace accelkv::cli
