#include "accelkv/write_batch.h"

#include <memory>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "memtable/memtable.h"
#include "memtable/write_batch_internal.h"
#include "testutil/test_util.h"
#include "util/coding.h"
#include "util/random.h"

namespace accelkv {
namespace {

// Records the operations a batch replays.
class Recorder final : public WriteBatch::Handler {
 public:
  void Put(const Slice& key, const Slice& value) override {
    ops += "Put(" + key.ToString() + ", " + value.ToString() + ")";
  }
  void Delete(const Slice& key) override { ops += "Delete(" + key.ToString() + ")"; }
  std::string ops;
};

std::string Ops(const WriteBatch& b) {
  Recorder r;
  Status s = b.Iterate(&r);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return r.ops;
}

// Owns one reference to a fresh memtable.
class MemTableRef {
 public:
  MemTableRef() : icmp_(BytewiseComparator()), mem_(new MemTable(icmp_)) { mem_->Ref(); }
  ~MemTableRef() { mem_->Unref(); }
  MemTable* get() const { return mem_; }

  // The memtable's entries in internal-key order: "Put(k, v)@seq" / "Delete(k)@seq".
  std::string Contents() const {
    std::string out;
    std::unique_ptr<Iterator> it(mem_->NewIterator());
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ParsedInternalKey ikey;
      EXPECT_TRUE(ParseInternalKey(it->key(), &ikey));
      if (ikey.type == ValueType::kValue) {
        out += "Put(" + ikey.user_key.ToString() + ", " + it->value().ToString() + ")";
      } else {
        out += "Delete(" + ikey.user_key.ToString() + ")";
      }
      out += "@" + std::to_string(ikey.sequence);
    }
    return out;
  }

 private:
  InternalKeyComparator icmp_;
  MemTable* mem_;
};

std::string Hex(const std::string& s) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0xf]);
  }
  return out;
}

TEST(WriteBatchTest, Empty) {
  WriteBatch b;
  EXPECT_EQ(0u, b.Count());
  EXPECT_EQ(WriteBatchInternal::kHeaderSize, b.ApproximateSize());
  EXPECT_EQ(WriteBatchInternal::kHeaderSize, WriteBatchInternal::ByteSize(&b));
  EXPECT_EQ(std::string(12, '\0'), b.Rep());
  EXPECT_EQ(0u, WriteBatchInternal::Sequence(&b));
  EXPECT_EQ("", Ops(b));
  MemTableRef mem;
  ASSERT_TRUE(WriteBatchInternal::InsertInto(&b, mem.get()).ok());
  EXPECT_EQ(0u, mem.get()->NumEntries());
}

// The example of docs/format/write_batch.md, byte for byte.
TEST(WriteBatchTest, ExactLayoutMatchesTheFormatDoc) {
  WriteBatch b;
  b.Put("k1", "v");
  b.Delete("k2");
  WriteBatchInternal::SetSequence(&b, 0x0102);
  EXPECT_EQ(
      "0201000000000000"  // sequence 0x102
      "02000000"          // count 2
      "01026b310176"      // Put: tag 01, varint 02, "k1", varint 01, "v"
      "00026b32",         // Delete: tag 00, varint 02, "k2"
      Hex(b.Rep()));
  EXPECT_EQ(0x0102u, WriteBatchInternal::Sequence(&b));
  EXPECT_EQ(2u, WriteBatchInternal::Count(&b));
}

TEST(WriteBatchTest, PutDeleteIterateAndInsertInto) {
  WriteBatch b;
  b.Put("foo", "bar");
  b.Delete("box");
  b.Put("baz", "boo");
  b.Put("", "");  // empty key and value
  WriteBatchInternal::SetSequence(&b, 100);
  EXPECT_EQ(100u, WriteBatchInternal::Sequence(&b));
  EXPECT_EQ(4u, b.Count());
  EXPECT_EQ("Put(foo, bar)Delete(box)Put(baz, boo)Put(, )", Ops(b));

  MemTableRef mem;
  ASSERT_TRUE(WriteBatchInternal::InsertInto(&b, mem.get()).ok());
  EXPECT_EQ("Put(, )@103Put(baz, boo)@102Delete(box)@101Put(foo, bar)@100", mem.Contents());
  EXPECT_EQ(4u, mem.get()->NumEntries());
  EXPECT_EQ(1u, mem.get()->NumDeletions());
}

