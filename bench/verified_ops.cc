#include "verified_ops.h"

namespace accelkv_bench {

namespace {

std::string Printable(std::string_view key) {
  std::string out;
  for (char c : key) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      out.push_back(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    }
  }
  return out;
}

bool EngineFailed(BenchContext* ctx, const char* op, std::string_view key, const EngineStatus& s) {
  ctx->Fail(std::string(op) + " '" + Printable(key) + "' failed: " + s.message);
  return false;
}

}  // namespace

bool VerifiedPut(BenchContext* ctx, KeySpace* space, uint64_t index, ThreadStats* stats,
                 OpScratch* scratch) {
  const bool prepared = scratch->prepared && scratch->prepared_index == index;
  scratch->prepared = false;
  if (!prepared) space->Key(index, &scratch->key);
  KeyState::WriteGuard guard(space->state(), index, /*is_delete=*/false);
  if (prepared && scratch->prepared_version == guard.version()) {
    ctx->values().MakeFromHash(scratch->prepared_hash, guard.version(), space->value_size(),
                               &scratch->value);
  } else {  // unprepared, or the key was written since it was prepared
    ctx->values().Make(scratch->key, guard.version(), space->value_size(), &scratch->value);
  }
  EngineStatus s = ctx->engine()->Put(scratch->key, scratch->value);
  if (!s.ok()) return EngineFailed(ctx, "Put", scratch->key, s);
  guard.Commit();
  const uint64_t bytes = scratch->key.size() + scratch->value.size();
  stats->bytes += bytes;
  stats->user_write_bytes += bytes;
  return true;
}

bool VerifiedDelete(BenchContext* ctx, KeySpace* space, uint64_t index, ThreadStats* stats,
                    OpScratch* scratch) {
  space->Key(index, &scratch->key);
  KeyState::WriteGuard guard(space->state(), index, /*is_delete=*/true);
  EngineStatus s = ctx->engine()->Delete(scratch->key);
  if (!s.ok()) return EngineFailed(ctx, "Delete", scratch->key, s);
  guard.Commit();
  stats->bytes += scratch->key.size();
  stats->user_write_bytes += scratch->key.size();
  return true;
}

bool VerifiedGet(BenchContext* ctx, KeySpace* space, uint64_t index, ThreadStats* stats,
                 OpScratch* scratch, bool* found) {
  space->Key(index, &scratch->key);
  const KeyState::ReadTicket ticket = space->state()->BeginRead(index);
  EngineStatus s = ctx->engine()->Get(scratch->key, &scratch->read);
  if (!s.ok() && !s.IsNotFound()) return EngineFailed(ctx, "Get", scratch->key, s);
  const bool present = s.ok();
  uint32_t version = 0;
  std::string why;
  if (present && !ctx->values().Check(scratch->key, scratch->read, &version, &why)) {
    ctx->Fail("wrong value for key '" + Printable(scratch->key) + "': " + why);
    return false;
  }
  if (!space->state()->CheckRead(index, ticket, present, version, &why)) {
    ctx->Fail("key '" + Printable(scratch->key) + "': " + why);
    return false;
  }
  stats->reads_checked++;
  if (present) {
    stats->reads_found++;
    stats->bytes += scratch->key.size() + scratch->read.size();
  } else {
    stats->reads_not_found++;
  }
  if (found != nullptr) *found = present;
  return true;
}

bool VerifiedGetMissing(BenchContext* ctx, const std::string& key, ThreadStats* stats,
                        OpScratch* scratch) {
  EngineStatus s = ctx->engine()->Get(key, &scratch->read);
  if (s.ok()) {
    ctx->Fail("key '" + Printable(key) + "' was never written but Get found " +
              std::to_string(scratch->read.size()) + " bytes");
    return false;
  }
  if (!s.IsNotFound()) return EngineFailed(ctx, "Get", key, s);
  stats->reads_checked++;
  stats->reads_not_found++;
  return true;
}

bool VerifyScanEntry(BenchContext* ctx, KeySpace* space, std::string_view key,
                     std::string_view value, ThreadStats* stats) {
  uint32_t version = 0;
  std::string why;
  if (!ctx->values().Check(key, value, &version, &why)) {
    ctx->Fail("scan returned a wrong value for key '" + Printable(key) + "': " + why);
    return false;
  }
  uint64_t index = 0;
  if (space->Parse(key, &index)) {
    // A cursor reads a snapshot, so only "not from the future" holds.
    const KeyState::ReadTicket none{0};
    if (!space->state()->AnyUnknown() &&
        !space->state()->CheckRead(index, none, /*found=*/true, version, &why)) {
      ctx->Fail("scan of key '" + Printable(key) + "': " + why);
      return false;
    }
  }
  stats->reads_checked++;
  stats->reads_found++;
  stats->bytes += key.size() + value.size();
  return true;
}

bool VerifiedScan(BenchContext* ctx, KeySpace* space, Cursor* cursor, const std::string& start,
                  int count, ThreadStats* stats) {
  cursor->Seek(start);
  std::string previous;
  for (int i = 0; i < count && cursor->Valid(); i++) {
    const std::string_view key = cursor->key();
    if (i == 0 && key < std::string_view(start)) {
      ctx->Fail("Seek('" + Printable(start) + "') landed before its target, on '" + Printable(key) +
                "'");
      return false;
    }
    if (i > 0 && key <= std::string_view(previous)) {
      ctx->Fail("cursor went backwards or repeated: '" + Printable(previous) + "' then '" +
                Printable(key) + "'");
      return false;
    }
    if (!VerifyScanEntry(ctx, space, key, cursor->value(), stats)) return false;
    previous.assign(key.data(), key.size());
    if (i + 1 < count) cursor->Next();
  }
  EngineStatus s = cursor->status();
  if (!s.ok()) return EngineFailed(ctx, "Scan from", start, s);
  return true;
}

}  // namespace accelkv_bench
