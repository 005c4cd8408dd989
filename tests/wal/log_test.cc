// WAL format: log::Writer and log::Reader round trips over MemEnv, the exact
// physical layout (fragments, padding, header bytes), the torn-tail policy,
// corruption reporting, fuzzed input, initial_offset and I/O errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "accelkv/env.h"
#include "env/fault_injection_env.h"
#include "testutil/test_util.h"
#include "util/coding.h"
#include "util/crc32c.h"
#include "util/random.h"
#include "wal/log_format.h"
#include "wal/log_reader.h"
#include "wal/log_writer.h"

namespace accelkv::log {
namespace {

// A SequentialFile over a string that hands out pointers into its own
// memory (allowed by the SequentialFile contract), not into scratch.
class StringSequentialFile final : public SequentialFile {
 public:
  explicit StringSequentialFile(const std::string& data) : data_(data) {}
  Status Read(size_t n, Slice* result, char* scratch) override {
    const size_t r = std::min(n, data_.size() - pos_);
    *result = Slice(data_.data() + pos_, r);
    pos_ += r;
    return Status::OK();
  }
  Status Skip(uint64_t n) override {
    if (n > data_.size() - pos_) {
      pos_ = data_.size();
      return Status::OK();
    }
    pos_ += n;
    return Status::OK();
  }

 private:
  const std::string& data_;
  size_t pos_ = 0;
};

class CountingReporter final : public Reader::Reporter {
 public:
  void Corruption(size_t bytes, const Status& status) override {
    dropped_bytes += bytes;
    if (reports++ == 0) first = status;
    last = status;
  }
  size_t dropped_bytes = 0;
  int reports = 0;
  Status first;
  Status last;
};

struct ReadResult {
  std::vector<std::string> records;
  std::vector<uint64_t> offsets;  // LastRecordOffset() after each record
  CountingReporter reporter;
};

// Reads every record of `contents` (pointer-into-file-memory reads).
void ReadAll(const std::string& contents, uint64_t initial_offset, bool checksum, ReadResult* out) {
  StringSequentialFile file(contents);
  Reader reader(&file, &out->reporter, checksum, initial_offset);
  std::string scratch;
  Slice record;
  while (reader.ReadRecord(&record, &scratch)) {
    out->records.push_back(record.ToString());
    out->offsets.push_back(reader.LastRecordOffset());
  }
}

class LogTest : public ::testing::Test {
 protected:
  LogTest() : env_(NewMemEnv(Env::Default())) {
    EXPECT_TRUE(env_->CreateDir("/wal").ok());
    EXPECT_TRUE(env_->NewWritableFile(kFile, &dest_).ok());
    writer_ = std::make_unique<Writer>(dest_.get());
  }

  void Write(const std::string& record) {
    Status s = writer_->AddRecord(record);
    ASSERT_TRUE(s.ok()) << s.ToString();
    written_.push_back(record);
  }

  std::string Contents() {
    EXPECT_TRUE(dest_->Flush().ok());
    std::string data;
    EXPECT_TRUE(ReadFileToString(env_.get(), kFile, &data).ok());
    return data;
  }

  // Reads the file back through MemEnv's SequentialFile.
  std::vector<std::string> ReadThroughEnv(CountingReporter* reporter) {
    EXPECT_TRUE(dest_->Flush().ok());
    std::unique_ptr<SequentialFile> file;
    EXPECT_TRUE(env_->NewSequentialFile(kFile, &file).ok());
    Reader reader(file.get(), reporter, /*checksum=*/true, /*initial_offset=*/0);
    std::vector<std::string> out;
    std::string scratch;
    Slice record;
    while (reader.ReadRecord(&record, &scratch)) out.push_back(record.ToString());
    return out;
  }

  void ExpectRoundTrip() {
    CountingReporter reporter;
    std::vector<std::string> got = ReadThroughEnv(&reporter);
    EXPECT_EQ(reporter.reports, 0) << reporter.last.ToString();
    ASSERT_EQ(got.size(), written_.size());
    for (size_t i = 0; i < got.size(); i++) {
      EXPECT_EQ(got[i], written_[i]) << "record " << i;
    }
  }

