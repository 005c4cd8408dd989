#include "table/format.h"

#include <cstring>

#include "util/coding.h"
#include "util/crc32c.h"

namespace accelkv {

void BlockHandle::EncodeTo(std::string* dst) const {
  PutFixed64(dst, offset);
  PutFixed64(dst, size);
}

void BlockHandle::EncodeTo(char* dst) const {
  EncodeFixed64(dst, offset);
  EncodeFixed64(dst + 8, size);
}

Status BlockHandle::DecodeFrom(Slice* input) {
  if (input->size() < kEncodedLength) return Status::Corruption("truncated block handle");
  offset = DecodeFixed64(input->data());
  size = DecodeFixed64(input->data() + 8);
  input->remove_prefix(kEncodedLength);
  return Status::OK();
}

void Footer::EncodeTo(std::string* dst) const {
  const size_t start = dst->size();
  index_handle.EncodeTo(dst);
  filter_handle.EncodeTo(dst);
  properties_handle.EncodeTo(dst);
  PutFixed32(dst, kFormatVersion);
  PutFixed32(dst, crc32c::Mask(crc32c::Value(dst->data() + start, 52)));
  PutFixed64(dst, kMagic);
}

namespace {

// True when [h.offset, h.offset + h.size + trailer) lies inside [0, limit).
bool HandleWithin(const BlockHandle& h, uint64_t limit) {
  if (h.offset > limit) return false;
  const uint64_t room = limit - h.offset;
  return h.size <= room && room - h.size >= kBlockTrailerSize;
}

}  // namespace

Status Footer::DecodeFrom(const Slice& input, uint64_t file_size) {
  if (input.size() != kEncodedLength) return Status::Corruption("bad footer size");
  const char* p = input.data();
  if (DecodeFixed64(p + 56) != kMagic) return Status::Corruption("not a table file (bad magic)");
  if (DecodeFixed32(p + 48) != kFormatVersion) {
    return Status::Corruption("unsupported table format version");
  }
  const uint32_t crc = crc32c::Unmask(DecodeFixed32(p + 52));
  if (crc != crc32c::Value(p, 52)) return Status::Corruption("footer checksum mismatch");
  Slice in(p, 48);
  Status s = index_handle.DecodeFrom(&in);
  if (s.ok()) s = filter_handle.DecodeFrom(&in);
  if (s.ok()) s = properties_handle.DecodeFrom(&in);
  if (!s.ok()) return s;
  if (file_size != 0) {
    if (file_size < kEncodedLength) return Status::Corruption("table file too short");
    const uint64_t limit = file_size - kEncodedLength;
    if (!HandleWithin(index_handle, limit) || !HandleWithin(properties_handle, limit) ||
        (filter_handle.size != 0 && !HandleWithin(filter_handle, limit)) ||
        (filter_handle.size == 0 && filter_handle.offset != 0)) {
      return Status::Corruption("footer block handle outside the file");
    }
  }
  return Status::OK();
}

Status ReadFooter(const RandomAccessFile& file, uint64_t file_size, Footer* footer,
                  bool* file_in_memory) {
  if (file_size < Footer::kEncodedLength) return Status::Corruption("table file too short");
  char footer_space[Footer::kEncodedLength];
  Slice input;
  Status s =
      file.Read(file_size - Footer::kEncodedLength, Footer::kEncodedLength, &input, footer_space);
  if (!s.ok()) return s;
  if (input.size() != Footer::kEncodedLength) return Status::Corruption("truncated table footer");
  if (file_in_memory != nullptr) *file_in_memory = input.data() != footer_space;
  return footer->DecodeFrom(input, file_size);
}

void AppendBlockTrailer(const Slice& contents, std::string* dst) {
  const char type = 0;  // CompressionType::kNone
  uint32_t crc = crc32c::Value(contents.data(), contents.size());
  crc = crc32c::Extend(crc, &type, 1);
  dst->push_back(type);
  PutFixed32(dst, crc32c::Mask(crc));
}

namespace {

// Blocks up to this size (with trailer) are read into a stack buffer when
// the file is expected to return its own memory.
constexpr size_t kStackBufferSize = 8192;

}  // namespace

Status CheckBlockTrailer(const char* data, size_t n, bool verify_checksum) {
  if (verify_checksum) {
    const uint32_t expected = crc32c::Unmask(DecodeFixed32(data + n + 1));
    const uint32_t actual = crc32c::Value(data, n + 1);
    if (actual != expected) return Status::Corruption("block checksum mismatch");
  }
  if (data[n] != 0) return Status::Corruption("unsupported compression");
  return Status::OK();
}

Status ReadBlock(const RandomAccessFile& file, const BlockHandle& handle, BlockContents* result,
                 const ReadBlockOptions& options) {
  if (handle.size > (uint64_t{1} << 32)) return Status::Corruption("block handle too large");
  const size_t n = static_cast<size_t>(handle.size);
  const size_t len = n + kBlockTrailerSize;
  char stack_buf[kStackBufferSize];
  std::unique_ptr<char[]> heap_buf;
  char* scratch = stack_buf;
  if (!options.file_returns_own_memory || len > kStackBufferSize) {
    heap_buf.reset(new char[len]);
    scratch = heap_buf.get();
  }
  Slice contents;
  Status s = file.Read(handle.offset, len, &contents, scratch);
  if (!s.ok()) return s;
  if (contents.size() != len) return Status::Corruption("truncated block read");
  s = CheckBlockTrailer(contents.data(), n, options.verify_checksum);
  if (!s.ok()) return s;
  result->size = n;
  if (contents.data() != scratch) {  // the file's own memory: borrow it
    result->data.reset();
    result->unowned_data = contents.data();
    return Status::OK();
  }
  if (heap_buf == nullptr) {  // read into the stack buffer after all
    heap_buf.reset(new char[len]);
    std::memcpy(heap_buf.get(), stack_buf, n);
  }
  result->data = std::move(heap_buf);
  result->unowned_data = nullptr;
  return Status::OK();
}

}  // namespace accelkv
