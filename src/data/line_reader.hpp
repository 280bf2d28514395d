// Reads a corpus file, or a byte range of it that starts and ends at line boundaries (or, in a long line, word
// boundaries: a shard), in blocks of whole lines, forever: at the end of the range it starts again from the
// range's start and says so, so the Tokenizer can mark the epoch boundary. A line longer than max_line_bytes (text8 is
// one line of 100 MB) comes in pieces of at most max_line_bytes, each cut just after a space or other ASCII non-letter,
// so no word is cut and no more than max_line_bytes of one line is ever held. The file must not change while it is
// read (data::CorpusFile): each new pass, and each new range, checks that it has not.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

#include "data/corpus_file.hpp"

namespace fedavg::data {

// A byte a line may be cut after without cutting a word: ASCII that is not a letter. textpipe's tokenization rule
// splits words at every such byte, and no byte of a non-ASCII character is ASCII.
inline bool is_word_boundary(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u < 0x80 && !((u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z'));
}

class LineReader {
 public:
  // Throws core::CorpusError naming the file if it is not a regular file, cannot be opened or is empty.
  LineReader(std::string path, std::size_t block_bytes, std::int64_t max_line_bytes);

  // Replaces `out` with the next whole lines, about block_bytes of them (at least one line), or with the next
  // piece of a line longer than max_line_bytes: its longest start of at most max_line_bytes that ends in a word
  // boundary (is_word_boundary). Returns true when the block ends the range (by default the file); the next call
  // starts again at the range's start. Throws core::Error("file:line: ...") for NUL bytes (binary content) or a
  // word longer than max_line_bytes (that many bytes of a longer line without a word boundary), and
  // core::CorpusError when the file changed since it was opened (checked at the end of each pass, and where the
  // file ends before the range does).
  bool next_block(std::string& out);

  const std::string& path() const { return path_; }
  std::int64_t epochs_completed() const { return epochs_; }
  // Line number (1-based) of the first line of the block last returned.
  std::int64_t block_first_line() const { return block_line_; }
  // Byte offset of the next block in the file (the read position a checkpoint records).
  std::int64_t position() const { return offset_; }
  // Continues from a recorded position: `offset` must be 0, just after a line end or just after a word boundary
  // (where a piece of a long line starts); `epochs` passes done. Throws core::Error if the offset lies outside the
  // range or after a letter.
  void seek(std::int64_t offset, std::int64_t epochs);
  // Reads the bytes [begin, end) from now on, from `begin`; both must be 0, the file size or just after a line
  // end or a word boundary (throws core::Error otherwise; core::CorpusError if the file changed since it was
  // opened). The whole file is the range until this is called.
  void set_range(std::int64_t begin, std::int64_t end);
  std::int64_t size() const { return size_; }
  // Throws core::CorpusError naming the file and what changed unless it is as it was when opened.
  void check_unchanged() const { file_.check_unchanged(); }
  // Whether the bytes [begin, end) of the file hold a line end; reads them in bounded chunks, leaving the read
  // position as it was.
  bool line_end_within(std::int64_t begin, std::int64_t end) const;

 private:
  void rewind();
  // Throws unless `offset` is 0, the file size, or just after a line end or another word boundary.
  void check_cut(std::int64_t offset, const char* what);
  // The end of the next piece of the line that carry_ starts with (longer than max_line_bytes).
  std::size_t piece_end() const;
  // Appends the next at most block_bytes of the range to carry_ (`chunk`: the read buffer, sized on first use).
  // Returns true when the read reached the range's end. Throws core::Error for a read error or a NUL byte.
  bool read_chunk(std::string& chunk);
  // Moves carry_'s first `cut` bytes to `out`; when the range's end was reached and nothing is left, starts the
  // range again. Returns whether it did (next_block's answer).
  bool take_block(std::string& out, std::size_t cut, bool at_eof);
  std::int64_t size_ = 0;
  std::int64_t range_begin_ = 0;
  std::int64_t range_end_ = 0;
  std::string path_;
  CorpusFile file_;
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