  static std::string BigString(const std::string& partial, size_t n) {
    std::string result;
    while (result.size() < n) result.append(partial);
    result.resize(n);
    return result;
  }

  static constexpr const char* kFile = "/wal/000001.log";
  std::unique_ptr<Env> env_;
  std::unique_ptr<WritableFile> dest_;
  std::unique_ptr<Writer> writer_;
  std::vector<std::string> written_;
};

TEST_F(LogTest, EmptyFile) {
  EXPECT_EQ(Contents().size(), 0u);
  ExpectRoundTrip();
}

TEST_F(LogTest, EmptyRecord) {
  Write("");
  EXPECT_EQ(Contents().size(), kHeaderSize);
  ExpectRoundTrip();
}

TEST_F(LogTest, SmallRecords) {
  Write("foo");
  Write("bar");
  Write("");
  Write("xxxx");
  ExpectRoundTrip();
}

TEST_F(LogTest, WorkedExampleBytes) {
  // The example of docs/format/wal.md.
  Write("hello");
  const std::string c = Contents();
  ASSERT_EQ(c.size(), kHeaderSize + 5);
  const uint32_t crc = crc32c::Value("\x01hello", 6);
  EXPECT_EQ(DecodeFixed32(c.data()), crc32c::Mask(crc));
  EXPECT_EQ(crc32c::Value("123456789", 9), 0xe3069283u);  // the standard check value
  EXPECT_EQ(crc, 0x6719daeau);
  EXPECT_EQ(crc32c::Mask(crc), 0x5857b90bu);
  const char expected[] = "\x0b\xb9\x57\x58\x05\x00\x01hello";
  EXPECT_EQ(c, std::string(expected, sizeof(expected) - 1));
}

TEST_F(LogTest, ExactlyBlockSizedRecord) {
  // Fills block 0 exactly; the next record starts block 1 with no padding.
  Write(BigString("a", kBlockSize - kHeaderSize));
  Write("next");
  const std::string c = Contents();
  ASSERT_EQ(c.size(), kBlockSize + kHeaderSize + 4);
  EXPECT_EQ(c[6], static_cast<char>(kFullType));
  EXPECT_EQ(c[kBlockSize + 6], static_cast<char>(kFullType));
  ExpectRoundTrip();
}

TEST_F(LogTest, FragmentTypes) {
  // Three fragments: FIRST fills block 0, MIDDLE fills block 1, LAST in block 2.
  const size_t payload = 2 * (kBlockSize - kHeaderSize) + 100;
  Write(BigString("fragmented", payload));
  const std::string c = Contents();
  ASSERT_EQ(c.size(), payload + 3 * kHeaderSize);
  EXPECT_EQ(c[6], static_cast<char>(kFirstType));
  EXPECT_EQ(c[kBlockSize + 6], static_cast<char>(kMiddleType));
  EXPECT_EQ(c[2 * kBlockSize + 6], static_cast<char>(kLastType));
  EXPECT_EQ(DecodeFixed32(c.data() + 2 * kBlockSize + 4) & 0xffff, 100u);
  ExpectRoundTrip();
}

TEST_F(LogTest, BlockTailPadding) {
  // Leave 3 bytes in block 0: too few for a header, so they are zero padding.
  const size_t n = kBlockSize - 2 * kHeaderSize - 3;
  Write(BigString("p", n));
  Write("");  // 7 more bytes
  Write("after padding");
  const std::string c = Contents();
  ASSERT_EQ(c.size(), kBlockSize + kHeaderSize + 13);
  EXPECT_EQ(c.substr(kBlockSize - 3, 3), std::string(3, '\0'));
  EXPECT_EQ(c[kBlockSize + 6], static_cast<char>(kFullType));
  ExpectRoundTrip();
}

TEST_F(LogTest, HeaderExactlyFillsBlockTail) {
  // Exactly 7 bytes left: the record starts with an empty FIRST fragment.
  Write(BigString("q", kBlockSize - 2 * kHeaderSize));
  Write("spills");
  const std::string c = Contents();
  EXPECT_EQ(c[kBlockSize - 1], static_cast<char>(kFirstType));
  EXPECT_EQ(c[kBlockSize + 6], static_cast<char>(kLastType));
  ExpectRoundTrip();
}

TEST_F(LogTest, MultiBlockRecords) {
  Write("small");
  Write(BigString("medium", 50000));
  Write(BigString("large", 3 * kBlockSize + 17));
  Write("end");
  ExpectRoundTrip();
}

TEST_F(LogTest, ManyRandomRecords) {
  Random rnd(test::TestSeed());
  for (int i = 0; i < 2000; i++) {
    Write(test::RandomString(&rnd, rnd.Skewed(17)));
  }
  ExpectRoundTrip();
}

TEST_F(LogTest, ReopenForAppend) {
  Write("first");
  Write(BigString("x", kBlockSize - 100));
  const uint64_t size = Contents().size();
  // A second writer continuing the same file must keep the block alignment.
  writer_ = std::make_unique<Writer>(dest_.get(), size);
  Write(BigString("y", 500));
  Write("last");
  ExpectRoundTrip();
}

TEST_F(LogTest, LastRecordOffset) {
  Write("a");
  Write(BigString("b", 40000));
  Write("c");
  ReadResult r;
  ReadAll(Contents(), 0, true, &r);
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(r.offsets[0], 0u);
  EXPECT_EQ(r.offsets[1], kHeaderSize + 1);
  // FIRST (rest of block 0) + LAST (header + rest) in block 1.
  const uint64_t last_in_block1 = 40000 - (kBlockSize - 2 * kHeaderSize - 1);
  EXPECT_EQ(r.offsets[2], kBlockSize + kHeaderSize + last_in_block1);
}

TEST_F(LogTest, TornTailAtEveryByteOfLastRecord) {
  // Block 0 holds "one", "two..." and "pad" and ends in 3 bytes of padding.
  Write("one");
  Write(BigString("two", kBlockSize - 3 * kHeaderSize - 2 * 3 - 3));  // headers, one, pad, padding
  Write("pad");
  Write(BigString("three", 20000));
  Write(BigString("last record, spanning a block boundary", 14000));
  const std::string full = Contents();
  ReadResult whole;
  ReadAll(full, 0, true, &whole);
  ASSERT_EQ(whole.records, written_);
  const uint64_t last_start = whole.offsets.back();
  ASSERT_GT(last_start + 14000, 2 * kBlockSize) << "last record must cross a block boundary";

  for (uint64_t cut = last_start; cut < full.size(); cut++) {
    const std::string torn = full.substr(0, cut);
    ReadResult r;
    ReadAll(torn, 0, true, &r);
    ASSERT_EQ(r.reporter.reports, 0) << "cut at " << cut << ": " << r.reporter.last.ToString();
    ASSERT_EQ(r.records.size(), written_.size() - 1) << "cut at " << cut;
    for (size_t i = 0; i + 1 < written_.size(); i++) ASSERT_EQ(r.records[i], written_[i]);
  }
  // A cut inside the padding of block 0 loses nothing before it either.
  for (uint64_t cut = kBlockSize - 3; cut <= kBlockSize; cut++) {
    ReadResult r;
    ReadAll(full.substr(0, cut), 0, true, &r);
    EXPECT_EQ(r.reporter.reports, 0);
    EXPECT_EQ(r.records.size(), 3u);
  }
}

TEST_F(LogTest, TornTailOfHugeRecordAtBlockBoundaries) {
  Write("keep");
  Write(BigString("huge", 4 * kBlockSize));
  const std::string full = Contents();
  for (uint64_t b = 1; b * kBlockSize < full.size(); b++) {
    for (uint64_t cut = b * kBlockSize - 8; cut <= b * kBlockSize + 8; cut++) {
      ReadResult r;
      ReadAll(full.substr(0, cut), 0, true, &r);
      ASSERT_EQ(r.reporter.reports, 0) << "cut at " << cut;
      ASSERT_EQ(r.records.size(), 1u) << "cut at " << cut;
      EXPECT_EQ(r.records[0], "keep");
    }
  }
}

TEST_F(LogTest, BadChecksumInMiddleIsReportedAndReadingResumesNextBlock) {
  Write("foo");
  Write("bar");  // same block as foo
  Write(BigString("block1", kBlockSize));
  Write("tail");
  std::string c = Contents();
  c[kHeaderSize + 3 + kHeaderSize + 1] ^= 0x1;  // a payload byte of "bar"
  ReadResult r;
  ReadAll(c, 0, true, &r);
  // "bar" and the FIRST fragment of the big record (the rest of block 0) are
  // dropped as a checksum mismatch; the LAST fragment in block 1 is then
  // reported as orphaned.
  ASSERT_EQ(r.reporter.reports, 2);
  EXPECT_TRUE(r.reporter.last.IsCorruption());
  // Dropped: block 0 from "bar" on, then the LAST fragment (the 20 + 7 bytes
  // its FIRST fragment could not hold).
  EXPECT_EQ(r.reporter.dropped_bytes, (kBlockSize - 10) + (20 + kHeaderSize));
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[0], "foo");
  EXPECT_EQ(r.records[1], "tail");
  EXPECT_NE(r.reporter.first.ToString().find("checksum mismatch"), std::string::npos);
  EXPECT_NE(r.reporter.last.ToString().find("missing start"), std::string::npos);