TEST(WriteBatchTest, SameKeyTwiceGetsTwoSequences) {
  WriteBatch b;
  b.Put("k", "old");
  b.Put("k", "new");
  WriteBatchInternal::SetSequence(&b, 7);
  MemTableRef mem;
  ASSERT_TRUE(WriteBatchInternal::InsertInto(&b, mem.get()).ok());
  EXPECT_EQ("Put(k, new)@8Put(k, old)@7", mem.Contents());
  std::string value;
  Status s;
  ASSERT_TRUE(mem.get()->Get(LookupKey("k", 100), &value, &s));
  EXPECT_EQ("new", value);
}

TEST(WriteBatchTest, Append) {
  WriteBatch b1;
  WriteBatch b2;
  WriteBatchInternal::SetSequence(&b1, 200);
  WriteBatchInternal::SetSequence(&b2, 300);
  b1.Append(b2);
  EXPECT_EQ("", Ops(b1));
  EXPECT_EQ(0u, b1.Count());
  b2.Put("a", "va");
  b1.Append(b2);
  EXPECT_EQ("Put(a, va)", Ops(b1));
  EXPECT_EQ(1u, b1.Count());
  b2.Clear();
  b2.Put("b", "vb");
  b1.Append(b2);
  EXPECT_EQ("Put(a, va)Put(b, vb)", Ops(b1));
  EXPECT_EQ(2u, b1.Count());
  b2.Delete("foo");
  WriteBatchInternal::Append(&b1, &b2);
  EXPECT_EQ("Put(a, va)Put(b, vb)Put(b, vb)Delete(foo)", Ops(b1));
  EXPECT_EQ(4u, b1.Count());
  EXPECT_EQ(200u, WriteBatchInternal::Sequence(&b1));  // dst keeps its sequence

  // Appending a batch to itself doubles it.
  b1.Append(b1);
  EXPECT_EQ(8u, b1.Count());
  EXPECT_EQ("Put(a, va)Put(b, vb)Put(b, vb)Delete(foo)Put(a, va)Put(b, vb)Put(b, vb)Delete(foo)",
            Ops(b1));
}

TEST(WriteBatchTest, ClearCopyAndMove) {
  WriteBatch b;
  b.Put("x", "y");
  WriteBatchInternal::SetSequence(&b, 9);
  WriteBatch copy = b;
  b.Clear();
  EXPECT_EQ(0u, b.Count());
  EXPECT_EQ(std::string(12, '\0'), b.Rep());
  EXPECT_EQ("Put(x, y)", Ops(copy));
  EXPECT_EQ(9u, WriteBatchInternal::Sequence(&copy));

  WriteBatch moved = std::move(copy);
  EXPECT_EQ("Put(x, y)", Ops(moved));
  // A moved-from batch is usable (as an empty batch, whatever its bytes).
  copy.Clear();  // NOLINT(bugprone-use-after-move)
  copy.Delete("z");
  EXPECT_EQ("Delete(z)", Ops(copy));
  EXPECT_EQ(1u, copy.Count());
}

TEST(WriteBatchTest, SetContentsRoundTrip) {
  WriteBatch b;
  b.Put("key", std::string(1000, 'v'));  // a value length needing a 2-byte varint
  b.Delete(std::string(200, 'k'));
  WriteBatchInternal::SetSequence(&b, 42);
  WriteBatch c;
  ASSERT_TRUE(WriteBatchInternal::SetContents(&c, WriteBatchInternal::Contents(&b)).ok());
  EXPECT_EQ(b.Rep(), c.Rep());
  EXPECT_EQ(42u, WriteBatchInternal::Sequence(&c));
  EXPECT_EQ(2u, c.Count());
  EXPECT_EQ(Ops(b), Ops(c));

  // Shorter than the header: Corruption, batch unchanged.
  for (size_t n = 0; n < WriteBatchInternal::kHeaderSize; n++) {
    Status s = WriteBatchInternal::SetContents(&c, Slice(b.Rep().data(), n));
    EXPECT_TRUE(s.IsCorruption()) << n;
    EXPECT_EQ(b.Rep(), c.Rep());
  }
}

