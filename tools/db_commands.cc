#include "tools/db_commands.h"

#include <optional>

namespace accelkv::cli {

namespace {

// Reads an optional key option (--from / --to) into *key. False after a
// usage error (bad hex).
bool KeyOption(const CommandContext& ctx, const char* name, std::optional<std::string>* key) {
  if (!ctx.args.Has(name)) return true;
  std::string bytes;
  if (!InputBytes(ctx, ctx.args.String(name, ""), &bytes)) return false;
  *key = std::move(bytes);
  return true;
}

}  // namespace

int RunPut(const CommandContext& ctx) {
  std::string key, value;
  if (!InputBytes(ctx, ctx.args.positional()[0], &key) ||
      !InputBytes(ctx, ctx.args.positional()[1], &value)) {
    return kExitUsage;
  }
  std::unique_ptr<DB> db;
  Status s = OpenDb(ctx, &db);
  if (!s.ok()) return Fail(ctx.err, "open " + ctx.db_path, s);
  s = db->Put(ctx.write_options, key, value);
  int result = kExitOk;
  if (s.ok()) {
    ctx.out << "OK\n";
  } else {
    result = Fail(ctx.err, "put", s);
  }
  return CloseDb(ctx, std::move(db), result);
}

int RunGet(const CommandContext& ctx) {
  std::string key;
  if (!InputBytes(ctx, ctx.args.positional()[0], &key)) return kExitUsage;
  std::unique_ptr<DB> db;
  Status s = OpenDb(ctx, &db);
  if (!s.ok()) return Fail(ctx.err, "open " + ctx.db_path, s);
  std::string value;
  s = db->Get(ReadOptions(), key, &value);
  int result = kExitOk;
  if (s.ok()) {
    ctx.out << OutputBytes(ctx, value) << "\n";
  } else if (s.IsNotFound()) {
    ctx.err << "accelkv: NotFound: " << OutputBytes(ctx, key) << "\n";
    result = kExitFailure;
  } else {
    result = Fail(ctx.err, "get", s);
  }
  return CloseDb(ctx, std::move(db), result);
}

int RunDelete(const CommandContext& ctx) {
  std::string key;
  if (!InputBytes(ctx, ctx.args.positional()[0], &key)) return kExitUsage;
  std::unique_ptr<DB> db;
  Status s = OpenDb(ctx, &db);
  if (!s.ok()) return Fail(ctx.err, "open " + ctx.db_path, s);
  s = db->Delete(ctx.write_options, key);
  int result = kExitOk;
  if (s.ok()) {
    ctx.out << "OK\n";
  } else {
    result = Fail(ctx.err, "delete", s);
  }
  return CloseDb(ctx, std::move(db), result);
}

int RunScan(const CommandContext& ctx) {
  std::optional<std::string> from, to;
  if (!KeyOption(ctx, "from", &from) || !KeyOption(ctx, "to", &to)) return kExitUsage;
  const bool has_limit = ctx.args.Has("limit");
  const uint64_t limit = ctx.args.Number("limit", 0);
  const bool reverse = ctx.args.Flag("reverse", false);

  std::unique_ptr<DB> db;
  Status s = OpenDb(ctx, &db);
  if (!s.ok()) return Fail(ctx.err, "open " + ctx.db_path, s);
  int result = kExitOk;
  {
    const Slice lower = from ? Slice(*from) : Slice();
    const Slice upper = to ? Slice(*to) : Slice();
    ReadOptions ro;
    ro.fill_cache = false;
    ro.iterate_lower_bound = from ? &lower : nullptr;
    ro.iterate_upper_bound = to ? &upper : nullptr;
    std::unique_ptr<Iterator> it = db->NewIterator(ro);
    uint64_t printed = 0;
    if (reverse) {
      it->SeekToLast();
    } else {
      it->SeekToFirst();
    }
    while (it->Valid() && (!has_limit || printed < limit)) {
      ctx.out << OutputBytes(ctx, it->key()) << " => " << OutputBytes(ctx, it->value()) << "\n";
      ++printed;
      if (reverse) {
        it->Prev();
      } else {
        it->Next();
      }
    }
    s = it->status();
    if (!s.ok()) result = Fail(ctx.err, "scan", s);
  }
  return CloseDb(ctx, std::move(db), result);
}

int RunStats(const CommandContext& ctx) {
  std::unique_ptr<DB> db;
  Status s = OpenDb(ctx, &db);
  if (!s.ok()) return Fail(ctx.err, "open " + ctx.db_path, s);
  int result = kExitOk;
  for (const char* property : {"accelkv.stats", "accelkv.sstables"}) {
    std::string value;
    if (!db->GetProperty(property, &value)) {
      result = Fail(ctx.err, "stats", Status::NotSupported("unknown property", property));
      break;
    }
    ctx.out << "** " << property << " **\n" << value;
    if (!value.empty() && value.back() != '\n') ctx.out << "\n";
  }
  return CloseDb(ctx, std::move(db), result);
}

int RunCompact(const CommandContext& ctx) {
  std::optional<std::string> from, to;
  if (!KeyOption(ctx, "from", &from) || !KeyOption(ctx, "to", &to)) return kExitUsage;
  std::unique_ptr<DB> db;
  Status s = OpenDb(ctx, &db);
  if (!s.ok()) return Fail(ctx.err, "open " + ctx.db_path, s);
  const Slice begin = from ? Slice(*from) : Slice();
  const Slice end = to ? Slice(*to) : Slice();
  s = db->CompactRange(from ? &begin : nullptr, to ? &end : nullptr);
  int result = kExitOk;
  if (s.ok()) {
    ctx.out << "OK\n";
  } else {
    result = Fail(ctx.err, "compact", s);
  }
  return CloseDb(ctx, std::move(db), result);
}

}  // namespace accelkv::cli
