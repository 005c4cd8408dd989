#include "tools/sst_dump_command.h"

#include "accelkv/comparator.h"
#include "tools/cli_format.h"
#include "tools/table_file.h"

namespace accelkv::cli {

namespace {

constexpr size_t kMaxShownValueBytes = 64;

// Prints the entries (up to the --limit) of *table; returns the iterator's
// status, or Corruption for a malformed internal key.
Status DumpEntries(const CommandContext& ctx, const Table& table) {
  const bool has_limit = ctx.args.Has("limit");
  const uint64_t limit = ctx.args.Number("limit", 0);
  ReadOptions ro;
  ro.fill_cache = false;
  std::unique_ptr<Iterator> it(table.NewIterator(ro));
  uint64_t printed = 0;
  for (it->SeekToFirst(); it->Valid() && (!has_limit || printed < limit); it->Next()) {
    ParsedInternalKey parsed;
    if (!ParseInternalKey(it->key(), &parsed)) {
      return Status::Corruption("malformed internal key", HexBytes(it->key()));
    }
    ctx.out << OutputBytes(ctx, parsed.user_key) << " @ " << parsed.sequence << " : "
            << (parsed.type == ValueType::kValue ? "PUT" : "DEL") << " => "
            << TruncatedForm(it->value(), kMaxShownValueBytes, ctx.hex) << "\n";
    ++printed;
  }
  return it->status();
}

}  // namespace

int RunSstDump(const CommandContext& ctx) {
  const std::string& path = ctx.args.positional()[0];
  const InternalKeyComparator icmp(BytewiseComparator());
  std::unique_ptr<Table> table;
  uint64_t file_size = 0;
  Status s = OpenTableFile(Env::Default(), path, &icmp, &table, &file_size);
  if (!s.ok()) return Fail(ctx.err, "sst-dump " + path, s);

  const TableProperties& props = table->properties();
  ctx.out << "file: " << path << "\n"
          << "file size: " << file_size << "\n"
          << props.ToString() << "data blocks: " << props.num_data_blocks << "\n";
  if (props.comparator_name != BytewiseComparator()->Name()) {
    ctx.out << "note: the table was written with comparator '" << EscapeBytes(props.comparator_name)
            << "'; dumped in bytewise order\n";
  }

  s = table->VerifyAllBlocks();
  ctx.out << "verify: " << s.ToString() << "\n";
  if (!s.ok()) return Fail(ctx.err, "sst-dump " + path, s);

  if (ctx.args.Flag("entries", false)) {
    s = DumpEntries(ctx, *table);
    if (!s.ok()) return Fail(ctx.err, "sst-dump " + path, s);
  }
  return kExitOk;
}

}  // namespace accelkv::cli
