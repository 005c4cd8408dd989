#include "table/table_properties.h"

#include <cassert>
#include <cstring>

#include "table/block_builder.h"
#include "table/properties_block.h"
#include "table/property_names.h"
#include "util/coding.h"

namespace accelkv {

namespace {

// Property names, in bytewise order (the order they are stored in):
// table/property_names.h, which the GPU encoder shares.
const char* const kComparator = TablePropertyName(kPropertyComparator);
const char* const kDataBytes = TablePropertyName(kPropertyDataBytes);
const char* const kLargestKey = TablePropertyName(kPropertyLargestKey);
const char* const kLargestSeqno = TablePropertyName(kPropertyLargestSeqno);
const char* const kNumDataBlocks = TablePropertyName(kPropertyNumDataBlocks);
const char* const kNumDeletions = TablePropertyName(kPropertyNumDeletions);
const char* const kNumEntries = TablePropertyName(kPropertyNumEntries);
const char* const kRawKeyBytes = TablePropertyName(kPropertyRawKeyBytes);
const char* const kRawValueBytes = TablePropertyName(kPropertyRawValueBytes);
const char* const kSmallestKey = TablePropertyName(kPropertySmallestKey);
const char* const kSmallestSeqno = TablePropertyName(kPropertySmallestSeqno);

constexpr int kNumProperties = kNumTableProperties;

std::string Fixed64String(uint64_t v) {
  std::string s;
  PutFixed64(&s, v);
  return s;
}

std::string Escaped(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      static const char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

}  // namespace

std::string TableProperties::ToString() const {
  std::string r;
  auto line = [&r](const char* name, const std::string& value) {
    r.append(name);
    r.append(": ");
    r.append(value);
    r.push_back('\n');
  };
  line(kComparator, comparator_name);
  line(kDataBytes, std::to_string(data_bytes));
  line(kLargestKey, Escaped(largest_key));
  line(kLargestSeqno, std::to_string(largest_seqno));
  line(kNumDataBlocks, std::to_string(num_data_blocks));
  line(kNumDeletions, std::to_string(num_deletions));
  line(kNumEntries, std::to_string(num_entries));
  line(kRawKeyBytes, std::to_string(raw_key_bytes));
  line(kRawValueBytes, std::to_string(raw_value_bytes));
  line(kSmallestKey, Escaped(smallest_key));
  line(kSmallestSeqno, std::to_string(smallest_seqno));
  return r;
}

void EncodePropertiesBlock(const TableProperties& p, std::string* dst) {
  BlockBuilder b;
  b.Add(kComparator, p.comparator_name);
  b.Add(kDataBytes, Fixed64String(p.data_bytes));
  b.Add(kLargestKey, p.largest_key);
  b.Add(kLargestSeqno, Fixed64String(p.largest_seqno));
  b.Add(kNumDataBlocks, Fixed64String(p.num_data_blocks));
  b.Add(kNumDeletions, Fixed64String(p.num_deletions));
  b.Add(kNumEntries, Fixed64String(p.num_entries));
  b.Add(kRawKeyBytes, Fixed64String(p.raw_key_bytes));
  b.Add(kRawValueBytes, Fixed64String(p.raw_value_bytes));
  b.Add(kSmallestKey, p.smallest_key);
  b.Add(kSmallestSeqno, Fixed64String(p.smallest_seqno));
  const Slice contents = b.Finish();
  dst->append(contents.data(), contents.size());
}

uint64_t PropertiesBlockSize(uint64_t comparator_name_size, uint64_t smallest_key_size,
                             uint64_t largest_key_size) {
  // The names' part of the layout (prefix, key suffixes, key width) does not
  // depend on the values; take it from a block of the names and 8-byte values.
  static const BlockLayout names = [] {
    BlockLayoutTracker t;
    const std::string eight(8, '\0');
    for (const char* name :
         {kComparator, kDataBytes, kLargestKey, kLargestSeqno, kNumDataBlocks, kNumDeletions,
          kNumEntries, kRawKeyBytes, kRawValueBytes, kSmallestKey, kSmallestSeqno}) {
      t.Add(name, eight);
    }
    return t.Layout();
  }();
  BlockLayout l = names;
  l.value_bytes =
      8 * (kNumProperties - 3) + comparator_name_size + smallest_key_size + largest_key_size;
  const bool all_eight =
      comparator_name_size == 8 && smallest_key_size == 8 && largest_key_size == 8;
  l.value_width = all_eight ? 8 : BlockLayout::kVariable;
  l.ComputeSize();
  return l.size;
}

Status DecodePropertiesBlock(const Block& block, TableProperties* p) {
  struct Field {
    const char* name;
    uint64_t* number;  // or
    std::string* bytes;
  };
  const Field fields[kNumProperties] = {
      {kComparator, nullptr, &p->comparator_name},    {kDataBytes, &p->data_bytes, nullptr},
      {kLargestKey, nullptr, &p->largest_key},        {kLargestSeqno, &p->largest_seqno, nullptr},
      {kNumDataBlocks, &p->num_data_blocks, nullptr}, {kNumDeletions, &p->num_deletions, nullptr},
      {kNumEntries, &p->num_entries, nullptr},        {kRawKeyBytes, &p->raw_key_bytes, nullptr},
      {kRawValueBytes, &p->raw_value_bytes, nullptr}, {kSmallestKey, nullptr, &p->smallest_key},
      {kSmallestSeqno, &p->smallest_seqno, nullptr},
  };
  bool seen[kNumProperties] = {};
  std::string scratch;
  for (uint32_t i = 0; i < block.num_entries(); ++i) {
    const Slice name = block.key(i, &scratch);
    const Slice value = block.value(i);
    for (int f = 0; f < kNumProperties; ++f) {
      if (name != Slice(fields[f].name)) continue;
      if (fields[f].number != nullptr) {
        if (value.size() != 8) return Status::Corruption("bad table property size", name);
        *fields[f].number = DecodeFixed64(value.data());
      } else {
        fields[f].bytes->assign(value.data(), value.size());
      }
      seen[f] = true;
      break;
    }
  }
  for (int f = 0; f < kNumProperties; ++f) {
    if (!seen[f]) return Status::Corruption("missing table property", fields[f].name);
  }
  return Status::OK();
}

}  // namespace accelkv
