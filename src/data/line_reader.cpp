#include "data/line_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace fedavg::data {

namespace {

// Finds the line ends in a block being read (carry_), which only grows between scans: every line before tail() is
// at most max_line bytes; the line that starts at tail() is longer once long_line() is set, and scanning stops there.
class LineScan {
 public:
  explicit LineScan(std::size_t max_line) : max_line_(max_line) {}

  // Scans `text` from where the last call stopped.
  void scan(const std::string& text) {
    while (!long_line_) {
      const void* nl = std::memchr(text.data() + scanned_, '\n', text.size() - scanned_);
      const std::size_t end = nl == nullptr ? text.size()
                                            : static_cast<std::size_t>(static_cast<const char*>(nl) - text.data());
      long_line_ = end - tail_ > max_line_;
      if (nl == nullptr || long_line_) {
        scanned_ = end;
        return;
      }
      tail_ = scanned_ = end + 1;
    }
  }

  std::size_t tail() const { return tail_; }
  bool long_line() const { return long_line_; }

 private:
  std::size_t max_line_;
  std::size_t tail_ = 0;     // just after the last line end found (0: none)
  std::size_t scanned_ = 0;  // where the next scan starts
  bool long_line_ = false;
};

}  // namespace

LineReader::LineReader(std::string path, std::size_t block_bytes, std::int64_t max_line_bytes)
    : path_(std::move(path)),
      file_(path_),
      block_bytes_(std::max<std::size_t>(block_bytes, 1)),
      max_line_bytes_(max_line_bytes) {
  in_.open(path_, std::ios::binary);
  if (!in_) throw core::CorpusError("corpus " + path_ + ": cannot open: " + std::strerror(errno));
  size_ = file_.size();
  range_end_ = size_;
}

void LineReader::check_cut(std::int64_t offset, const char* what) {
  if (offset == 0 || offset == size_) return;
  in_.clear();
  in_.seekg(offset - 1);
  const int c = in_.get();
  if (c != std::ifstream::traits_type::eof() && is_word_boundary(static_cast<char>(c))) return;  // '\n' is one
  throw core::Error("corpus " + path_ + ": " + what + " " + std::to_string(offset) +
                    " is not at a line start or a word boundary; was the corpus changed?");
}

bool LineReader::line_end_within(std::int64_t begin, std::int64_t end) const {
  std::ifstream in(path_, std::ios::binary);
  in.seekg(begin);
  std::string chunk(std::size_t{1} << 16, '\0');
  for (std::int64_t at = begin; at < end && in;) {
    const auto want = static_cast<std::size_t>(std::min<std::int64_t>(end - at, std::int64_t{1} << 16));
    in.read(chunk.data(), static_cast<std::streamsize>(want));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (std::memchr(chunk.data(), '\n', got) != nullptr) return true;
    if (got < want) break;
    at += static_cast<std::int64_t>(got);
  }
  return false;
}

void LineReader::set_range(std::int64_t begin, std::int64_t end) {
  file_.check_unchanged();
  if (begin < 0 || end > size_ || begin >= end)
    throw core::Error("corpus " + path_ + ": the byte range [" + std::to_string(begin) + ", " + std::to_string(end) +
                      ") lies outside the file (" + std::to_string(size_) + " bytes); was the corpus changed?");
  check_cut(begin, "the shard start");
  check_cut(end, "the shard end");
  range_begin_ = begin;
  range_end_ = end;
  in_.clear();
  in_.seekg(begin);
  carry_.clear();
  offset_ = begin;
  next_line_ = begin == 0 ? 1 : 0;  // unknown without a pass over the file before it
}

void LineReader::rewind() {
  file_.check_unchanged();
  in_.clear();
  in_.seekg(range_begin_);
  carry_.clear();
  offset_ = range_begin_;
  next_line_ = range_begin_ == 0 ? 1 : 0;
  ++epochs_;
}

