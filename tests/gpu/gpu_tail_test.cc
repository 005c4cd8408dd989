// The table tails the device writes (tail_common.h: index block, properties
// block, footer, with their trailers), checked on the host against what
// TableBuilder writes: BlockBuilder's index block, EncodePropertiesBlock
// and Footer::EncodeTo. Shapes the randomized executor tests rarely reach
// are made on purpose here: index blocks with 4-byte end offsets, variable
// and fixed index key widths, a properties block whose values are all 8
// bytes (fixed width) and one with large keys (4-byte end offsets).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "gpu/host_encoder.h"
#include "gpu/key_sort_device.h"
#include "gpu/output_planner.h"
#include "gpu/tail_common.h"
#include "table/block_builder.h"
#include "table/format.h"
#include "table/properties_block.h"
#include "util/internal_key.h"
#include "util/random.h"

namespace accelkv {
namespace {

static_assert(gpu::kTrailerBytes == kBlockTrailerSize);
static_assert(gpu::kHandleBytes == BlockHandle::kEncodedLength);
static_assert(gpu::kTableFooterBytes == Footer::kEncodedLength);
static_assert(gpu::kTableFormatVersion == Footer::kFormatVersion);
static_assert(gpu::kTableMagic == Footer::kMagic);

std::string IKey(const std::string& user, SequenceNumber seq) {
  std::string k;
  AppendInternalKey(&k, ParsedInternalKey(user, seq, ValueType::kValue));
  return k;
}

struct Shape {
  size_t keys;
  size_t max_user;       // user keys of 0..max_user bytes (fixed: exactly)
  bool fixed;            // every user key of max_user bytes
  size_t max_per_block;  // entries per data block: 1..max_per_block
  std::string comparator;
  bool filter;
};

// Builds one table's tail both ways and compares the bytes.
void CheckShape(const Shape& shape, Random* rnd) {
  // Keys in internal-key order, in a key arena; kept order = arena order.
  std::vector<std::string> users;
  for (size_t i = 0; i < shape.keys; ++i) {
    const size_t len = shape.fixed ? shape.max_user : rnd->Uniform(shape.max_user + 1);
    std::string u;
    for (size_t j = 0; j < len; ++j) u.push_back("ab\0z"[rnd->Uniform(4)]);
    users.push_back(u);
  }
  std::sort(users.begin(), users.end());
  std::vector<std::string> keys;
  for (size_t i = 0; i < users.size(); ++i) keys.push_back(IKey(users[i], 1000000 - i));
  std::string arena;
  std::vector<uint64_t> key_offset;
  std::vector<uint32_t> key_size;
  std::vector<uint32_t> kept;
  for (const std::string& k : keys) {
    kept.push_back(static_cast<uint32_t>(key_offset.size()));
    key_offset.push_back(arena.size());
    key_size.push_back(static_cast<uint32_t>(k.size()));
    arena += k;
  }
  const gpu::EncodeSources src{nullptr,         reinterpret_cast<const uint8_t*>(arena.data()),
                               kept.data(),     key_offset.data(),
                               key_size.data(), nullptr,
                               nullptr};

  // Data blocks (their contents do not matter here, only their places and
  // sizes), and the index block as TableBuilder builds it.
  const uint64_t table_offset = 4096;
  std::vector<gpu::EncodeBlock> blocks;
  BlockBuilder index;
  BlockLayoutTracker index_layout;  // as the CPU plan keeps it
  uint64_t offset = 0;
  uint64_t index_key_bytes = 0;
  for (size_t first = 0; first < keys.size();) {
    const size_t n = std::min<size_t>(keys.size() - first, 1 + rnd->Uniform(shape.max_per_block));
    gpu::EncodeBlock b{};
    b.out_offset = table_offset + offset;
    b.first = first;
    b.n = static_cast<uint32_t>(n);
    b.key_width = gpu::kVariableWidth;
    b.value_width = gpu::kVariableWidth;
    b.offset_width = 2;
    b.key_bytes = static_cast<uint32_t>(10 * n + rnd->Uniform(4000));
    const std::string& last = keys[first + n - 1];
    index_key_bytes += last.size();
    b.index_key_end = static_cast<uint32_t>(index_key_bytes);
    BlockHandle h;
    h.offset = offset;
    h.size = gpu::EncodedBlockSize(b);
    std::string handle;
    h.EncodeTo(&handle);
    index.Add(last, handle);
    index_layout.Add(last, handle);
    blocks.push_back(b);
    offset += h.size + kBlockTrailerSize;
    first += n;
  }

  TableProperties props;
  props.comparator_name = shape.comparator;
  props.data_bytes = offset;
  props.num_data_blocks = blocks.size();
  props.num_entries = keys.size();
  props.num_deletions = rnd->Uniform(1000);
  props.raw_key_bytes = rnd->Next64();
  props.raw_value_bytes = rnd->Next64();
  props.smallest_seqno = rnd->Uniform(1u << 30);
  props.largest_seqno = rnd->Next64();
  props.smallest_key = keys.front();
  props.largest_key = keys.back();

  gpu::EncodeTable t{};
  t.out_offset = table_offset;
  t.first_block = 0;
  t.end_block = blocks.size();
  t.data_bytes = offset;
  t.filter_size = shape.filter ? 64 * (1 + rnd->Uniform(5)) + 5 : 0;
  gpu::SetTailLayout(props, index_layout.Layout(), &t);
  const BlockLayout il = index_layout.Layout();

  gpu::EncodeJob job;
  job.blocks.assign(blocks.begin(), blocks.end());
  job.tables.push_back(t);
  job.comparator = shape.comparator;
  job.out_size = table_offset + gpu::TableFileSize(t);
  ASSERT_TRUE(gpu::CheckEncodeJob(job, 0, blocks.size(), keys.size()).ok());

  // The device's functions, as the host reference runs them.
  uint32_t crc_table[256];
  for (uint32_t i = 0; i < 256; ++i) crc_table[i] = gpu::Crc32cTableEntry(i);
  std::string out(job.out_size, '\x5a');
  auto* o = reinterpret_cast<uint8_t*>(out.data());
  const gpu::EncodeBlock il_dev = gpu::IndexLayout(t);
  for (uint64_t e = 0; e < il_dev.n; ++e) gpu::WriteIndexEntry(src, blocks.data(), t, e, o);
  gpu::WriteBlockFooter(o, il_dev);
  gpu::WriteTrailerCrcOnHost(o, il_dev.out_offset, gpu::EncodedBlockSize(il_dev));
  gpu::WritePropertiesBlock(src, blocks.data(), t,
                            reinterpret_cast<const uint8_t*>(shape.comparator.data()), o);
  gpu::WriteTrailerCrcOnHost(o, t.out_offset + gpu::PropertiesOffset(t),
                             gpu::EncodedBlockSize(gpu::PropertiesLayout(t)));
  gpu::WriteTableFooter(t, o);
  gpu::WriteTableFooterCrc(crc_table, t, o);

  // TableBuilder's bytes: properties, index, footer after data and filter.
  std::string expect;
  Footer footer;
  uint64_t at = offset;
  if (t.filter_size > 0) {
    footer.filter_handle.offset = offset;
    footer.filter_handle.size = t.filter_size;
    at += t.filter_size + kBlockTrailerSize;
  }
  std::string contents;
  EncodePropertiesBlock(props, &contents);
  footer.properties_handle.offset = at;
  footer.properties_handle.size = contents.size();
  expect += contents;
  AppendBlockTrailer(contents, &expect);
  at += contents.size() + kBlockTrailerSize;
  const Slice index_contents = index.Finish();
  footer.index_handle.offset = at;
  footer.index_handle.size = index_contents.size();
  expect.append(index_contents.data(), index_contents.size());
  AppendBlockTrailer(index_contents, &expect);
  footer.EncodeTo(&expect);

  const uint64_t tail = gpu::PropertiesOffset(t);
  ASSERT_EQ(expect.size(), gpu::TableFileSize(t) - tail);
  ASSERT_EQ(il.size, index_contents.size());
  EXPECT_EQ(PropertiesBlockSize(t.comparator_size, t.smallest_key_size, t.largest_key_size),
            gpu::EncodedBlockSize(gpu::PropertiesLayout(t)));
  const std::string got = out.substr(table_offset + tail);
  for (size_t i = 0; i < expect.size(); ++i) {
    ASSERT_EQ(expect[i], got[i]) << "byte " << i << " of the tail (properties " << contents.size()
                                 << " bytes, index " << index_contents.size() << ")";
  }
}

TEST(GpuTableTailTest, TailsByteIdenticalToTableBuilder) {
  Random rnd(41);
  const std::string bytewise = "accelkv.BytewiseComparator";
  const Shape shapes[] = {
      {200, 12, false, 8, bytewise, true},    // variable index key widths
      {300, 16, true, 30, bytewise, false},   // fixed widths, no filter
      {3000, 20, true, 1, bytewise, true},    // index block over 64 KiB: W = 4
      {5, 0, true, 2, "8bytes!!", true},      // empty user keys: every value 8 bytes
      {1, 0, true, 1, "8bytes!!", false},     // one entry
      {40, 40000, false, 3, bytewise, true},  // large keys: properties W = 4
      {100, 1, false, 100, "c", true},        // one data block
  };
  for (const Shape& shape : shapes) {
    SCOPED_TRACE(testing::Message() << shape.keys << " keys, user keys to " << shape.max_user);
    for (int round = 0; round < 5; ++round) {
      CheckShape(shape, &rnd);
      if (HasFatalFailure()) return;
    }
  }
}

// CheckEncodeJob refuses a table whose tail would be written outside the
// job or outside its index section.
TEST(GpuTableTailTest, CheckEncodeJobRefusesBadTables) {
  gpu::EncodeJob job;
  job.comparator = "c";
  uint64_t offset = 0;
  uint64_t index_keys = 0;
  for (int i = 0; i < 3; ++i) {
    gpu::EncodeBlock b{};
    b.out_offset = offset;
    b.first = static_cast<uint64_t>(i);
    b.n = 1;
    b.key_width = 16;
    b.value_width = 0;
    b.offset_width = 2;
    b.key_bytes = 16;
    index_keys += 16;
    b.index_key_end = static_cast<uint32_t>(index_keys);
    job.blocks.push_back(b);
    offset += gpu::EncodedBlockSize(b) + 5;
  }
  gpu::EncodeTable t{};
  t.first_block = 0;
  t.end_block = 3;
  t.data_bytes = offset;
  t.comparator_size = 1;
  t.smallest_key_size = 16;
  t.largest_key_size = 16;
  t.index_prefix = 8;
  t.index_key_width = 8;
  t.index_offset_width = 2;
  t.index_key_bytes = 24;
  job.tables.push_back(t);
  job.out_size = gpu::TableFileSize(t);
  ASSERT_TRUE(gpu::CheckEncodeJob(job, 0, 3, 3).ok());
  auto refused = [&](const std::function<void(gpu::EncodeJob*)>& spoil) {
    gpu::EncodeJob bad = job;
    spoil(&bad);
    const Status st = gpu::CheckEncodeJob(bad, 0, 3, 3);
    return st.IsInvalidArgument() &&
           st.ToString().find("table lies outside the job") != std::string::npos;
  };
  EXPECT_TRUE(refused([](gpu::EncodeJob* j) { j->out_size -= 1; }));
  EXPECT_TRUE(refused([](gpu::EncodeJob* j) { j->tables[0].end_block = 4; }));
  EXPECT_TRUE(refused([](gpu::EncodeJob* j) { j->tables[0].data_bytes += 1; }));
  EXPECT_TRUE(refused([](gpu::EncodeJob* j) { j->tables[0].index_key_bytes = 32; }));
  EXPECT_TRUE(refused([](gpu::EncodeJob* j) { j->tables[0].index_offset_width = 3; }));
  EXPECT_TRUE(refused([](gpu::EncodeJob* j) { j->tables[0].comparator_size = 2; }));
  EXPECT_TRUE(refused([](gpu::EncodeJob* j) { j->blocks[1].index_key_end = 10; }));
  EXPECT_TRUE(refused([](gpu::EncodeJob* j) { j->blocks[2].index_key_end = 40; }));
  EXPECT_TRUE(refused([](gpu::EncodeJob* j) { j->tables[0].out_offset = 1; }));
}

}  // namespace
}  // namespace accelkv
