// The Tokenizer's stream of token blocks: reads the corpus in blocks of whole lines, tokenizes them with the
// given function (Python's textpipe in the program), marks line ends, unknown words and the end of each pass,
// and checks the text (invalid UTF-8 is warned about once; a file without a single vocabulary word is an
// error). A corpus whose ids fit in token_cache_mb is tokenized once: later passes replay the cached ids, block
// by block, with no call to the tokenizer.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/rank_info.hpp"
#include "core/read_position.hpp"
#include "data/line_reader.hpp"

namespace fedavg::data {

class TokenSource {
 public:
  // Appends the ids and markers of whole lines of UTF-8 text to `out`.
  using Tokenize = std::function<void(const char* text, std::size_t size, std::vector<std::int32_t>& out)>;

  // `skip`: sorted byte offsets of lines to leave out (the held-out test lines): they are read as empty lines.
  TokenSource(Tokenize tokenize, const std::string& corpus, const core::Settings& s, const core::RankInfo& me,
              const std::string& vocab_path, std::vector<std::int64_t> skip = {});

  // Continues from a checkpointed position (before the first next()).
  void seek(const core::ReadPosition& from);
  // The next block of ids (ends with kEof at the end of a pass).
  std::vector<std::int32_t> next();
  // Where the next block starts: byte offset and completed passes.
  core::ReadPosition position() const { return position_; }
  bool replaying() const { return replaying_; }

 private:
  struct Block {
    std::size_t begin, end;          // ids in cache_
    core::ReadPosition after;        // reader position after the block (passes relative to the cached pass)
  };
  std::vector<std::int32_t> read_and_tokenize();
  // Empties the lines of text_block_ (read from byte `start` of the file) that start at an offset in skip_.
  void blank_skipped_lines(std::int64_t start);

  Tokenize tokenize_;
  std::vector<std::int64_t> skip_;
  std::string corpus_;
  core::RankInfo me_;
  std::string vocab_path_;
  LineReader reader_;
  std::size_t cache_limit_;          // ids
  std::vector<std::int32_t> cache_;
  std::vector<Block> blocks_;
  bool caching_ = true;              // the current pass started at the top of the file and still fits
  bool replaying_ = false;
  bool gave_up_ = false;             // the file's ids did not fit in the cache
  std::size_t next_block_ = 0;
  std::int64_t passes_ = 0;
  core::ReadPosition position_;
  std::int64_t known_words_ = 0;
  bool warned_utf8_ = false;
  std::string text_block_;
};

}  // namespace fedavg::data
