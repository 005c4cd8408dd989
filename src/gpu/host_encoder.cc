#include "gpu/host_encoder.h"

#include <algorithm>
#include <cstring>

#include "gpu/gpu_util.h"
#include "util/crc32c.h"

namespace accelkv {
namespace gpu {

namespace {

// The byte-wise CRC32C table WriteTableFooterCrc takes (52 bytes a table).
const uint32_t* ByteCrcTable() {
  static const auto* table = [] {
    auto* t = new uint32_t[256];
    for (uint32_t i = 0; i < 256; ++i) t[i] = Crc32cTableEntry(i);
    return t;
  }();
  return table;
}

}  // namespace

void WriteTrailerCrcOnHost(uint8_t* out, uint64_t offset, uint64_t size) {
  const uint32_t crc = crc32c::Value(reinterpret_cast<const char*>(out + offset), size + 1);
  StoreFixed32(out + offset + size + 1, crc32c::Mask(crc));
}

double EncodeOnHost(const EncodeJob& job, const EncodeSources& src, uint64_t first_block,
                    uint64_t end_block, uint8_t* out, size_t threads) {
  double helpers = 0;
  // The data blocks, in `threads` contiguous slices (a block of large
  // values is one value: its copy is the work).
  const uint64_t nb = end_block - first_block;
  const size_t slices = std::max<size_t>(1, std::min<uint64_t>(threads, nb));
  helpers += ParallelFor(slices, slices, [&](size_t slice) {
    for (uint64_t i = first_block + nb * slice / slices;
         i < first_block + nb * (slice + 1) / slices; ++i) {
      const EncodeBlock& b = job.blocks[i];
      EncodeBlockEntries(src, b, out, 0, 1);
      WriteBlockFooter(out, b);
      WriteTrailerCrcOnHost(out, b.out_offset, EncodedBlockSize(b));
    }
  });
  // Each table's filter (lines, every key's probe bits, footer), then its
  // tail (index entries, properties, footer).
  uint64_t first_filter = 0;
  uint64_t end_filter = 0;
  FiltersOfBlocks(job, first_block, end_block, &first_filter, &end_filter);
  uint64_t first_table = 0;
  uint64_t end_table = 0;
  TablesOfBlocks(job, first_block, end_block, &first_table, &end_table);
  const auto* comparator = reinterpret_cast<const uint8_t*>(job.comparator.data());
  const uint64_t nf = end_filter - first_filter;
  const uint64_t nt = end_table - first_table;
  const uint64_t items = std::max(nf, nt);
  helpers += ParallelFor(items, std::min<uint64_t>(threads, items), [&](size_t item) {
    if (item < nf) {
      const EncodeFilter& f = job.filters[first_filter + item];
      uint8_t* bits = out + f.out_offset;
      std::memset(bits, 0, uint64_t{f.num_lines} * kBloomLineBytes);
      WriteFilterFooter(out, f);
      for (uint64_t k = f.first; k < f.end; ++k) {
        uint64_t h = 0;
        if (!FilterKeyHash(src, f, k, &h)) continue;
        BloomProbes(h, f.num_lines, static_cast<int>(f.num_probes),
                    [bits](uint64_t byte, uint8_t mask) {
                      bits[byte] |= mask;
                      return true;
                    });
      }
      WriteTrailerCrcOnHost(out, f.out_offset, EncodedFilterSize(f));
    }
    if (item < nt) {
      const EncodeTable& t = job.tables[first_table + item];
      const EncodeBlock* blocks = job.blocks.data() + t.first_block;
      const EncodeBlock index = IndexLayout(t);
      for (uint64_t e = 0; e < index.n; ++e) WriteIndexEntry(src, blocks, t, e, out);
      WriteBlockFooter(out, index);
      WriteTrailerCrcOnHost(out, index.out_offset, EncodedBlockSize(index));
      WritePropertiesBlock(src, blocks, t, comparator, out);
      WriteTrailerCrcOnHost(out, t.out_offset + PropertiesOffset(t),
                            EncodedBlockSize(PropertiesLayout(t)));
      WriteTableFooter(t, out);
      WriteTableFooterCrc(ByteCrcTable(), t, out);
    }
  });
  return helpers;
}

}  // namespace gpu
}  // namespace accelkv
