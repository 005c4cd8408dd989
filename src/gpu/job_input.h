// JobInput: the CPU half of the GPU pipeline's front end. Reads a
// compaction job's input table files whole into the device's host file
// arena (pinned on the GPU backend) and decodes their layout: footer and
// index block (its CRC checked here, it is needed to find the rest). Every
// data block's layout is then checked (CheckDataBlock, decode_common.h) and
// its keys placed in the key arena: on the device, over the staged arena,
// in device-encode mode (KeySortDevice::CheckBlocks), so that the CPU
// never reads the data blocks; by the reader threads in keys-only mode.
// The device then materializes every entry's internal key (block prefix ++
// suffix) into the key arena and locates its value in the file arena
// (KeySortDevice::DecodeKeys); the CPU passes the deeper levels' file
// ranges on (SetDeeperLevels), from which the device's dedup answers
// IsBaseLevelForKey for tombstones. The data, filter and properties blocks
// are left for the device to checksum (keys-only mode: the reader threads
// check them, and the values stay on the host).
//
// Every offset is bounds-checked (a block that passes CheckDataBlock has
// every entry inside it); malformed bytes give Corruption, never a read
// outside the arena.
//
// Thread safety: one job per JobInput.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "accelkv/env.h"
#include "accelkv/status.h"
#include "compaction/compaction_executor.h"
#include "gpu/key_sort_device.h"
#include "table/block_builder.h"
#include "table/format.h"
#include "util/align.h"

namespace accelkv {
namespace gpu {

// The file-arena bytes ReadInputTables gives a table (or part) whose bytes
// are [file_offset, file_offset + size): size, or with direct reads the
// size of their aligned cover [AlignDown(file_offset), AlignUp(file_offset
// + size)) with kDirectIoAlignment (with TableOptions::
// direct_compaction_reads each table's read starts at a multiple of it in
// the file and in the file arena), at most 2 * (kDirectIoAlignment - 1)
// more. The executor's
// budget estimates count the arena with it (FitsWhole, and the chunk
// planning: JobChunk::arena_bytes), so they include the padding exactly,
// as the check at decode (BytesNeeded of the arena's real size) does.
inline uint64_t ArenaSpanBytes(bool direct_reads, uint64_t file_offset, uint64_t size) {
  if (!direct_reads) return size;
  return AlignUp(file_offset + size, kDirectIoAlignment) -
         AlignDown(file_offset, kDirectIoAlignment);
}

struct InputTable {
  uint64_t number = 0;
  // Of its first byte in the arena. Buffered reads pack the tables back to
  // back; with direct reads a table starts file_offset % kDirectIoAlignment
  // bytes into its aligned span (ReadInputTables). Either way the tables
  // ascend in the arena (TableAt), and no code assumes one ends where the
  // next starts.
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t file_offset = 0;  // of its first byte in the file (0: read whole)
};

// Part of an input table read for one chunk of a job too large for the
// device (job_chunks.h): a contiguous run of its data blocks, validated
// against the table's index block by ReadTableIndexes.
struct TablePart {
  uint64_t number = 0;
  uint64_t file_offset = 0;         // the first block's offset in the file
  uint64_t size = 0;                // through the last block's trailer
  std::vector<BlockHandle> blocks;  // file offsets, ascending, inside the part
};

// A chunk's user-key range [lo, hi); without lo from the job's first key,
// without hi to its last.
struct UserKeyRange {
  bool has_lo = false;
  bool has_hi = false;
  std::string lo;
  std::string hi;
  bool Contains(const Slice& user_key) const {
    return (!has_lo || user_key.compare(Slice(lo)) >= 0) &&
           (!has_hi || user_key.compare(Slice(hi)) < 0);
  }
};

// One table's blocks as its reader thread found them, right after the
// read, or the first Corruption it found. In device-encode mode it reads
// the footer and the index block and lists the data blocks, which the
// device checks (KeySortDevice::CheckBlocks): blocks and the totals below
// stay empty. In keys-only mode it checks every data block's layout too.
struct TableBlocks {
  // To checksum: the data blocks, spans[0, data_spans) (in device-encode
  // mode those before a failure), then the filter and properties blocks.
  std::vector<BlockSpan> spans;
  uint64_t data_spans = 0;
  // Keys-only mode: its data blocks with entries, in file order, as
  // DecodeKeys takes them (MakeDecodeBlock, made as each block is checked)
  // but numbered within the table: key_base and first_entry count from the
  // table's first key byte and entry (DecodeInputTables adds the table's
  // place in the job).
  std::vector<DecodeBlock> blocks;
  Status status;
  // Totals over blocks, summed as they are checked, so the decode can
  // lay the tables out side by side from O(tables) sums:
  uint64_t entries = 0;    // their entries
  uint64_t key_bytes = 0;  // their keys' bytes in the key arena (n * P + KS each)
  // The reader thread's CPU seconds for the validation (stage_cpu_seconds'
  // "validate", split from "read").
  double validate_cpu_seconds = 0;
  // Keys-only mode (nothing staged): the reader thread checked the spans'
  // checksums right after the read; the first bad one (~0: none) and the
  // check's wall time.
  uint64_t bad_span = ~uint64_t{0};
  uint64_t verify_micros = 0;
  // The internal-key size of every entry when every block with entries has
  // fixed-width keys of that one size (P + width, under 2^32), else 0;
  // kNoEntries while no block has entries.
  static constexpr uint64_t kNoEntries = BlockCheckResult::kNoEntries;  // the device's sentinel
  uint64_t fixed_key_size = kNoEntries;
  // The fixed_key_size of entries whose two parts have fixed_key_size a
  // and b (blocks of a table, or tables of a job).
  static uint64_t MergeFixedKeySize(uint64_t a, uint64_t b) {
    if (a == kNoEntries) return b;
    if (b == kNoEntries) return a;
    return a == b ? a : 0;
  }
};

struct JobInput {
  std::vector<InputTable> tables;
  // The files whose bytes the device copies from where their Env keeps
  // them (ReadInputTables, lent tables): held until those copies are done
  // (DecodeInputTables returned; the executor then clears them).
  std::vector<std::unique_ptr<RandomAccessFile>> lent_files;
  std::vector<TableBlocks> table_blocks;  // per table, from ReadInputTables
  KeySortInput keys;                      // arenas, blocks, key offsets, flags, snapshots
  HostVector<uint64_t> value_offset;      // per entry, into the file arena
  HostVector<uint32_t> value_size;
  DecodeInput decode;  // the data blocks with entries, for KeySortDevice::DecodeKeys
  // Device-encode mode: the data blocks' spans the device checks
  // (KeySortDevice::CheckBlocks), in table order.
  HostVector<BlockSpan> check_spans;
  // Entries outside the chunk's key range (kFlagOutOfRange), set by
  // DecodeInputTables; 0 for a job read whole.
  uint64_t out_of_range = 0;

