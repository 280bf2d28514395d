// The Tokenizer's stream of token blocks: reads the corpus (or a byte range of it, a shard) in blocks of whole
// lines, tokenizes them with the given function (Python's textpipe in the program), marks line ends, unknown
// words and the end of each pass, and checks the text (invalid UTF-8 is warned about once; a file without a
// single vocabulary word is an error). With a cache folder, the first whole pass over a range also writes its ids
// to an on-disk token cache (data::TokenCacheWriter); later passes, and later runs on the same corpus,
// vocabulary and held-out lines, replay it memory-mapped (data::TokenCache) with no call to the tokenizer. Read or
// replayed, a corpus that changed since it was opened ends each pass with core::CorpusError (data::CorpusFile).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/held_out.hpp"
#include "core/rank_info.hpp"
#include "core/read_position.hpp"
#include "data/line_reader.hpp"
#include "data/token_cache.hpp"
#include "data/token_cache_writer.hpp"

namespace fedavg::data {

// Where token caches go and what, besides the corpus and the held-out lines, they depend on.
struct TokenCacheSpec {
  std::filesystem::path dir;                     // empty: no cache
  std::vector<std::filesystem::path> key_files;  // hashed whole into the key (the vocabulary, the tokenizer's code)
};

class TokenSource {
 public:
  // Appends the ids and markers of whole lines of UTF-8 text to `out`.
  using Tokenize = std::function<void(const char* text, std::size_t size, std::vector<std::int32_t>& out)>;

  // `skip`: the text to leave out (the held-out test lines): its lines are read as empty lines, its spans within
  // lines as line ends (so no window spans one). A line longer than max_line_bytes is read in pieces
  // (data::LineReader), each tokenized as a line of its own: no window spans the cut between two pieces.
  TokenSource(Tokenize tokenize, const std::string& corpus, const core::Settings& s, const core::RankInfo& me,
              const std::string& vocab_path, core::HeldOut skip = {}, TokenCacheSpec cache = {});

  // Reads the lines in bytes [begin, end) of the file from now on, from `begin` (the whole file until called);
  // the block that ends the range ends with kEof. Call before the first next() or right after a block that
  // ended with kEof. Throws core::Error if the range does not lie on line boundaries of the file.
  void set_range(std::int64_t begin, std::int64_t end);
  // Continues from a checkpointed position inside the current range (before the first next()).
  void seek(const core::ReadPosition& from);
  // The next block of ids (ends with kEof at the end of a pass over the range).
  std::vector<std::int32_t> next();
  // Where the next block starts: byte offset and completed passes over the range.
  core::ReadPosition position() const { return {offset_, passes_}; }
  bool replaying() const { return replay_.has_value(); }
  std::int64_t file_bytes() const { return reader_.size(); }
  // Blocks tokenized by the tokenizer, and replayed from a cache, so far.
  std::int64_t tokenized_blocks() const { return tokenized_; }
  std::int64_t replayed_blocks() const { return replayed_; }

 private:
  // At the start of a pass: replay the range's cache if there is one, else start writing it.
  void begin_pass();
  // Opens the current range's cache for replay from byte `at`; false if there is none or no block starts there.
  bool open_cache(std::int64_t at);
  std::vector<std::int32_t> replay();
  std::vector<std::int32_t> read_and_tokenize();
  // Empties the lines of text_block_ (read from byte `start` of the file) that start at an offset in skip_ (or
  // that an earlier block began, in_held_line_), and turns its spans in skip_ into line ends (a span that an
  // earlier block began: into nothing).
  void blank_skipped_lines(std::int64_t start);
  // Whether byte `at`, a piece start inside a long line, lies in a held-out line (that an earlier block began).
  bool inside_held_line(std::int64_t at) const;
  // A cache that cannot be written is not an error: warn once and go on without one.
  void drop_cache(const std::string& why);

  Tokenize tokenize_;
  core::HeldOut skip_;
  std::string corpus_;
  core::RankInfo me_;
  std::string vocab_path_;
  LineReader reader_;
  TokenCacheSpec cache_spec_;
  std::uint64_t key_ = 0;
  std::int64_t range_begin_ = 0;
  std::int64_t range_end_ = 0;
  std::int64_t offset_ = 0;  // of the next block
  std::int64_t passes_ = 0;  // completed passes over the range
  std::optional<TokenCache> replay_;
  std::size_t next_block_ = 0;  // in replay_
  std::unique_ptr<TokenCacheWriter> writer_;
  std::int64_t tokenized_ = 0;
  std::int64_t replayed_ = 0;
  std::int64_t known_words_ = 0;  // tokenized in the current range
  bool logged_replay_ = false;
  bool warned_utf8_ = false;
  bool in_held_line_ = false;  // the last block ended inside a held-out line
  std::string text_block_;
};

}  // namespace fedavg::data