// Expects Corruption from both Iterate (with no handler call) and InsertInto
// into mem (with nothing inserted: mem stays empty).
void ExpectCorrupt(MemTable* mem, const std::string& contents, const std::string& what) {
  WriteBatch b;
  ASSERT_TRUE(WriteBatchInternal::SetContents(&b, contents).ok()) << what;
  Recorder r;
  Status s = b.Iterate(&r);
  EXPECT_TRUE(s.IsCorruption()) << what << ": " << s.ToString();
  EXPECT_EQ("", r.ops) << what;
  const size_t usage = mem->ApproximateMemoryUsage();
  s = WriteBatchInternal::InsertInto(&b, mem);
  EXPECT_TRUE(s.IsCorruption()) << what << ": " << s.ToString();
  EXPECT_EQ(0u, mem->NumEntries()) << what;
  EXPECT_EQ(usage, mem->ApproximateMemoryUsage()) << what;
}

TEST(WriteBatchTest, EveryTruncationIsCorruption) {
  MemTableRef mem;
  WriteBatch b;
  b.Put("first", "value one");
  b.Delete("second");
  b.Put(std::string(300, 'k'), std::string(200, 'v'));  // 2-byte varints
  b.Put("", "");
  const std::string& rep = b.Rep();
  ASSERT_EQ("Put(first, value one)Delete(second)Put(" + std::string(300, 'k') + ", " +
                std::string(200, 'v') + ")Put(, )",
            Ops(b));
  // Every strict prefix that still holds the header: either a record is cut
  // short, or the records end early and the count does not match.
  for (size_t n = WriteBatchInternal::kHeaderSize; n < rep.size(); n++) {
    ExpectCorrupt(mem.get(), rep.substr(0, n), "truncated to " + std::to_string(n));
  }
}

TEST(WriteBatchTest, CountMismatchIsCorruption) {
  MemTableRef mem;
  WriteBatch b;
  b.Put("a", "1");
  b.Put("b", "2");
  for (uint32_t count : {0u, 1u, 3u, 0xffffffffu}) {
    WriteBatch c = b;
    WriteBatchInternal::SetCount(&c, count);
    ExpectCorrupt(mem.get(), c.Rep(), "count " + std::to_string(count));
  }
  // A header claiming records but none present.
  WriteBatch empty;
  WriteBatchInternal::SetCount(&empty, 1);
  ExpectCorrupt(mem.get(), empty.Rep(), "count 1, no records");
}

TEST(WriteBatchTest, BadTagAndBadVarintAreCorruption) {
  MemTableRef mem;
  WriteBatch b;
  b.Put("a", "1");
  std::string rep = b.Rep();
  for (unsigned tag : {0x2u, 0x7fu, 0xffu}) {
    std::string bad = rep;
    bad[WriteBatchInternal::kHeaderSize] = static_cast<char>(tag);
    ExpectCorrupt(mem.get(), bad, "tag " + std::to_string(tag));
  }
  // A key length varint that never ends / overflows 32 bits.
  std::string bad = rep.substr(0, WriteBatchInternal::kHeaderSize);
  bad.push_back(static_cast<char>(ValueType::kValue));
  bad.append("\xff\xff\xff\xff\x7f", 5);
  bad.append("xx");
  ExpectCorrupt(mem.get(), bad, "overlong varint");
  // A key length beyond the end.
  bad = rep.substr(0, WriteBatchInternal::kHeaderSize);
  bad.push_back(static_cast<char>(ValueType::kDeletion));
  bad.append(
      "\x05"
      "abc");
  ExpectCorrupt(mem.get(), bad, "key past the end");
  // A good record followed by garbage: nothing of the good one is applied.
  bad = rep;
  bad.push_back('\x09');
  ExpectCorrupt(mem.get(), bad, "trailing garbage");
}

TEST(WriteBatchTest, SequenceOverflowIsCorruption) {
  WriteBatch b;
  b.Put("a", "1");
  b.Put("b", "2");
  WriteBatchInternal::SetSequence(&b, kMaxSequenceNumber);  // the second would overflow
  {
    MemTableRef mem;
    EXPECT_TRUE(WriteBatchInternal::InsertInto(&b, mem.get()).IsCorruption());
    EXPECT_EQ(0u, mem.get()->NumEntries());
  }
  WriteBatchInternal::SetSequence(&b, ~uint64_t{0});
  {
    MemTableRef mem;
    EXPECT_TRUE(WriteBatchInternal::InsertInto(&b, mem.get()).IsCorruption());
    EXPECT_EQ(0u, mem.get()->NumEntries());
  }
  // The largest sequences that fit are accepted.
  WriteBatchInternal::SetSequence(&b, kMaxSequenceNumber - 1);
  MemTableRef mem;
  ASSERT_TRUE(WriteBatchInternal::InsertInto(&b, mem.get()).ok());
  EXPECT_EQ("Put(a, 1)@" + std::to_string(kMaxSequenceNumber - 1) + "Put(b, 2)@" +
                std::to_string(kMaxSequenceNumber),
            mem.Contents());
}

