#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "table/format.h"
#include "table/table_builder.h"
#include "table/table_test_util.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/hash.h"
#include "util/internal_key.h"

namespace accelkv {
namespace {

using test::IKey;

TEST(FormatTest, MagicBytesSpellACELKTBL) {
  std::string s;
  PutFixed64(&s, Footer::kMagic);
  EXPECT_EQ("ACELKTBL", s);
}

Footer SampleFooter() {
  Footer f;
  f.index_handle = {100, 20};
  f.filter_handle = {0, 0};
  f.properties_handle = {50, 45};
  return f;
}

TEST(FormatTest, FooterRoundTripAndLayout) {
  std::string enc;
  SampleFooter().EncodeTo(&enc);
  ASSERT_EQ(64u, enc.size());
  EXPECT_EQ(100u, DecodeFixed64(enc.data()));
  EXPECT_EQ(20u, DecodeFixed64(enc.data() + 8));
  EXPECT_EQ(0u, DecodeFixed64(enc.data() + 16));
  EXPECT_EQ(0u, DecodeFixed64(enc.data() + 24));
  EXPECT_EQ(50u, DecodeFixed64(enc.data() + 32));
  EXPECT_EQ(45u, DecodeFixed64(enc.data() + 40));
  EXPECT_EQ(2u, DecodeFixed32(enc.data() + 48));
  EXPECT_EQ(crc32c::Mask(crc32c::Value(enc.data(), 52)), DecodeFixed32(enc.data() + 52));
  EXPECT_EQ("ACELKTBL", enc.substr(56));
  Footer f;
  ASSERT_TRUE(f.DecodeFrom(enc, 125 + 64).ok());
  EXPECT_EQ(100u, f.index_handle.offset);
  EXPECT_EQ(45u, f.properties_handle.size);
  EXPECT_EQ(0u, f.filter_handle.size);
}

TEST(FormatTest, FooterRejectsBadBytes) {
  std::string enc;
  SampleFooter().EncodeTo(&enc);
  Footer f;
  // Handle + trailer must end before the footer: index ends at 125.
  EXPECT_TRUE(f.DecodeFrom(enc, 124 + 64).IsCorruption());
  EXPECT_TRUE(f.DecodeFrom(enc, 63).IsCorruption());
  for (size_t i = 0; i < enc.size(); ++i) {
    std::string bad = enc;
    bad[i] ^= 0x20;
    EXPECT_TRUE(f.DecodeFrom(bad, 1000).IsCorruption()) << i;
  }
  // A filter handle with offset but no size is malformed.
  Footer g = SampleFooter();
  g.filter_handle = {10, 0};
  std::string genc;
  g.EncodeTo(&genc);
  EXPECT_TRUE(f.DecodeFrom(genc, 1000).IsCorruption());
  // Offsets near 2^64 must not wrap around.
  g = SampleFooter();
  g.index_handle = {~uint64_t{0} - 2, 10};
  genc.clear();
  g.EncodeTo(&genc);
  EXPECT_TRUE(f.DecodeFrom(genc, 1000).IsCorruption());
}

TEST(FormatTest, ReadBlockChecksAndCompression) {
  const std::string contents = "some block bytes";
  std::string file = "pad";
  const BlockHandle h{3, contents.size()};
  file += contents;
  AppendBlockTrailer(contents, &file);
  ASSERT_EQ(0, file[3 + contents.size()]);
  {
    test::StringSource src(file);
    BlockContents got;
    ASSERT_TRUE(ReadBlock(src, h, &got).ok());
    EXPECT_EQ(contents, got.slice().ToString());
  }
  for (size_t i = 3; i < file.size(); ++i) {
    std::string bad = file;
    bad[i] ^= 1;
    test::StringSource src(bad);
    BlockContents got;
    EXPECT_TRUE(ReadBlock(src, h, &got).IsCorruption()) << i;
  }
  {  // short file
    test::StringSource src(file.substr(0, file.size() - 1));
    BlockContents got;
    EXPECT_TRUE(ReadBlock(src, h, &got).IsCorruption());
  }
  {  // type 1 with a matching CRC: unsupported compression
    std::string bad = file.substr(0, 3 + contents.size());
    bad.push_back(1);
    uint32_t crc = crc32c::Value(bad.data() + 3, contents.size() + 1);
    PutFixed32(&bad, crc32c::Mask(crc));
    test::StringSource src(bad);
    BlockContents got;
    Status s = ReadBlock(src, h, &got);
    EXPECT_TRUE(s.IsCorruption());
    EXPECT_NE(std::string::npos, s.ToString().find("unsupported compression"));
  }
}

// A file that returns its own memory, as an mmap'd file does.
class InMemoryFile final : public RandomAccessFile {
 public:
  explicit InMemoryFile(std::string contents) : contents_(std::move(contents)) {}
  Status Read(uint64_t offset, size_t n, Slice* result, char* scratch) const override {
    if (offset >= contents_.size()) {
      *result = Slice(scratch, 0);
      return Status::OK();
    }
    *result = Slice(contents_.data() + offset, std::min<uint64_t>(n, contents_.size() - offset));
    return Status::OK();
  }
  const char* data() const { return contents_.data(); }