  // Without checksums the damage goes through unnoticed.
  ReadResult nocheck;
  ReadAll(c, 0, /*checksum=*/false, &nocheck);
  EXPECT_EQ(nocheck.reporter.reports, 0);
  EXPECT_EQ(nocheck.records.size(), 4u);
}

TEST_F(LogTest, BadLengthInMiddleIsReported) {
  Write("foo");
  Write(BigString("x", kBlockSize));  // fills into block 1
  Write("bar");
  std::string c = Contents();
  c[4] = '\xff';  // foo's length: 0x??ff runs past block 0
  c[5] = '\x7f';
  ReadResult r;
  ReadAll(c, 0, true, &r);
  EXPECT_GE(r.reporter.reports, 1);
  EXPECT_NE(r.reporter.last.ToString().find("record"), std::string::npos);
  EXPECT_GE(r.reporter.dropped_bytes, kBlockSize - 100);
  ASSERT_FALSE(r.records.empty());
  EXPECT_EQ(r.records.back(), "bar");
}

TEST_F(LogTest, BadLengthCrossingBlockEndInLastBlockIsReported) {
  Write("foo");
  Write("bar");
  std::string c = Contents();
  // foo's length claims more than a block: cannot be a torn tail.
  c[4] = '\xff';
  c[5] = '\xff';
  ReadResult r;
  ReadAll(c, 0, true, &r);
  EXPECT_EQ(r.reporter.reports, 1);
  EXPECT_TRUE(r.records.empty());
}

TEST_F(LogTest, UnknownRecordTypeIsReported) {
  Write("foo");
  Write("bar");
  std::string c = Contents();
  // Rewrite "foo" as type 5 (unknown) with a valid checksum.
  c[6] = 5;
  EncodeFixed32(c.data(), crc32c::Mask(crc32c::Value(c.data() + 6, 4)));
  ReadResult r;
  ReadAll(c, 0, true, &r);
  EXPECT_EQ(r.reporter.reports, 1);
  EXPECT_EQ(r.reporter.dropped_bytes, 3u);
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0], "bar");
}

