#include "data/line_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"

namespace fedavg::data {

LineReader::LineReader(std::string path, std::size_t block_bytes, std::int64_t max_line_bytes)
    : path_(std::move(path)), block_bytes_(std::max<std::size_t>(block_bytes, 1)), max_line_bytes_(max_line_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path_, ec)) throw core::Error("corpus " + path_ + ": is a directory, not a file");
  in_.open(path_, std::ios::binary);
  if (!in_) throw core::Error("corpus " + path_ + ": cannot open: " + std::strerror(errno));
  in_.seekg(0, std::ios::end);
  size_ = static_cast<std::int64_t>(in_.tellg());
  if (size_ <= 0) throw core::Error("corpus " + path_ + ": the file is empty");
  in_.seekg(0);
  range_end_ = size_;
}

void LineReader::check_line_start(std::int64_t offset, const char* what) {
  if (offset == 0 || offset == size_) return;
  in_.clear();
  in_.seekg(offset - 1);
  if (in_.get() != '\n')
    throw core::Error("corpus " + path_ + ": " + what + " " + std::to_string(offset) +
                      " is not at a line start; was the corpus changed?");
}

void LineReader::set_range(std::int64_t begin, std::int64_t end) {
  if (begin < 0 || end > size_ || begin >= end)
    throw core::Error("corpus " + path_ + ": the byte range [" + std::to_string(begin) + ", " + std::to_string(end) +
                      ") lies outside the file (" + std::to_string(size_) + " bytes); was the corpus changed?");
  check_line_start(begin, "the shard start");
  check_line_start(end, "the shard end");
  range_begin_ = begin;
  range_end_ = end;
  in_.clear();
  in_.seekg(begin);
  carry_.clear();
  offset_ = begin;
  next_line_ = begin == 0 ? 1 : 0;  // unknown without a pass over the file before it
}

void LineReader::rewind() {
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
  check_line_start(offset, "the checkpoint's read position");
  in_.clear();
  in_.seekg(offset);
  carry_.clear();
  offset_ = offset;
  next_line_ = 0;  // unknown without a pass over the file; line numbers in messages count from here
  epochs_ = epochs;
}

bool LineReader::next_block(std::string& out) {
  out.clear();
  block_line_ = next_line_;
  std::string chunk(block_bytes_, '\0');
  std::size_t scan_from = 0;
  bool at_eof = false;
  for (;;) {
    // Cut after the last newline once the block is big enough.
    if (carry_.size() >= block_bytes_ || at_eof) {
      auto nl = carry_.rfind('\n');
      if (nl != std::string::npos || at_eof) {
        std::size_t cut = (at_eof && (nl == std::string::npos || carry_.size() < block_bytes_)) ? carry_.size()
                                                                                                : nl + 1;
        out.assign(carry_, 0, cut);
        carry_.erase(0, cut);
        break;
      }
    }
    if (!at_eof) {
      const auto left = static_cast<std::size_t>(range_end_ - offset_ - static_cast<std::int64_t>(carry_.size()));
      const std::size_t want = std::min(chunk.size(), left);
      in_.read(chunk.data(), static_cast<std::streamsize>(want));
      const auto got = static_cast<std::size_t>(in_.gcount());
      if (in_.bad()) throw core::Error("corpus " + path_ + ": read error: " + std::strerror(errno));
      if (std::memchr(chunk.data(), '\0', got) != nullptr) {
        const auto at = carry_.size() +
                        static_cast<std::size_t>(static_cast<const char*>(std::memchr(chunk.data(), '\0', got)) -
                                                 chunk.data());
        carry_.append(chunk, 0, got);
        const auto line = next_line_ +
                          std::count(carry_.begin(), carry_.begin() + static_cast<std::ptrdiff_t>(at), '\n');
        throw core::Error(path_ + ":" + std::to_string(line) +
                          ": binary content (NUL byte); a corpus must be UTF-8 text");
      }
      carry_.append(chunk, 0, got);
      at_eof = got < chunk.size();  // the range's end (or the file's, if it shrank) was reached
      // A line longer than the limit: no newline among the bytes gathered since the last cut.
      const auto nl = carry_.find('\n', scan_from);
      if (nl == std::string::npos && static_cast<std::int64_t>(carry_.size()) > max_line_bytes_)
        throw core::Error(path_ + ":" + std::to_string(next_line_ + std::count(carry_.begin(), carry_.end(), '\n')) +
                          ": line longer than " + std::to_string(max_line_bytes_) +
                          " bytes (max_line_bytes in cfg.json)");
      if (nl == std::string::npos) scan_from = carry_.size();
    }
  }
  offset_ += static_cast<std::int64_t>(out.size());
  next_line_ += std::count(out.begin(), out.end(), '\n');
  if (at_eof && carry_.empty()) {
    rewind();
    return true;
  }
  return false;
}

}  // namespace fedavg::data