 private:
  const std::string contents_;
};

// A block of `size` bytes at offset 3 of a file, and its handle.
std::string FileWithBlock(size_t size, BlockHandle* h) {
  std::string contents(size, '\0');
  for (size_t i = 0; i < size; ++i) contents[i] = static_cast<char>('a' + i % 26);
  std::string file = "pad" + contents;
  AppendBlockTrailer(contents, &file);
  *h = BlockHandle{3, size};
  return file;
}

TEST(FormatTest, ReadBlockBorrowsTheFilesOwnMemory) {
  for (size_t size : {size_t{16}, size_t{4000}, size_t{20000}}) {  // stack buffer and heap
    BlockHandle h;
    const std::string file = FileWithBlock(size, &h);
    for (bool hint : {false, true}) {
      InMemoryFile src(file);
      BlockContents got;
      ReadBlockOptions options;
      options.file_returns_own_memory = hint;
      ASSERT_TRUE(ReadBlock(src, h, &got, options).ok());
      EXPECT_FALSE(got.owned());
      EXPECT_EQ(nullptr, got.data);
      EXPECT_EQ(src.data() + 3, got.slice().data());  // no copy
      EXPECT_EQ(file.substr(3, size), got.slice().ToString());
    }
  }
}

TEST(FormatTest, ReadBlockCopiesWhenTheFileUsesScratch) {
  for (size_t size : {size_t{16}, size_t{4000}, size_t{20000}}) {
    BlockHandle h;
    const std::string file = FileWithBlock(size, &h);
    for (bool hint : {false, true}) {  // a wrong hint costs a copy, not correctness
      BlockContents got;
      ReadBlockOptions options;
      options.file_returns_own_memory = hint;
      {
        test::StringSource src(file);
        ASSERT_TRUE(ReadBlock(src, h, &got, options).ok());
      }  // the source is gone; the contents own their bytes
      EXPECT_TRUE(got.owned());
      EXPECT_EQ(got.data.get(), got.slice().data());
      EXPECT_EQ(file.substr(3, size), got.slice().ToString());
    }
  }
}

TEST(FormatTest, ReadBlockSkipsOnlyTheChecksumWhenAsked) {
  BlockHandle h;
  std::string file = FileWithBlock(100, &h);
  file[10] ^= 1;  // a content byte: only the CRC can tell
  InMemoryFile src(file);
  BlockContents got;
  EXPECT_TRUE(ReadBlock(src, h, &got).IsCorruption());
  ReadBlockOptions no_verify;
  no_verify.verify_checksum = false;
  ASSERT_TRUE(ReadBlock(src, h, &got, no_verify).ok());
  EXPECT_EQ(file.substr(3, 100), got.slice().ToString());
  std::string compressed = file;
  compressed[3 + 100] = 1;  // the type byte is checked even without the CRC
  InMemoryFile src2(compressed);
  EXPECT_TRUE(ReadBlock(src2, h, &got, no_verify).IsCorruption());
  InMemoryFile short_file(file.substr(0, file.size() - 1));
  EXPECT_TRUE(ReadBlock(short_file, h, &got, no_verify).IsCorruption());
}

TEST(FormatTest, OwnedBlockContentsStillWork) {
  BlockContents c;
  EXPECT_TRUE(c.owned());
  EXPECT_EQ(0u, c.slice().size());
  c.data.reset(new char[3]{'a', 'b', 'c'});
  c.size = 3;
  EXPECT_EQ("abc", c.slice().ToString());
}

// ---- Golden table: the bytes are assembled here from docs/format/table.md,
// independently of the builder, and the first block is also pinned in hex.

// The block layout of docs/FORMAT.md ("Block"), written from the spec.
std::string HandBlock(const std::vector<std::pair<std::string, std::string>>& kvs) {
  const uint32_t n = static_cast<uint32_t>(kvs.size());
  size_t p = n == 0 ? 0 : kvs[0].first.size();
  bool keys_fixed = true, values_fixed = true;
  for (const auto& kv : kvs) {
    size_t i = 0;
    while (i < p && i < kv.first.size() && kv.first[i] == kvs[0].first[i]) ++i;
    p = i;
    keys_fixed = keys_fixed && kv.first.size() == kvs[0].first.size();
    values_fixed = values_fixed && kv.second.size() == kvs[0].second.size();
  }
  std::string suffixes, values;
  std::vector<uint32_t> key_ends, value_ends;
  for (const auto& kv : kvs) {
    suffixes += kv.first.substr(p);
    values += kv.second;
    key_ends.push_back(static_cast<uint32_t>(suffixes.size()));
    value_ends.push_back(static_cast<uint32_t>(values.size()));
  }
  const uint32_t kVar = 0xffffffffu;
  const uint32_t kw = n == 0 ? 0 : keys_fixed ? static_cast<uint32_t>(kvs[0].first.size() - p) : kVar;
  const uint32_t vw = n == 0 ? 0 : values_fixed ? static_cast<uint32_t>(kvs[0].second.size()) : kVar;
  const size_t arrays = (kw == kVar) + (vw == kVar);
  const size_t narrow = p + suffixes.size() + values.size() + 2 * n * arrays + 16;
  const size_t w = narrow <= 0xffff ? 2 : 4;
  std::string out = (n == 0 ? "" : kvs[0].first.substr(0, p)) + suffixes + values;
  auto put_ends = [&](const std::vector<uint32_t>& ends) {
    for (uint32_t e : ends) {
      for (size_t b = 0; b < w; ++b) out.push_back(static_cast<char>(e >> (8 * b)));
    }
  };
  if (kw == kVar) put_ends(key_ends);
  if (vw == kVar) put_ends(value_ends);
  for (uint32_t v : {n, static_cast<uint32_t>(p), kw, vw}) PutFixed32(&out, v);
  return out;
}

std::string WithTrailer(const std::string& contents) {
  std::string out = contents;
  out.push_back('\0');
  PutFixed32(&out, crc32c::Mask(crc32c::Value(out.data(), out.size())));
  return out;
}

std::string Handle(uint64_t offset, uint64_t size) {
  std::string s;
  PutFixed64(&s, offset);
  PutFixed64(&s, size);
  return s;
}

std::string F64(uint64_t v) {
  std::string s;
  PutFixed64(&s, v);
  return s;
}

std::string Hex(const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
  return out;
}

std::string BuildGolden() {
  InternalKeyComparator icmp(BytewiseComparator());
  TableOptions opt;
  opt.comparator = &icmp;
  opt.user_comparator = BytewiseComparator();
  opt.block_size = 16;
  opt.bloom_bits_per_key = 10;
  test::StringSink sink;
  TableBuilder b(opt, &sink);
  b.Add(IKey("a", 1, ValueType::kValue), "x");
  b.Add(IKey("b", 2, ValueType::kDeletion), "");
  EXPECT_TRUE(b.Finish().ok());
  EXPECT_EQ(sink.contents().size(), b.FileSize());
  return sink.contents();
}

TEST(FormatTest, GoldenTinyTable) {
  const std::string k0 = IKey("a", 1, ValueType::kValue);     // "a" 01 01 00 00 00 00 00 00
  const std::string k1 = IKey("b", 2, ValueType::kDeletion);  // "b" 00 02 00 00 00 00 00 00
  // s_0 = 9 + 1 + 8 = 18; P_1 = 18; floor(18/16) = 1 != floor(0/16) = 0: two data blocks.
  // One entry per block: the whole key is the block's prefix.
  const std::string d0 = HandBlock({{k0, "x"}});  // 9 + 1 + 16 = 26 bytes at offset 0
  const std::string d1 = HandBlock({{k1, ""}});   // 9 + 0 + 16 = 25 bytes at offset 31
  ASSERT_EQ(26u, d0.size());
  ASSERT_EQ(25u, d1.size());
  // Filter: 2 user keys * 10 bits -> 1 line, 6 probes; line index is always 0.
  std::string bits(64, '\0');
  for (const char* u : {"a", "b"}) {
    uint32_t h2 = static_cast<uint32_t>(Hash64(u, 1) >> 32);
    for (int j = 0; j < 6; ++j) {
      bits[(h2 >> 23) / 8] = static_cast<char>(bits[(h2 >> 23) / 8] | (1 << ((h2 >> 23) % 8)));
      h2 *= 0x9E3779B9u;
    }
  }
  std::string filter = bits;
  filter.push_back(6);
  PutFixed32(&filter, 1);  // 69 bytes at offset 31 + 30 = 61
  const std::string props = HandBlock({
      {"accelkv.comparator", "accelkv.BytewiseComparator"},
      {"accelkv.data-bytes", F64(61)},
      {"accelkv.largest-key", k1},
      {"accelkv.largest-seqno", F64(2)},
      {"accelkv.num-data-blocks", F64(2)},
      {"accelkv.num-deletions", F64(1)},
      {"accelkv.num-entries", F64(2)},
      {"accelkv.raw-key-bytes", F64(18)},
      {"accelkv.raw-value-bytes", F64(1)},
      {"accelkv.smallest-key", k0},
      {"accelkv.smallest-seqno", F64(1)},
  });  // at offset 61 + 69 + 5 = 135
  const uint64_t props_off = 135;
  const uint64_t index_off = props_off + props.size() + 5;
  const std::string index = HandBlock({{k0, Handle(0, 26)}, {k1, Handle(31, 25)}});
  std::string footer =
      Handle(index_off, index.size()) + Handle(61, 69) + Handle(props_off, props.size());
  PutFixed32(&footer, 2);  // format version
  PutFixed32(&footer, crc32c::Mask(crc32c::Value(footer.data(), 52)));
  footer += "ACELKTBL";
  const std::string want = WithTrailer(d0) + WithTrailer(d1) + WithTrailer(filter) +
                           WithTrailer(props) + WithTrailer(index) + footer;

  const std::string got = BuildGolden();
  ASSERT_EQ(want.size(), got.size());
  EXPECT_EQ(Hex(want), Hex(got));
  // Data block 0 with its trailer, as printed in docs/FORMAT.md.
  EXPECT_EQ(
      "610101000000000000"  // prefix: the whole key
      "78"                  // value
      "01000000"            // n
      "09000000"            // prefix size
      "00000000"            // key width (empty suffix)
      "01000000"            // value width
      "00"
      "8bcb7c4a",
      Hex(got.substr(0, 31)));
  EXPECT_EQ(BuildGolden(), got);  // deterministic
}

}  // namespace
}  // namespace accelkv
