// data::TokenSource with a stand-in tokenizer (word i of the vocabulary is "wI"): blocks of whole lines, the
// end-of-file marker, the cache, and held-out lines read as empty.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "data/markers.hpp"
#include "data/token_source.hpp"
#include "word_ids.hpp"

namespace fs = std::filesystem;
using fedavg::data::TokenSource;

namespace {

fs::path corpus(const std::string& text) {
  const auto p = fs::temp_directory_path() / ("fedavg_token_source_" + std::to_string(std::rand()) + ".txt");
  std::ofstream(p) << text;
  return p;
}

std::vector<std::int32_t> one_pass(TokenSource& source) {
  std::vector<std::int32_t> ids;
  do {
    const auto block = source.next();
    ids.insert(ids.end(), block.begin(), block.end());
  } while (ids.empty() || ids.back() != fedavg::data::kEof);
  return ids;
}

constexpr auto B = fedavg::data::kBreak;
constexpr auto E = fedavg::data::kEof;

}  // namespace

TEST(TokenSource, SkipsHeldOutLinesAndKeepsTheirLineEnds) {
  const std::string text = "w1 w2\nw3 w4\nw5\nw6 w7\n";
  const auto path = corpus(text);
  fedavg::core::Settings s;
  s.text_block_bytes = 1024;
  // Lines 2 ("w3 w4") and 4 ("w6 w7") are held out: their start offsets.
  TokenSource source(tokenize_word_ids, path.string(), s, {0, fedavg::core::Role::Tokenizer}, "vocab.txt",
                     std::vector<std::int64_t>{static_cast<std::int64_t>(text.find("w3")),
                                               static_cast<std::int64_t>(text.find("w6"))});
  EXPECT_EQ(one_pass(source), (std::vector<std::int32_t>{1, 2, B, B, 5, B, B, E}));
  EXPECT_EQ(one_pass(source), (std::vector<std::int32_t>{1, 2, B, B, 5, B, B, E}));  // replayed from the cache
  fs::remove(path);
}

TEST(TokenSource, ReadsASpanHeldOutOfALineAsALineEnd) {
  // A corpus of one line (text8): the words w3 w4 and w6 are held out; no window may join w2 to w5.
  const std::string text = "w1 w2 w3 w4 w5 w6 w7";
  const auto path = corpus(text);
  fedavg::core::Settings s;
  s.text_block_bytes = 8;  // the line is longer than a block: still read whole
  const auto at = [&](const char* w) { return static_cast<std::int64_t>(text.find(w)); };
  const fedavg::core::HeldOut held({}, {{at("w3"), at("w4") + 2}, {at("w6"), at("w6") + 2}});
  TokenSource source(tokenize_word_ids, path.string(), s, {0, fedavg::core::Role::Tokenizer}, "vocab.txt", held);
  EXPECT_EQ(one_pass(source), (std::vector<std::int32_t>{1, 2, B, 5, B, 7, B, E}));
  fs::remove(path);
}

TEST(TokenSource, SkipsHeldOutLinesInEveryBlock) {
  std::string text;
  for (int i = 0; i < 400; ++i) text += "w" + std::to_string(i) + " w" + std::to_string(i + 1) + "\n";
  const auto path = corpus(text);
  fedavg::core::Settings s;
  s.text_block_bytes = 1024;  // several blocks
  // no cache folder: tokenized every pass
  std::vector<std::int64_t> skip;
  for (int i = 0; i < 400; i += 7) skip.push_back(static_cast<std::int64_t>(text.find("w" + std::to_string(i) + " ")));
  TokenSource source(tokenize_word_ids, path.string(), s, {0, fedavg::core::Role::Tokenizer}, "vocab.txt", skip);
  const auto ids = one_pass(source);
  std::vector<std::int32_t> expected;
  for (int i = 0; i < 400; ++i) {
    if (i % 7 != 0) {
      expected.push_back(i);
      expected.push_back(i + 1);
    }
    expected.push_back(B);
  }
  expected.push_back(E);
  EXPECT_EQ(ids, expected);
  fs::remove(path);
}