void LineReader::seek(std::int64_t offset, std::int64_t epochs) {
  if (offset < range_begin_ || offset >= range_end_)
    throw core::Error("corpus " + path_ + ": the checkpoint's read position " + std::to_string(offset) +
                      " lies outside the file (" + std::to_string(size_) + " bytes); was the corpus changed?");
  check_cut(offset, "the checkpoint's read position");
  in_.clear();
  in_.seekg(offset);
  carry_.clear();
  offset_ = offset;
  next_line_ = 0;  // unknown without a pass over the file; line numbers in messages count from here
  epochs_ = epochs;
}

std::size_t LineReader::piece_end() const {
  const auto limit = static_cast<std::size_t>(max_line_bytes_);
  for (std::size_t i = limit; i > 0; --i)
    if (is_word_boundary(carry_[i - 1])) return i;
  throw core::CorpusError(
      path_ + ":" + (next_line_ > 0 ? std::to_string(next_line_) : "byte " + std::to_string(offset_)) +
      ": a word longer than max_line_bytes (" + std::to_string(max_line_bytes_) +
      "): no space or other ASCII non-letter in the " + std::to_string(max_line_bytes_) + " bytes from byte " +
      std::to_string(offset_) + " to cut this long line at; is this text? (max_line_bytes in cfg.json)");
}

bool LineReader::next_block(std::string& out) {
  out.clear();
  block_line_ = next_line_;
  LineScan lines(static_cast<std::size_t>(max_line_bytes_));
  lines.scan(carry_);
  std::string chunk;
  bool at_eof = false;
  std::size_t cut = 0;
  for (;;) {
    if (lines.long_line()) {
      // A line longer than max_line_bytes: the whole lines before it first, then piece after piece of it.
      cut = lines.tail() > 0 ? lines.tail() : piece_end();
      break;
    }
    // Cut after the last line end once the block is big enough; at the range's end, take the rest.
    if (lines.tail() > 0 && carry_.size() >= block_bytes_) {
      cut = lines.tail();
      break;
    }
    if (at_eof) {
      cut = carry_.size();
      break;
    }
    at_eof = read_chunk(chunk);
    lines.scan(carry_);
  }
  return take_block(out, cut, at_eof);
}

bool LineReader::read_chunk(std::string& chunk) {
  if (chunk.empty()) chunk.resize(block_bytes_);
  const auto left = static_cast<std::size_t>(range_end_ - offset_ - static_cast<std::int64_t>(carry_.size()));
  const std::size_t want = std::min(chunk.size(), left);
  in_.read(chunk.data(), static_cast<std::streamsize>(want));
  const auto got = static_cast<std::size_t>(in_.gcount());
  if (in_.bad()) throw core::Error("corpus " + path_ + ": read error: " + std::strerror(errno));
  if (got < want) file_.check_unchanged();  // the file ends before the range does: it shrank
  if (const void* nul = std::memchr(chunk.data(), '\0', got); nul != nullptr) {
    const auto at = carry_.size() + static_cast<std::size_t>(static_cast<const char*>(nul) - chunk.data());
    carry_.append(chunk, 0, got);
    const auto line = next_line_ + std::count(carry_.begin(), carry_.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    throw core::CorpusError(path_ + ":" + std::to_string(line) +
                            ": binary content (NUL byte); a corpus must be UTF-8 text");
  }
  carry_.append(chunk, 0, got);
  return got < chunk.size();  // the range's end (or the file's, if it shrank) was reached
}

bool LineReader::take_block(std::string& out, std::size_t cut, bool at_eof) {
  out.assign(carry_, 0, cut);
  carry_.erase(0, cut);
  offset_ += static_cast<std::int64_t>(out.size());
  next_line_ += std::count(out.begin(), out.end(), '\n');
  if (at_eof && carry_.empty()) {
    rewind();
    return true;
  }
  return false;
}

}  // namespace fedavg::data