TEST_F(LogTest, MisplacedFragmentsAreReported) {
  // A MIDDLE and a LAST fragment with no FIRST before them.
  std::string c;
  for (RecordType type : {kMiddleType, kLastType, kFullType}) {
    const std::string payload = "frag";
    char header[kHeaderSize];
    header[4] = static_cast<char>(payload.size());
    header[5] = 0;
    header[6] = static_cast<char>(type);
    std::string typed = std::string(1, header[6]) + payload;
    EncodeFixed32(header, crc32c::Mask(crc32c::Value(typed.data(), typed.size())));
    c.append(header, kHeaderSize);
    c.append(payload);
  }
  ReadResult r;
  ReadAll(c, 0, true, &r);
  EXPECT_EQ(r.reporter.reports, 2);
  EXPECT_EQ(r.reporter.dropped_bytes, 8u);
  ASSERT_EQ(r.records.size(), 1u);
}

TEST_F(LogTest, ZeroFilledTail) {
  Write("foo");
  std::string c = Contents() + std::string(100, '\0');
  ReadResult r;
  ReadAll(c, 0, true, &r);
  EXPECT_EQ(r.reporter.reports, 0);
  ASSERT_EQ(r.records.size(), 1u);

  // Zeros in a block that is not the last one are a reported loss.
  std::string z = std::string(kBlockSize, '\0') + c;
  ReadResult r2;
  ReadAll(z, 0, true, &r2);
  EXPECT_EQ(r2.reporter.reports, 1);
  EXPECT_EQ(r2.records.size(), 1u);
}

