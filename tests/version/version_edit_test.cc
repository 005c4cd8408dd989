// VersionEdit encoding: round trip of every field, rejection of every
// truncation and of unknown tags, random bytes never crash.
#include "version/version_edit.h"

#include <gtest/gtest.h>

#include <string>

#include "testutil/test_util.h"
#include "util/coding.h"
#include "util/random.h"

namespace accelkv {
namespace {

FileMetaData MakeFile(uint64_t number, const std::string& smallest, const std::string& largest,
                      SequenceNumber lo, SequenceNumber hi) {
  FileMetaData f;
  f.number = number;
  f.file_size = 1000 * number + 17;
  f.smallest = InternalKey(smallest, lo, ValueType::kValue);
  f.largest = InternalKey(largest, hi, ValueType::kDeletion);
  f.smallest_seqno = lo;
  f.largest_seqno = hi;
  f.num_entries = 50 + number;
  f.num_deletions = 3;
  return f;
}

VersionEdit FullEdit() {
  VersionEdit edit;
  edit.SetComparatorName("accelkv.BytewiseComparator");
  edit.SetLogNumber(123456789012ull);
  edit.SetNextFile(kMaxSequenceNumber + 5);  // file numbers are plain uint64
  edit.SetLastSequence(kMaxSequenceNumber);
  edit.SetCompactPointer(1, InternalKey("pointer", 77, ValueType::kValue));
  edit.SetCompactPointer(6, InternalKey(std::string("\x00\xff", 2), 1, ValueType::kDeletion));
  edit.RemoveFile(0, 4);
  edit.RemoveFile(3, 1ull << 40);
  edit.AddFile(0, MakeFile(9, "a", "m", 10, 20));
  edit.AddFile(
      2, MakeFile(1ull << 33, std::string(300, 'k'), std::string(301, 'k'), 0, kMaxSequenceNumber));
  return edit;
}

void ExpectEqualEdits(const VersionEdit& a, const VersionEdit& b) {
  EXPECT_EQ(a.has_comparator(), b.has_comparator());
  EXPECT_EQ(a.comparator(), b.comparator());
  EXPECT_EQ(a.has_log_number(), b.has_log_number());
  EXPECT_EQ(a.log_number(), b.log_number());
  EXPECT_EQ(a.has_next_file_number(), b.has_next_file_number());
  EXPECT_EQ(a.next_file_number(), b.next_file_number());
  EXPECT_EQ(a.has_last_sequence(), b.has_last_sequence());
  EXPECT_EQ(a.last_sequence(), b.last_sequence());
  ASSERT_EQ(a.compact_pointers().size(), b.compact_pointers().size());
  for (size_t i = 0; i < a.compact_pointers().size(); i++) {
    EXPECT_EQ(a.compact_pointers()[i].first, b.compact_pointers()[i].first);
    EXPECT_EQ(a.compact_pointers()[i].second.Encode(), b.compact_pointers()[i].second.Encode());
  }
  EXPECT_EQ(a.deleted_files(), b.deleted_files());
  ASSERT_EQ(a.new_files().size(), b.new_files().size());
  for (size_t i = 0; i < a.new_files().size(); i++) {
    const auto& [la, fa] = a.new_files()[i];
    const auto& [lb, fb] = b.new_files()[i];
    EXPECT_EQ(la, lb);
    EXPECT_EQ(fa.number, fb.number);
    EXPECT_EQ(fa.file_size, fb.file_size);
    EXPECT_EQ(fa.smallest.Encode(), fb.smallest.Encode());
    EXPECT_EQ(fa.largest.Encode(), fb.largest.Encode());
    EXPECT_EQ(fa.smallest_seqno, fb.smallest_seqno);
    EXPECT_EQ(fa.largest_seqno, fb.largest_seqno);
    EXPECT_EQ(fa.num_entries, fb.num_entries);
    EXPECT_EQ(fa.num_deletions, fb.num_deletions);
  }
}

TEST(VersionEditTest, EmptyEditRoundTrip) {
  VersionEdit edit;
  std::string encoded;
  edit.EncodeTo(&encoded);
  EXPECT_TRUE(encoded.empty());
  VersionEdit decoded;
  decoded.SetLogNumber(5);  // DecodeFrom replaces everything
  ASSERT_TRUE(decoded.DecodeFrom(encoded).ok());
  ExpectEqualEdits(edit, decoded);
}

TEST(VersionEditTest, EveryFieldRoundTrips) {
  const VersionEdit edit = FullEdit();
  std::string encoded;
  edit.EncodeTo(&encoded);
  VersionEdit decoded;
  Status s = decoded.DecodeFrom(encoded);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ExpectEqualEdits(edit, decoded);
  // Re-encoding gives the same bytes.
  std::string again;
  decoded.EncodeTo(&again);
  EXPECT_EQ(encoded, again);
}

TEST(VersionEditTest, EncodingBytes) {
  // The example of docs/format/manifest.md.
  VersionEdit edit;
  edit.SetComparatorName("cmp");
  edit.SetLogNumber(5);
  edit.SetNextFile(300);
  edit.SetLastSequence(7);
  edit.RemoveFile(1, 4);
  FileMetaData f;
  f.number = 6;
  f.file_size = 1000;
  f.smallest = InternalKey("a", 1, ValueType::kValue);
  f.largest = InternalKey("b", 2, ValueType::kDeletion);
  f.smallest_seqno = 1;
  f.largest_seqno = 2;
  f.num_entries = 2;
  f.num_deletions = 1;
  edit.AddFile(0, f);
  std::string encoded;
  edit.EncodeTo(&encoded);
  const std::string expected = std::string(
      "\x01\x03"
      "cmp"                   // comparator
      "\x02\x05"              // log number 5
      "\x03\xac\x02"          // next file 300
      "\x04\x07"              // last sequence 7
      "\x06\x01\x04"          // remove L1 #4
      "\x07\x00\x06\xe8\x07"  // add L0 #6, 1000 bytes
      "\x09"
      "a\x01\x01\x00\x00\x00\x00\x00\x00"  // smallest a@1:put
      "\x09"
      "b\x00\x02\x00\x00\x00\x00\x00\x00"  // largest b@2:del
      "\x01\x02\x02\x01",                  // seqnos, entries, deletions
      44);
  EXPECT_EQ(encoded, expected);
}

TEST(VersionEditTest, EveryTruncationIsCorruption) {
  const VersionEdit edit = FullEdit();
  std::string encoded;
  edit.EncodeTo(&encoded);
  // Cutting at a field boundary yields a shorter valid edit; every other cut
  // must be rejected. Field boundaries are where a re-encoded prefix decodes.
  int accepted = 0;
  for (size_t n = 0; n < encoded.size(); n++) {
    VersionEdit decoded;
    Status s = decoded.DecodeFrom(Slice(encoded.data(), n));
    if (s.ok()) {
      accepted++;
      std::string again;
      decoded.EncodeTo(&again);
      EXPECT_EQ(again, encoded.substr(0, n)) << "cut at " << n;
    } else {
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    }
  }
  // One boundary per field: 4 counters, 2 pointers, 2 removals, 2 additions.
  EXPECT_EQ(accepted, 10);
}

TEST(VersionEditTest, UnknownTagIsCorruption) {
  std::string encoded;
  FullEdit().EncodeTo(&encoded);
  for (uint32_t tag : {0u, 8u, 9u, 100u, 1u << 20}) {
    std::string bad = encoded;
    PutVarint32(&bad, tag);
    PutVarint64(&bad, 1);
    VersionEdit decoded;
    EXPECT_TRUE(decoded.DecodeFrom(bad).IsCorruption()) << "tag " << tag;
  }
}

TEST(VersionEditTest, MalformedFieldsAreCorruption) {
  auto decode = [](const std::string& bytes) {
    VersionEdit e;
    return e.DecodeFrom(bytes);
  };
  // Level above kMaxEncodedLevel.
  std::string big_level;
  PutVarint32(&big_level, 6);
  PutVarint32(&big_level, kMaxEncodedLevel + 1);
  PutVarint64(&big_level, 1);
  EXPECT_TRUE(decode(big_level).IsCorruption());
  // Internal key shorter than its trailer.
  std::string short_key;
  PutVarint32(&short_key, 5);
  PutVarint32(&short_key, 1);
  PutLengthPrefixedSlice(&short_key, "abc");
  EXPECT_TRUE(decode(short_key).IsCorruption());
  // Length prefix running past the end.
  std::string long_name;
  PutVarint32(&long_name, 1);
  PutVarint32(&long_name, 1000);
  long_name += "short";
  EXPECT_TRUE(decode(long_name).IsCorruption());
  // Sequence above kMaxSequenceNumber.
  std::string big_seq;
  PutVarint32(&big_seq, 4);
  PutVarint64(&big_seq, kMaxSequenceNumber + 1);
  EXPECT_TRUE(decode(big_seq).IsCorruption());
  // smallest_seqno > largest_seqno.
  VersionEdit inverted;
  inverted.AddFile(1, MakeFile(3, "a", "b", 9, 4));
  std::string enc;
  inverted.EncodeTo(&enc);
  EXPECT_TRUE(decode(enc).IsCorruption());
  // A varint that never ends.
  EXPECT_TRUE(decode(std::string("\x02\xff\xff\xff", 4)).IsCorruption());
}

TEST(VersionEditTest, RandomBytesNeverCrash) {
  Random rnd(test::TestSeed());
  std::string valid;
  FullEdit().EncodeTo(&valid);
  for (int i = 0; i < 5000; i++) {
    std::string bytes;
    if (rnd.OneIn(2)) {
      bytes = test::RandomString(&rnd, rnd.Uniform(200));
    } else {
      bytes = valid;  // mutate a valid edit: more interesting paths
      for (int k = 0; k < 1 + static_cast<int>(rnd.Uniform(4)); k++) {
        bytes[rnd.Uniform(bytes.size())] = static_cast<char>(rnd.Next());
      }
    }
    VersionEdit decoded;
    Status s = decoded.DecodeFrom(bytes);
    if (s.ok()) {
      // Whatever decodes must re-encode and decode the same way.
      std::string again;
      decoded.EncodeTo(&again);
      VersionEdit twice;
      ASSERT_TRUE(twice.DecodeFrom(again).ok());
      ExpectEqualEdits(decoded, twice);
      (void)decoded.DebugString();
    } else {
      EXPECT_TRUE(s.IsCorruption());
    }
  }
}

TEST(VersionEditTest, DebugStringNamesEveryField) {
  const std::string d = FullEdit().DebugString();
  for (const char* part :
       {"Comparator: accelkv.BytewiseComparator", "LogNumber: 123456789012",
        "LastSeq:", "CompactPointer: L1 'pointer'@77:put", "CompactPointer: L6 '\\x00\\xff'@1:del",
        "RemoveFile: L3", "AddFile: L0 #9", "'a'@10:put .. 'm'@20:del"}) {
    EXPECT_NE(d.find(part), std::string::npos) << part << "\n" << d;
  }
}

}  // namespace
}  // namespace accelkv