// A batch of one record (one Put or one Delete: InsertInto parses it once)
// is applied with its type and sequence, and refused past the last
// sequence.
TEST(WriteBatchTest, SingleRecordBatches) {
  WriteBatch put;
  put.Put("k", "v");
  WriteBatchInternal::SetSequence(&put, 7);
  WriteBatch del;
  del.Delete("k");
  WriteBatchInternal::SetSequence(&del, 8);
  MemTableRef mem;
  ASSERT_TRUE(WriteBatchInternal::InsertInto(&put, mem.get()).ok());
  ASSERT_TRUE(WriteBatchInternal::InsertInto(&del, mem.get()).ok());
  EXPECT_EQ("Delete(k)@8Put(k, v)@7", mem.Contents());
  WriteBatchInternal::SetSequence(&put, kMaxSequenceNumber + 1);
  EXPECT_TRUE(WriteBatchInternal::InsertInto(&put, mem.get()).IsCorruption());
  WriteBatchInternal::SetSequence(&put, kMaxSequenceNumber);
  ASSERT_TRUE(WriteBatchInternal::InsertInto(&put, mem.get()).ok());
  EXPECT_EQ("Put(k, v)@" + std::to_string(kMaxSequenceNumber) + "Delete(k)@8Put(k, v)@7",
            mem.Contents());
}

// Random bytes and random corruptions of valid batches never crash; what is
// accepted is applied whole.
TEST(WriteBatchTest, RandomBytesNeverCrash) {
  const uint64_t seed = test::TestSeed();
  Random rnd(seed);
  WriteBatch valid;
  for (int i = 0; i < 8; i++) {
    if (rnd.OneIn(3)) {
      valid.Delete(test::RandomString(&rnd, rnd.Uniform(20)));
    } else {
      valid.Put(test::RandomString(&rnd, rnd.Uniform(20)), test::RandomString(&rnd, rnd.Skewed(8)));
    }
  }
  int accepted = 0;
  // One memtable for all: each batch gets fresh sequences, so accepted
  // entries never collide, and rejected batches must add nothing.
  MemTableRef mem;
  SequenceNumber next_sequence = 1;
  for (int iter = 0; iter < 4000; iter++) {
    std::string contents;
    if (iter % 2 == 0) {
      contents = test::RandomString(&rnd, WriteBatchInternal::kHeaderSize + rnd.Skewed(7));
      if (rnd.OneIn(2)) EncodeFixed32(contents.data() + 8, static_cast<uint32_t>(rnd.Uniform(4)));
    } else {
      contents = valid.Rep();
      const int flips = 1 + static_cast<int>(rnd.Uniform(3));
      for (int f = 0; f < flips; f++) {
        contents[rnd.Uniform(contents.size())] ^= static_cast<char>(1u << rnd.Uniform(8));
      }
      if (rnd.OneIn(4))
        contents.resize(WriteBatchInternal::kHeaderSize + rnd.Uniform(contents.size() - 11));
    }
    // Fresh, in-range sequences, so well-formed batches are accepted.
    EncodeFixed64(contents.data(), next_sequence);
    WriteBatch b;
    ASSERT_TRUE(WriteBatchInternal::SetContents(&b, contents).ok());
    Recorder r;
    const Status iterate = b.Iterate(&r);
    const uint64_t entries_before = mem.get()->NumEntries();
    const Status insert = WriteBatchInternal::InsertInto(&b, mem.get());
    ASSERT_EQ(iterate.ok(), insert.ok()) << iterate.ToString() << " / " << insert.ToString();
    if (insert.ok()) {
      accepted++;
      ASSERT_EQ(entries_before + b.Count(), mem.get()->NumEntries());
      next_sequence += b.Count();
    } else {
      EXPECT_TRUE(insert.IsCorruption()) << insert.ToString();
      EXPECT_EQ("", r.ops);
      ASSERT_EQ(entries_before, mem.get()->NumEntries());
    }
  }
  // Flips in values or in the sequence keep a batch valid.
  EXPECT_GT(accepted, 0);
}

}  // namespace
}  // namespace accelkv