TEST_F(LogTest, ZerosRunningOverManyBlocksToTheEndAreTheLogsEnd) {
  // A memory-mapped WAL's allocated window past its data, left by a crash:
  // from inside the first block through several whole ones.
  Write("foo");
  Write(BigString("bar", 3 * kBlockSize / 2));
  Write("baz");
  for (size_t tail : {size_t{0}, size_t{1}, size_t{7}, kBlockSize, 3 * kBlockSize + 5}) {
    SCOPED_TRACE(tail);
    const std::string c = Contents() +
                          std::string(kBlockSize - Contents().size() % kBlockSize, '\0') +
                          std::string(tail, '\0');
    ReadResult r;
    ReadAll(c, 0, true, &r);
    EXPECT_EQ(r.reporter.reports, 0);
    ASSERT_EQ(r.records.size(), 3u);
    EXPECT_EQ(r.records[2], "baz");
  }
}

// A memory-mapped writer killed in the middle of copying its last record
// (it stores a record's first 8 bytes first and its last 8 last): a prefix
// of the header, or the header and part of the payload but not its last 8
// bytes, then zeros to the end of the file. A torn tail, not a corruption;
// a damaged record whose payload does not end in 8 zeros still is one.
TEST_F(LogTest, RecordTornByAKilledMappedWriterIsTheLogsEnd) {
  Write("foo");
  const size_t start = Contents().size();
  Write(std::string(1000, 'x'));
  const std::string full = Contents();
  for (size_t kept : {size_t{2}, size_t{4}, size_t{7}, size_t{8}, size_t{500}, size_t{999}}) {
    SCOPED_TRACE(kept);
    std::string c = full.substr(0, start + kept) + std::string(full.size() - start - kept, '\0') +
                    std::string(kBlockSize, '\0');
    ReadResult r;
    ReadAll(c, 0, true, &r);
    EXPECT_EQ(r.reporter.reports, 0);
    ASSERT_EQ(r.records.size(), 1u);
    EXPECT_EQ(r.records[0], "foo");
  }
  // A flipped payload byte, zeros after the record: the payload ends in
  // 'x', so this is damage, reported.
  std::string c = full + std::string(kBlockSize, '\0');
  c[start + 100] ^= 1;
  ReadResult r;
  ReadAll(c, 0, true, &r);
  EXPECT_EQ(r.reporter.reports, 1);
  EXPECT_EQ(r.records.size(), 1u);
}

TEST_F(LogTest, ZerosFollowedByDataAreOneReportedLoss) {
  Write("foo");
  std::string c = Contents();
  // Zeros from the end of "foo" through two whole blocks, then a block
  // that starts with a record.
  c += std::string(3 * kBlockSize - c.size(), '\0');
  // "qux" as a fresh log's first block holds it.
  std::string later;
  {
    std::unique_ptr<WritableFile> f;
    ASSERT_TRUE(env_->NewWritableFile("/wal/other", &f).ok());
    Writer w(f.get());
    ASSERT_TRUE(w.AddRecord("qux").ok());
    ASSERT_TRUE(f->Close().ok());
    ASSERT_TRUE(ReadFileToString(env_.get(), "/wal/other", &later).ok());
  }
  ReadResult r;
  ReadAll(c + later, 0, true, &r);
  EXPECT_EQ(r.reporter.reports, 1);
  EXPECT_EQ(r.reporter.dropped_bytes, 3 * kBlockSize - (kHeaderSize + 3));
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[0], "foo");
  EXPECT_EQ(r.records[1], "qux");

  // Non-zero bytes later in the zeros' own block: that block's rest is lost,
  // the next block is read.
  std::string d = Contents();
  d += std::string(100, '\0') + "x";
  d += std::string(kBlockSize - d.size(), '\0') + later;
  ReadResult r2;
  ReadAll(d, 0, true, &r2);
  EXPECT_EQ(r2.reporter.reports, 1);
  ASSERT_EQ(r2.records.size(), 2u);
  EXPECT_EQ(r2.records[1], "qux");
}