  // The table holding arena offset `offset` (REQUIRES: inside some table).
  const InputTable& TableAt(uint64_t offset) const;
  // Empties every array but keeps its capacity: the executor reuses one
  // JobInput across jobs, so a job's per-entry arrays are not fresh pages.
  // keys.key_offset, keys.key_size, value_offset, value_size, decode.blocks
  // and check_spans keep even their size (stale until DecodeInputTables
  // resizes and fills them), so that the resize does not zero-fill them
  // again.
  void Clear();
};

// Decodes an index block's contents (trailer checked by the caller): each
// entry's block handle, which must lie inside [0, data_end) with its
// trailer, and, when last_user_keys is not null, the user key of its
// internal key (the block's last key). Corruption for malformed bytes.
Status DecodeIndexBlock(const char* contents, size_t size, uint64_t data_end,
                        std::vector<BlockHandle>* handles,
                        std::vector<std::string>* last_user_keys);

// Fills keys->deeper_* from c's deeper levels (the files' smallest and
// largest user keys, level after level: KeySortInput::DeeperView), for the
// dedup's base-level test of tombstones (IsBaseLevelKey, which answers as
// c.IsBaseLevelForKey does).
void SetDeeperLevels(const Compaction& c, KeySortInput* keys);

// Reads every input file of spec.compaction (level inputs, then
// output-level inputs) into device->HostArena, on up to FileThreads
// threads, and stages the file arena on the device as the files come in:
// BeginStaging (its size is the files' sizes from their metadata, plus the
// alignment padding with spec.table_options.direct_compaction_reads, when
// every file is read with RandomAccessFileOptions::use_direct_reads as its
// 4 KiB-aligned cover into a 4 KiB-aligned span of the arena), then on
// each reader thread, as soon as its file is read, StageRange of the
// file's span (under a mutex) and the validation of the table's layout
// (footer, index block; keys-only mode: every data block's layout too)
// into input->table_blocks, while the device copies. The first read failure in
// file order is returned, after CancelStaging; a validation failure is
// left for DecodeInputTables to return, a staging failure leaves the
// upload to DecodeKeys. Adds the helper threads' CPU seconds to
// *helper_cpu_seconds.
// With parts (a chunk of a larger job), only those byte ranges are read,
// in their order, and only their data blocks are validated and later
// checksummed (the filter and properties blocks are not read).
// Lent tables: with staging and without direct reads, a table (or part)
// whose Env lends its bytes in memory the device copies from
// (RandomAccessFile::Lend, KeySortDevice::DirectHostMemory) is not read:
// StageFrom copies it from the Env's memory and it is validated there; its
// file stays open in input->lent_files until those copies are done. Should
// the staging fail, the lent bytes are copied into the arena for DecodeKeys'
// upload.
// stage: each file is staged to the device as soon as it is read (device-
// encode mode); false (keys-only mode) leaves the arena on the host (and
// DecodeKeys uploads only the blocks' keys), and each reader thread checks
// its table's block checksums once it is validated (TableBlocks::bad_span,
// reported by DecodeInputTables).
// stage_groups > 1 (a key-first job: KeySortDevice::SetKeyFirst): a whole
// job (no parts) whose tables are all lent is staged in that many groups,
// the tables' low keys first (staging_groups.h, KeySortDevice::MarkStaged),
// before any table is validated; else table by table as above. Adds, from
// the call's start, "read_arena" (the arenas ready), and with staging
// groups "read_open" (every table open) and "read_staged" (every copy
// queued).
Status ReadInputTables(const CompactionJobSpec& spec, KeySortDevice* device,
                       const std::vector<TablePart>* parts, bool stage, uint32_t stage_groups,
                       JobInput* input, std::map<std::string, uint64_t>* stage_micros,
                       double* helper_cpu_seconds);

// Decodes the tables read by ReadInputTables: their validated blocks in
// table order (the first validation failure in table order is returned:
// Corruption for malformed bytes, with the table file; in device-encode
// mode the data blocks' layouts are checked and laid out by the device,
// KeySortDevice::CheckBlocks, its stages "copy_in_wait" and "gpu_check"),
// lays out the key arena (device->HostKeyArena), then the device materializes every key and
// fills the entry arrays (DecodeKeys, which finds the file arena staged);
// keys.flags (a chunk's out-of-range entries; empty for a job run whole)
// and keys.snapshots last. The keys and the entry arrays may
// still be on their way back from the device when it returns (the caller
// calls device->WaitDecodedKeys before it reads them): it waits for them
// itself only when it reads keys (deeper files' tombstone flags, a
// chunk's range). keys_only (keys-only mode, after ReadInputTables
// without staging, which checked every block's checksum on the CPU): the
// lowest bad block in table order is Corruption, as the device reports it
// (stage "verify_cpu": the slowest table's check); no block goes to the
// device's verify (keys.blocks is left empty), the
// device gets only the blocks' keys and end offsets (DecodeInput::
// keys_only), and the value arrays come back; else value_offset and
// value_size may stay empty (DecodeOutput::values_to_host).
// NotSupported (not a device failure) when the job needs more device
// memory than the budget (KeySortDevice::BytesNeeded), which is known only
// once the key arena's size is. Every return before DecodeKeys cancels the staging. Adds the
// CPU's time under "decode" (the tables' blocks are laid out side by side on up to
// ComputeThreads threads, whose CPU seconds go to *helper_cpu_seconds). With range (a chunk),
// entries whose user key lies outside it get kFlagOutOfRange and are counted in input->out_of_range
// (only the blocks whose first or last key is outside are looked into: keys are sorted within a
// block).
Status DecodeInputTables(const CompactionJobSpec& spec, KeySortDevice* device,
                         const UserKeyRange* range, JobInput* input, bool keys_only,
                         std::map<std::string, uint64_t>* stage_micros, double* helper_cpu_seconds);

// Corruption("gpu: block checksum mismatch", "table file N block at offset
// O") for input.keys.blocks[span].
Status BlockChecksumMismatch(const JobInput& input, uint64_t span);

}  // namespace gpu
}  // namespace accelkv
