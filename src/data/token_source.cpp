#include "data/token_source.hpp"

#include <algorithm>
#include <iterator>
#include <tuple>
#include <utility>

#include "core/error.hpp"
#include "core/log.hpp"
#include "data/fingerprint.hpp"
#include "data/markers.hpp"
#include "data/utf8.hpp"

namespace fedavg::data {

TokenSource::TokenSource(Tokenize tokenize, const std::string& corpus, const core::Settings& s,
                         const core::RankInfo& me, const std::string& vocab_path, core::HeldOut skip,
                         TokenCacheSpec cache)
    : tokenize_(std::move(tokenize)),
      skip_(std::move(skip)),
      corpus_(corpus),
      me_(me),
      vocab_path_(vocab_path),
      reader_(corpus, static_cast<std::size_t>(s.text_block_bytes), s.max_line_bytes),
      cache_spec_(std::move(cache)),
      range_end_(reader_.size()) {
  if (cache_spec_.dir.empty()) return;
  Fingerprint f;
  f.add_file_summary(corpus_);
  for (const auto& p : cache_spec_.key_files) f.add_file(p);
  f.add(static_cast<std::int64_t>(skip_.lines.size()));
  for (const auto at : skip_.lines) f.add(at);
  if (!skip_.spans.empty()) f.add(static_cast<std::int64_t>(skip_.spans.size()));
  for (const auto& [begin, end] : skip_.spans) {
    f.add(begin);
    f.add(end);
  }
  f.add(static_cast<std::int64_t>(s.text_block_bytes));  // block boundaries: replays stay identical
  f.add(s.max_line_bytes);                               // and the pieces of long lines
  key_ = f.value();
}

void TokenSource::set_range(std::int64_t begin, std::int64_t end) {
  reader_.set_range(begin, end);
  in_held_line_ = inside_held_line(begin);
  range_begin_ = begin;
  range_end_ = end;
  offset_ = begin;
  passes_ = 0;
  replay_.reset();
  writer_.reset();
  known_words_ = 0;
}

bool TokenSource::inside_held_line(std::int64_t at) const {
  const auto& lines = skip_.lines;
  const auto after = std::lower_bound(lines.begin(), lines.end(), at);
  return after != lines.begin() && !reader_.line_end_within(*std::prev(after), at);
}

void TokenSource::seek(const core::ReadPosition& from) {
  reader_.seek(from.offset, from.passes);
  in_held_line_ = inside_held_line(from.offset);
  offset_ = from.offset;
  passes_ = from.passes;
  if (!cache_spec_.dir.empty()) open_cache(offset_);  // else tokenize the rest of this pass
}

bool TokenSource::open_cache(std::int64_t at) {
  auto cache = TokenCache::open(token_cache_path(cache_spec_.dir, key_, range_begin_, range_end_), key_, range_begin_,
                                range_end_);
  if (!cache) return false;
  const std::size_t first = cache->find(at);
  if (first == cache->blocks()) return false;
  if (!logged_replay_) core::note(me_, "replaying token cache " + cache->path().string());
  logged_replay_ = true;
  replay_ = std::move(cache);
  next_block_ = first;
  return true;
}

void TokenSource::drop_cache(const std::string& why) {
  core::warn(me_, why + "; going on without a token cache");
  writer_.reset();
  cache_spec_.dir.clear();
}

void TokenSource::begin_pass() {
  if (cache_spec_.dir.empty() || open_cache(range_begin_)) return;
  try {
    writer_ = std::make_unique<TokenCacheWriter>(token_cache_path(cache_spec_.dir, key_, range_begin_, range_end_),
                                                 key_, range_begin_, range_end_);
  } catch (const core::Error& e) {
    drop_cache(e.what());
  }
}

void TokenSource::blank_skipped_lines(std::int64_t start) {
  const auto end = start + static_cast<std::int64_t>(text_block_.size());
  // (where, bytes, what replaces them), for the held-out lines and spans in this block.
  std::vector<std::tuple<std::size_t, std::size_t, const char*>> cuts;
  // Whether the block ends inside a held-out line: a line longer than max_line_bytes comes in several blocks.
  bool open_line = false;
  const auto blank_line_from = [&](std::size_t at) {
    const auto line_end = text_block_.find('\n', at);
    // Each line keeps its line end (line numbers hold).
    cuts.emplace_back(at, (line_end == std::string::npos ? text_block_.size() : line_end) - at, "");
    open_line = line_end == std::string::npos;
  };
  if (in_held_line_) blank_line_from(0);
  const auto& lines = skip_.lines;
  for (auto it = std::lower_bound(lines.begin(), lines.end(), start); it != lines.end() && *it < end; ++it)
    blank_line_from(static_cast<std::size_t>(*it - start));
  in_held_line_ = open_line;
  // A span reads as one line end, where it starts; a span that an earlier block began is only left out here.
  const auto& spans = skip_.spans;
  const auto from = std::partition_point(spans.begin(), spans.end(), [&](const auto& r) { return r.second <= start; });
  for (auto it = from; it != spans.end() && it->first < end; ++it) {
    const auto begin = std::max(it->first, start);
    cuts.emplace_back(static_cast<std::size_t>(begin - start),
                      static_cast<std::size_t>(std::min(it->second, end) - begin), it->first >= start ? "\n" : "");
  }
  // Back to front, so the offsets still to do stay valid.
  std::sort(cuts.begin(), cuts.end());
  for (auto it = cuts.rbegin(); it != cuts.rend(); ++it)
    text_block_.replace(std::get<0>(*it), std::get<1>(*it), std::get<2>(*it));
}

std::vector<std::int32_t> TokenSource::replay() {
  const CacheBlock& b = replay_->block(next_block_);
  auto ids = replay_->ids(next_block_);
  ++replayed_;
  offset_ = b.text_end;
  if (++next_block_ == replay_->blocks()) {
    reader_.check_unchanged();  // a pass ends: the corpus must still be the text the cache holds
    next_block_ = 0;
    offset_ = range_begin_;
    ++passes_;
  }
  return ids;
}

std::vector<std::int32_t> TokenSource::read_and_tokenize() {
  const std::int64_t start = reader_.position();
  const bool end_of_range = reader_.next_block(text_block_);
  const std::int64_t end = end_of_range ? range_end_ : reader_.position();
  if (!skip_.empty()) blank_skipped_lines(start);
  if (!warned_utf8_) {
    const auto bad = first_invalid_utf8(text_block_);
    if (bad != std::string::npos) {
      const auto line = reader_.block_first_line() +
                        std::count(text_block_.begin(), text_block_.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
      core::warn(me_, corpus_ + ":" + (line > 0 ? std::to_string(line) : "byte " + std::to_string(start)) +
                          ": invalid UTF-8; such bytes are read as U+FFFD (not a letter), so they only split words "
                          "(warned once per file)");
      warned_utf8_ = true;
    }
  }
  std::vector<std::int32_t> ids;
  ids.reserve(text_block_.size() / 4 + 2);
  tokenize_(text_block_.data(), text_block_.size(), ids);
  ++tokenized_;
  for (auto id : ids) known_words_ += id >= 0;
  if (end_of_range) {
    // A whole file without one vocabulary word is an error; a shard (part of a file) may have none.
    if (known_words_ == 0 && range_begin_ == 0 && range_end_ == reader_.size()) {
      // The held-out text holds vocabulary words (test windows came from it): then nothing else did.
      if (!skip_.empty())
        throw core::CorpusError("corpus " + corpus_ +
                                ": nothing left to train on: all the text that holds vocabulary " +
                                "words was held out for the test windows; give more text, or prepare the config with " +
                                "fewer test windows (--test-windows)");
      throw core::CorpusError("corpus " + corpus_ + ": not one word of the file is in the vocabulary " + vocab_path_);
    }
    ids.push_back(kEof);
  }
  if (writer_) {
    try {
      writer_->add(start, end, ids);
      if (end_of_range) {
        writer_->commit();
        writer_.reset();
      }
    } catch (const core::Error& e) {
      drop_cache(e.what());
    }
  }
  offset_ = end_of_range ? range_begin_ : end;
  if (end_of_range) {
    ++passes_;
    in_held_line_ = inside_held_line(range_begin_);
  }
  return ids;
}

std::vector<std::int32_t> TokenSource::next() {
  if (offset_ == range_begin_ && !replay_ && !writer_) begin_pass();
  return replay_ ? replay() : read_and_tokenize();
}

}  // namespace fedavg::data