TEST_F(LogTest, FlippedBytesAreReportedOrOnlyLoseTheTail) {
  Random rnd(test::TestSeed());
  for (int i = 0; i < 60; i++) Write(test::RandomString(&rnd, rnd.Skewed(12)));
  Write(BigString("spanning", 2 * kBlockSize));
  for (int i = 0; i < 20; i++) Write(test::RandomString(&rnd, rnd.Skewed(10)));
  const std::string full = Contents();
  ReadResult whole;
  ReadAll(full, 0, true, &whole);
  ASSERT_EQ(whole.records, written_);

  // Payload byte positions of every fragment (not headers, not padding).
  std::vector<bool> is_payload(full.size(), false);
  for (uint64_t block = 0; block < full.size(); block += kBlockSize) {
    uint64_t p = block;
    while (p + kHeaderSize <= std::min<uint64_t>(block + kBlockSize, full.size())) {
      const size_t len =
          static_cast<unsigned char>(full[p + 4]) | (static_cast<unsigned char>(full[p + 5]) << 8);
      for (size_t k = 0; k < len; k++) is_payload[p + kHeaderSize + k] = true;
      p += kHeaderSize + len;
    }
  }

  for (int trial = 0; trial < 1500; trial++) {
    const size_t pos = rnd.Uniform(full.size());
    std::string damaged = full;
    damaged[pos] ^= static_cast<char>(1 + rnd.Uniform(255));
    ReadResult r;
    ReadAll(damaged, 0, true, &r);
    // Records come back in order, each one an original record.
    size_t j = 0;
    for (const std::string& rec : r.records) {
      while (j < written_.size() && written_[j] != rec) j++;
      ASSERT_LT(j, written_.size()) << "unknown record after flip at " << pos;
      j++;
    }
    if (is_payload[pos]) {
      EXPECT_GE(r.reporter.reports, 1) << "payload flip at " << pos << " not reported";
    }
    if (r.reporter.reports == 0) {
      // Silent damage may only cut the log short (a length pointing past the
      // end of the file looks like a torn tail), never drop a middle record.
      ASSERT_LE(r.records.size(), written_.size());
      for (size_t k = 0; k < r.records.size(); k++) {
        ASSERT_EQ(r.records[k], written_[k]) << "flip at " << pos;
      }
      EXPECT_GE(pos, full.size() - full.size() % kBlockSize) << "silent loss outside last block";
    }
  }
}

TEST_F(LogTest, RandomGarbageNeverCrashes) {
  Random rnd(test::TestSeed());
  for (int i = 0; i < 3000; i++) {
    const std::string junk = test::RandomString(&rnd, rnd.Skewed(17));
    ReadResult r;
    ReadAll(junk, rnd.OneIn(4) ? rnd.Uniform(junk.size() + 1) : 0, rnd.OneIn(2), &r);
    for (const std::string& rec : r.records) EXPECT_LE(rec.size(), junk.size());
  }
}

