// Table file building blocks shared by the builder and the reader
// (docs/format/table.md): BlockHandle, Footer, the 5-byte block trailer and
// ReadBlock. All integers are little-endian and fixed width.
//
// Thread safety: plain values; ReadBlock is safe for concurrent use when the
// file's Read is (RandomAccessFile::Read always is).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "accelkv/env.h"
#include "accelkv/slice.h"
#include "accelkv/status.h"

namespace accelkv {

// 1-byte compression type + fixed32 masked CRC32C of (contents ++ type byte).
inline constexpr size_t kBlockTrailerSize = 5;

// Where a block lives: fixed64 offset + fixed64 size (size excludes the trailer).
struct BlockHandle {
  static constexpr size_t kEncodedLength = 16;
  uint64_t offset = 0;
  uint64_t size = 0;

  // Appends exactly kEncodedLength bytes.
  void EncodeTo(std::string* dst) const;
  // Writes exactly kEncodedLength bytes at dst.
  void EncodeTo(char* dst) const;
  // Corruption unless input holds at least kEncodedLength bytes; consumes them.
  Status DecodeFrom(Slice* input);
};

// The last kEncodedLength bytes of every table file.
struct Footer {
  static constexpr size_t kEncodedLength = 64;
  static constexpr uint32_t kFormatVersion = 2;  // 2: the compact block layout
  // Bytes 'A','C','E','L','K','T','B','L' read as a little-endian fixed64.
  static constexpr uint64_t kMagic = 0x4c42544b4c454341ull;

  BlockHandle index_handle;
  BlockHandle filter_handle;  // offset 0, size 0: no filter
  BlockHandle properties_handle;

  void EncodeTo(std::string* dst) const;
  // Checks magic, version and CRC; and, when file_size is not 0, that every
  // handle (plus its trailer) lies inside [0, file_size - kEncodedLength).
  // REQUIRES: input.size() == kEncodedLength
  Status DecodeFrom(const Slice& input, uint64_t file_size);
  // Where the data blocks end: the filter block's offset, or without a
  // filter the properties block's.
  uint64_t DataEnd() const {
    return filter_handle.size != 0 ? filter_handle.offset : properties_handle.offset;
  }
};

// Reads and decodes (Footer::DecodeFrom) the footer of a table file of
// file_size bytes. *file_in_memory (may be null): the file returned its own
// memory for it (an mmap'd file). Corruption for a file too short or
// truncated, or a bad footer; IOError from the file is passed through.
Status ReadFooter(const RandomAccessFile& file, uint64_t file_size, Footer* footer,
                  bool* file_in_memory = nullptr);

// Appends the trailer of `contents` (compression type 0) to dst.
void AppendBlockTrailer(const Slice& contents, std::string* dst);

// A block's bytes read from a file, trailer stripped: owned (`data`), or
// borrowed from a file that returned its own memory (`unowned_data`, e.g. an
// mmap'd file; valid while that file object lives, and `data` is empty).
struct BlockContents {
  std::unique_ptr<char[]> data;
  size_t size = 0;
  const char* unowned_data = nullptr;

  bool owned() const { return unowned_data == nullptr; }
  Slice slice() const { return Slice(unowned_data != nullptr ? unowned_data : data.get(), size); }
};

struct ReadBlockOptions {
  // Check the CRC32C of the block and its type byte. Default true.
  bool verify_checksum = true;
  // The file usually returns its own memory (it did for the footer): read
  // through a stack buffer instead of allocating one that would go unused,
  // and copy only if the file did fill the buffer (RocksDB's BlockFetcher
  // does the same for mmap reads).
  bool file_returns_own_memory = false;
};

// Checks the trailer of the block of n bytes at data (n + kBlockTrailerSize
// bytes readable): the masked CRC32C of contents ++ type (if verify_checksum)
// and the compression type. Corruption on a mismatch or a non-zero type.
Status CheckBlockTrailer(const char* data, size_t n, bool verify_checksum);

// Reads the block at handle (plus its trailer), checks the CRC32C (unless
// options say not to) and the compression type. The contents borrow the
// file's memory when the file returned it, and are copied otherwise.
// Corruption on a short read, a CRC mismatch or a non-zero compression type
// ("unsupported compression"); IOError from the file is passed through.
Status ReadBlock(const RandomAccessFile& file, const BlockHandle& handle, BlockContents* result,
                 const ReadBlockOptions& options = ReadBlockOptions());

}  // namespace accelkv
