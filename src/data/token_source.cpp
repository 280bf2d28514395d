#include "data/token_source.hpp"

#include <algorithm>
#include <utility>

#include "core/error.hpp"
#include "core/log.hpp"
#include "data/markers.hpp"
#include "data/utf8.hpp"

namespace fedavg::data {

TokenSource::TokenSource(Tokenize tokenize, const std::string& corpus, const core::Settings& s,
                         const core::RankInfo& me, const std::string& vocab_path, std::vector<std::int64_t> skip)
    : tokenize_(std::move(tokenize)),
      skip_(std::move(skip)),
      corpus_(corpus),
      me_(me),
      vocab_path_(vocab_path),
      reader_(corpus, static_cast<std::size_t>(s.text_block_bytes), s.max_line_bytes),
      cache_limit_(static_cast<std::size_t>(s.token_cache_mb) * (std::size_t{1} << 20) / sizeof(std::int32_t)) {
  caching_ = cache_limit_ > 0;
}

void TokenSource::seek(const core::ReadPosition& from) {
  reader_.seek(from.offset, from.passes);
  position_ = from;
  passes_ = from.passes;
  caching_ = caching_ && from.offset == 0;  // a cache must start at the top of the file
}

void TokenSource::blank_skipped_lines(std::int64_t start) {
  const auto end = start + static_cast<std::int64_t>(text_block_.size());
  auto first = std::lower_bound(skip_.begin(), skip_.end(), start);
  const auto last = std::lower_bound(first, skip_.end(), end);
  // Back to front, so the offsets still to do stay valid; each line keeps its line end (line numbers hold).
  for (auto it = last; it != first;) {
    const auto at = static_cast<std::size_t>(*--it - start);
    const auto line_end = text_block_.find('\n', at);
    text_block_.erase(at, line_end == std::string::npos ? std::string::npos : line_end - at);
  }
}

std::vector<std::int32_t> TokenSource::read_and_tokenize() {
  const std::int64_t start = reader_.position();
  const bool end_of_file = reader_.next_block(text_block_);
  if (!skip_.empty()) blank_skipped_lines(start);
  if (!warned_utf8_) {
    const auto bad = first_invalid_utf8(text_block_);
    if (bad != std::string::npos) {
      const auto line = reader_.block_first_line() +
                        std::count(text_block_.begin(), text_block_.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
      core::warn(me_, corpus_ + ":" + std::to_string(line) +
                          ": invalid UTF-8; such bytes are read as U+FFFD (not a letter), so they only split words "
                          "(warned once per file)");
      warned_utf8_ = true;
    }
  }
  std::vector<std::int32_t> ids;
  ids.reserve(text_block_.size() / 4 + 2);
  tokenize_(text_block_.data(), text_block_.size(), ids);
  for (auto id : ids) known_words_ += id >= 0;
  if (end_of_file) {
    if (known_words_ == 0)
      throw core::Error("corpus " + corpus_ + ": not one word of the file is in the vocabulary " + vocab_path_);
    ids.push_back(kEof);
  }
  position_ = {reader_.position(), reader_.epochs_completed()};
  if (caching_) {
    if (cache_.size() + ids.size() > cache_limit_) {
      caching_ = false;  // too big: keep tokenizing every pass
      gave_up_ = true;
      std::vector<std::int32_t>().swap(cache_);
      std::vector<Block>().swap(blocks_);
    } else {
      blocks_.push_back({cache_.size(), cache_.size() + ids.size(), position_});
      cache_.insert(cache_.end(), ids.begin(), ids.end());
    }
  }
  if (end_of_file) {
    passes_ = reader_.epochs_completed();
    if (caching_) replaying_ = true;  // the whole file is cached: no more Python
    else caching_ = cache_limit_ > 0 && !gave_up_;  // a pass resumed mid-file: cache the next, full one
  }
  return ids;
}

std::vector<std::int32_t> TokenSource::next() {
  if (!replaying_) return read_and_tokenize();
  const Block& b = blocks_[next_block_];
  std::vector<std::int32_t> ids(cache_.begin() + static_cast<std::ptrdiff_t>(b.begin),
                                cache_.begin() + static_cast<std::ptrdiff_t>(b.end));
  next_block_ = (next_block_ + 1) % blocks_.size();
  if (next_block_ == 0) ++passes_;
  position_ = {b.after.offset, passes_};
  return ids;
}

}  // namespace fedavg::data