TEST_F(LogTest, RandomValidlyChecksummedFragmentsNeverCrash) {
  // Headers with correct checksums but random types and lengths drive the
  // fragment state machine through every transition.
  Random rnd(test::TestSeed());
  for (int i = 0; i < 2000; i++) {
    std::string c;
    const int n = static_cast<int>(rnd.Uniform(40));
    for (int k = 0; k < n; k++) {
      const size_t room = kBlockSize - c.size() % kBlockSize;
      if (room < kHeaderSize) {
        c.append(room, '\0');
        continue;
      }
      const size_t len = std::min<size_t>(rnd.Skewed(15), room - kHeaderSize);
      const std::string typed =
          std::string(1, static_cast<char>(rnd.Uniform(8))) + test::RandomString(&rnd, len);
      char header[kHeaderSize];
      EncodeFixed32(header, crc32c::Mask(crc32c::Value(typed.data(), typed.size())));
      header[4] = static_cast<char>(len & 0xff);
      header[5] = static_cast<char>(len >> 8);
      header[6] = typed[0];
      c.append(header, kHeaderSize);
      c.append(typed.data() + 1, len);
    }
    if (rnd.OneIn(3) && !c.empty()) c.resize(rnd.Uniform(c.size()));
    ReadResult r;
    ReadAll(c, rnd.OneIn(4) ? rnd.Uniform(c.size() + 1) : 0, true, &r);
    for (const std::string& rec : r.records) EXPECT_LE(rec.size(), c.size());
  }
}

TEST_F(LogTest, InitialOffsetSkipsEarlierRecords) {
  Write("a");
  Write(BigString("b", kBlockSize + 1000));  // spans blocks 0..1
  Write(BigString("c", 2 * kBlockSize));     // spans blocks 1..3
  Write("d");
  Write(BigString("e", kBlockSize - 3));
  Write("f");
  const std::string full = Contents();
  ReadResult whole;
  ReadAll(full, 0, true, &whole);
  ASSERT_EQ(whole.records, written_);

  for (size_t i = 0; i < written_.size(); i++) {
    // Starting exactly at record i yields records i.. with their offsets.
    ReadResult at;
    ReadAll(full, whole.offsets[i], true, &at);
    EXPECT_EQ(at.reporter.reports, 0) << "record " << i;
    ASSERT_EQ(at.records.size(), written_.size() - i) << "record " << i;
    for (size_t k = 0; k < at.records.size(); k++) {
      EXPECT_EQ(at.records[k], written_[i + k]);
      EXPECT_EQ(at.offsets[k], whole.offsets[i + k]);
    }
    // One byte later: record i is skipped.
    ReadResult after;
    ReadAll(full, whole.offsets[i] + 1, true, &after);
    EXPECT_EQ(after.reporter.reports, 0) << "record " << i;
    ASSERT_EQ(after.records.size(), written_.size() - i - 1) << "record " << i;
    if (!after.records.empty()) {
      EXPECT_EQ(after.records[0], written_[i + 1]);
    }
  }
  ReadResult past;
  ReadAll(full, full.size() + 10, true, &past);
  EXPECT_TRUE(past.records.empty());
  EXPECT_EQ(past.reporter.reports, 0);
}

TEST_F(LogTest, ReadErrorIsReported) {
  Write("foo");
  Write("bar");
  ASSERT_TRUE(dest_->Flush().ok());
  FaultInjectionEnv fenv(env_.get());
  std::unique_ptr<SequentialFile> file;
  ASSERT_TRUE(fenv.NewSequentialFile(kFile, &file).ok());
  fenv.SetFailure(FaultKind::kRead, 0, /*one_shot=*/true);
  CountingReporter reporter;
  Reader reader(file.get(), &reporter, true, 0);
  std::string scratch;
  Slice record;
  EXPECT_FALSE(reader.ReadRecord(&record, &scratch));
  EXPECT_EQ(reporter.reports, 1);
  EXPECT_TRUE(reporter.last.IsIOError());
}

TEST_F(LogTest, WriteErrorIsReturned) {
  FaultInjectionEnv fenv(env_.get());
  std::unique_ptr<WritableFile> file;
  ASSERT_TRUE(fenv.NewWritableFile("/wal/000002.log", &file).ok());
  Writer writer(file.get());
  ASSERT_TRUE(writer.AddRecord("ok").ok());
  fenv.SetFailure(FaultKind::kWrite, 0, /*one_shot=*/false);
  EXPECT_TRUE(writer.AddRecord("small").IsIOError());
  EXPECT_TRUE(writer.AddRecord(BigString("big", 3 * kBlockSize)).IsIOError());
}

}  // namespace
}  // namespace accelkv::log
