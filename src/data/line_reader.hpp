// Reads a corpus file, or a byte range of it that starts and ends at line boundaries (a shard), in blocks of
// whole lines, forever: at the end of the range it starts again from the range's start and says so, so the
// Tokenizer can mark the epoch boundary.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace fedavg::data {

class LineReader {
 public:
  // Throws core::Error naming the file if it cannot be opened or is empty.
  LineReader(std::string path, std::size_t block_bytes, std::int64_t max_line_bytes);

  // Replaces `out` with the next whole lines, about block_bytes of them (at least one line). Returns true when
  // the block ends the range (by default the file); the next call starts again at the range's start. Throws
  // core::Error("file:line: ...") for a line longer than max_line_bytes, or NUL bytes (binary content).
  bool next_block(std::string& out);

  const std::string& path() const { return path_; }
  std::int64_t epochs_completed() const { return epochs_; }
  // Line number (1-based) of the first line of the block last returned.
  std::int64_t block_first_line() const { return block_line_; }
  // Byte offset of the next block in the file (the read position a checkpoint records).
  std::int64_t position() const { return offset_; }
  // Continues from a recorded position: `offset` must be 0 or just after a line end; `epochs` passes done.
  // Throws core::Error if the offset lies outside the file or not at a line start.
  void seek(std::int64_t offset, std::int64_t epochs);
  // Reads the bytes [begin, end) from now on, from `begin`; both must be 0, the file size or just after a line
  // end (throws core::Error otherwise). The whole file is the range until this is called.
  void set_range(std::int64_t begin, std::int64_t end);
  std::int64_t size() const { return size_; }

 private:
  void rewind();
  void check_line_start(std::int64_t offset, const char* what);
  std::int64_t size_ = 0;
  std::int64_t range_begin_ = 0;
  std::int64_t range_end_ = 0;
  std::string path_;
  std::size_t block_bytes_;
  std::int64_t max_line_bytes_;
  std::ifstream in_;
  std::string carry_;        // bytes read past the last complete line
  std::int64_t offset_ = 0;  // file offset of carry_'s first byte
  std::int64_t next_line_ = 1;
  std::int64_t block_line_ = 1;
  std::int64_t epochs_ = 0;
};

}  // namespace fedavg::data
