#include "tools/load_command.h"

#include <chrono>
#include <limits>

#include "accelkv/write_batch.h"
#include "tools/cli_format.h"
#include "tools/load_workload.h"

namespace accelkv::cli {

namespace {

constexpr uint64_t kDefaultValueSize = 100;
constexpr uint64_t kDefaultKeySize = 16;
constexpr uint64_t kDefaultSeed = 301;
constexpr uint64_t kMaxValueSize = uint64_t{64} << 20;
constexpr uint64_t kMaxKeySize = uint64_t{1} << 20;
constexpr uint64_t kMaxBatch = uint64_t{1} << 20;
constexpr int kMaxReportedErrors = 5;

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// "fillrandom : 1000 ops in 0.123 s, 8130 ops/s, 0.943 MB/s"
void PrintPhase(std::ostream& out, const char* name, uint64_t ops, uint64_t bytes, double seconds) {
  const double s = seconds > 0 ? seconds : 1e-9;
  out << name << " : " << ops << " ops in " << FormatDouble(seconds, 3) << " s, "
      << FormatDouble(static_cast<double>(ops) / s, 0) << " ops/s, "
      << FormatDouble(static_cast<double>(bytes) / 1e6 / s, 3) << " MB/s\n";
}

Status WritePhase(const CommandContext& ctx, const LoadWorkload& w, uint64_t batch_size, DB* db) {
  const std::vector<uint32_t> order = w.Order(0);
  WriteBatch batch;
  std::string key, value;
  for (uint32_t index : order) {
    w.Key(index, &key);
    w.Value(index, &value);
    batch.Put(key, value);
    if (batch.Count() >= batch_size) {
      Status s = db->Write(ctx.write_options, batch);
      if (!s.ok()) return s;
      batch.Clear();
    }
  }
  if (batch.Count() > 0) return db->Write(ctx.write_options, batch);
  return Status::OK();
}

// Reads every key back; returns the number of missing or wrong values.
uint64_t ReadPhase(const CommandContext& ctx, const LoadWorkload& w, DB* db) {
  const std::vector<uint32_t> order = w.Order(1);
  std::string key, expected, actual;
  uint64_t wrong = 0;
  const ReadOptions ro;
  for (uint32_t index : order) {
    w.Key(index, &key);
    const Status s = db->Get(ro, key, &actual);
    if (s.ok()) {
      w.Value(index, &expected);
      if (actual == expected) continue;
    }
    if (++wrong <= kMaxReportedErrors) {
      ctx.err << "accelkv: load: key " << EscapeBytes(key) << ": "
              << (s.ok() ? std::string("wrong value") : s.ToString()) << "\n";
    }
  }
  return wrong;
}

}  // namespace

int RunLoad(const CommandContext& ctx) {
  if (!ctx.args.Has("num")) return UsageError(ctx.err, "load needs --num N");
  const uint64_t num = ctx.args.Number("num", 0);
  const uint64_t value_size = ctx.args.Number("value-size", kDefaultValueSize);
  const uint64_t key_size = ctx.args.Number("key-size", kDefaultKeySize);
  const uint64_t seed = ctx.args.Number("seed", kDefaultSeed);
  const uint64_t batch_size = ctx.args.Number("batch", 1);
  if (num == 0 || num > std::numeric_limits<uint32_t>::max()) {
    return UsageError(ctx.err, "--num must be between 1 and 4294967295");
  }
  if (value_size > kMaxValueSize) return UsageError(ctx.err, "--value-size must be at most 64M");
  if (key_size == 0 || key_size > kMaxKeySize) {
    return UsageError(ctx.err, "--key-size must be between 1 and 1048576");
  }
  if (!LoadWorkload::KeySizeFits(num, key_size)) {
    return UsageError(ctx.err, "--key-size " + std::to_string(key_size) + " cannot hold " +
                                   std::to_string(num) + " distinct decimal keys");
  }
  if (batch_size == 0 || batch_size > kMaxBatch) {
    return UsageError(ctx.err, "--batch must be between 1 and 1048576");
  }
  const LoadWorkload workload(num, key_size, value_size, seed);
  const uint64_t bytes = num * (key_size + value_size);

  std::unique_ptr<DB> db;
  Status s = OpenDb(ctx, &db);
  if (!s.ok()) return Fail(ctx.err, "open " + ctx.db_path, s);
  ctx.out << "load: " << num << " keys, key " << key_size << " B, value " << value_size
          << " B, batch " << batch_size << ", seed " << seed
          << (ctx.write_options.sync ? ", sync" : "") << "\n";

  Clock::time_point start = Clock::now();
  s = WritePhase(ctx, workload, batch_size, db.get());
  if (!s.ok()) return CloseDb(ctx, std::move(db), Fail(ctx.err, "load: write", s));
  PrintPhase(ctx.out, "fillrandom", num, bytes, SecondsSince(start));

  start = Clock::now();
  FlushOptions flush_options;
  flush_options.wait = true;
  s = db->Flush(flush_options);
  if (!s.ok()) return CloseDb(ctx, std::move(db), Fail(ctx.err, "load: flush", s));
  ctx.out << "flush      : " << FormatDouble(SecondsSince(start), 3) << " s\n";

  start = Clock::now();
  const uint64_t wrong = ReadPhase(ctx, workload, db.get());
  PrintPhase(ctx.out, "readrandom", num, bytes, SecondsSince(start));
  ctx.out << "verified   : " << (num - wrong) << " of " << num << " keys"
          << (wrong == 0 ? "" : " (" + std::to_string(wrong) + " missing or wrong)") << "\n";

  std::string stats;
  if (db->GetProperty("accelkv.stats", &stats)) ctx.out << stats;
  if (!stats.empty() && stats.back() != '\n') ctx.out << "\n";

  int result = kExitOk;
  if (wrong > 0) {
    ctx.err << "accelkv: load: " << wrong << " of " << num << " keys missing or wrong\n";
    result = kExitFailure;
  }
  return CloseDb(ctx, std::move(db), result);
}

}  // namespace accelkv::cli
