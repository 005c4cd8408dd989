#include "tools/verify_command.h"

#include <algorithm>
#include <vector>

#include "tools/table_file.h"
#include "util/filename.h"

namespace accelkv::cli {

namespace {

// Collects the first error and the counts for the summary.
struct VerifyResult {
  Status first_error;
  std::string first_error_where;
  uint64_t table_files = 0;
  uint64_t keys = 0;

  void Record(const std::string& where, const Status& s) {
    if (!s.ok() && first_error.ok()) {
      first_error = s;
      first_error_where = where;
    }
  }
};

void VerifyTables(const CommandContext& ctx, VerifyResult* result) {
  Env* env = ctx.options.env;
  std::vector<std::string> children;
  Status s = env->GetChildren(ctx.db_path, &children);
  if (!s.ok()) {
    ctx.out << ctx.db_path << ": " << s.ToString() << "\n";
    result->Record(ctx.db_path, s);
    return;
  }
  std::sort(children.begin(), children.end());
  const InternalKeyComparator icmp(ctx.options.comparator);
  for (const std::string& name : children) {
    uint64_t number = 0;
    FileType type;
    if (!ParseFileName(name, &number, &type) || type != FileType::kTableFile) continue;
    result->table_files++;
    std::unique_ptr<Table> table;
    uint64_t file_size = 0;
    s = OpenTableFile(env, ctx.db_path + "/" + name, &icmp, &table, &file_size);
    if (s.ok()) s = table->VerifyAllBlocks();
    if (s.ok()) {
      ctx.out << name << ": OK (" << table->properties().num_entries << " entries, "
              << table->properties().num_data_blocks << " blocks, " << file_size << " bytes)\n";
    } else {
      ctx.out << name << ": " << s.ToString() << "\n";
      result->Record(name, s);
    }
  }
}

void VerifyDb(const CommandContext& ctx, VerifyResult* result) {
  Options options = ctx.options;
  options.create_if_missing = false;
  options.error_if_exists = false;
  std::unique_ptr<DB> db;
  Status s = DB::Open(options, ctx.db_path, &db);
  if (s.ok()) {
    ReadOptions ro;
    ro.fill_cache = false;
    std::unique_ptr<Iterator> it = db->NewIterator(ro);
    for (it->SeekToFirst(); it->Valid(); it->Next()) result->keys++;
    s = it->status();
    it.reset();
    const Status close = db->Close();
    if (s.ok()) s = close;
  }
  if (s.ok()) {
    ctx.out << "db: OK (" << result->keys << " keys)\n";
  } else {
    ctx.out << "db: " << s.ToString() << "\n";
    result->Record("db", s);
  }
}

}  // namespace

int RunVerify(const CommandContext& ctx) {
  VerifyResult result;
  VerifyTables(ctx, &result);
  VerifyDb(ctx, &result);
  if (result.first_error.ok()) {
    ctx.out << "verify: OK (" << result.table_files << " table files, " << result.keys
            << " keys)\n";
    return kExitOk;
  }
  ctx.out << "verify: FAILED: " << result.first_error_where << ": " << result.first_error.ToString()
          << "\n";
  return Fail(ctx.err, "verify " + result.first_error_where, result.first_error);
}

}  // namespace accelkv::cli
