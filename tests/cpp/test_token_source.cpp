// data::TokenSource with a stand-in tokenizer (word i of the vocabulary is "wI"): blocks of whole lines, the
// end-of-file marker, the cache, and held-out lines read as empty.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "data/markers.hpp"
#include "data/shards.hpp"
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

namespace {

// Words of letters for the long-line tests, as textpipe would keep them whole: "wbc" is word 12 (a digit would be a
// word boundary, where the line reader may cut).
std::string letter_word(int i) {
  std::string w = "w";
  for (const char d : std::to_string(i)) w += static_cast<char>('a' + (d - '0'));
  return w;
}

void tokenize_letter_words(const char* text, std::size_t size, std::vector<std::int32_t>& out) {
  std::istringstream lines(std::string(text, size));
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string w;
    while (words >> w) {
      int id = 0;
      for (std::size_t k = 1; k < w.size(); ++k) id = id * 10 + (w[k] - 'a');
      out.push_back(id);
    }
    out.push_back(B);
  }
}

std::vector<std::int32_t> words_only(const std::vector<std::int32_t>& ids) {
  std::vector<std::int32_t> out;
  for (const auto id : ids)
    if (id >= 0) out.push_back(id);
  return out;
}

}  // namespace

TEST(TokenSource, ReadsALineLongerThanMaxLineBytesInPiecesAndSkipsItsSpans) {
  // text8's shape, many times max_line_bytes: every word once, in order, but those of the held-out spans, which
  // cross the cuts between pieces too; no window spans a held-out span.
  std::string text;
  std::vector<std::int64_t> starts;
  for (int i = 0; i < 4000; ++i) {
    starts.push_back(static_cast<std::int64_t>(text.size()));
    text += letter_word(i) + " ";
  }
  starts.push_back(static_cast<std::int64_t>(text.size()));
  const auto path = corpus(text);
  fedavg::core::Settings s;
  s.text_block_bytes = 1024;
  s.max_line_bytes = 1024;
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  std::vector<bool> held(4000, false);
  for (int first = 100; first + 60 < 4000; first += 370) {  // 60 words (about 330 bytes) every 370 words
    spans.emplace_back(starts[static_cast<std::size_t>(first)], starts[static_cast<std::size_t>(first + 60)] - 1);
    for (int i = first; i < first + 60; ++i) held[static_cast<std::size_t>(i)] = true;
  }
  TokenSource source(tokenize_letter_words, path.string(), s, {0, fedavg::core::Role::Tokenizer}, "vocab.txt",
                     fedavg::core::HeldOut({}, spans));
  const auto ids = one_pass(source);
  std::vector<std::int32_t> expected;
  for (int i = 0; i < 4000; ++i)
    if (!held[static_cast<std::size_t>(i)]) expected.push_back(i);
  EXPECT_EQ(words_only(ids), expected);
  // Each span reads as a line end: the words on either side of it are not next to each other.
  for (std::size_t k = 1; k < ids.size(); ++k) {
    if (ids[k - 1] >= 0 && ids[k] >= 0) {
      EXPECT_EQ(ids[k], ids[k - 1] + 1) << k;
    }
  }
  EXPECT_GE(source.tokenized_blocks(), static_cast<std::int64_t>(text.size() / 1024));
  fs::remove(path);
}

TEST(TokenSource, SkipsAHeldOutLineReadInPiecesAlsoAfterAResume) {
  // A held-out line longer than max_line_bytes (prepared with a larger limit) is left out whole, though it comes
  // in several blocks, and also when a resume starts inside it.
  std::string text = letter_word(1) + " " + letter_word(2) + "\n";
  const auto held_line = static_cast<std::int64_t>(text.size());
  for (int i = 100; i < 1100; ++i) text += letter_word(i) + " ";
  text += "\n" + letter_word(3) + "\n";
  const auto path = corpus(text);
  fedavg::core::Settings s;
  s.text_block_bytes = 1024;
  s.max_line_bytes = 1024;
  const fedavg::core::RankInfo me{0, fedavg::core::Role::Tokenizer};
  TokenSource source(tokenize_letter_words, path.string(), s, me, "vocab.txt", std::vector<std::int64_t>{held_line});
  EXPECT_EQ(words_only(one_pass(source)), (std::vector<std::int32_t>{1, 2, 3}));
  source.next();
  source.next();
  const auto inside = source.position();
  ASSERT_GT(inside.offset, held_line);
  ASSERT_LT(inside.offset, held_line + 5000);
  TokenSource resumed(tokenize_letter_words, path.string(), s, me, "vocab.txt", std::vector<std::int64_t>{held_line});
  resumed.seek(inside);
  EXPECT_EQ(words_only(one_pass(resumed)), (std::vector<std::int32_t>{3}));
  fs::remove(path);
}

TEST(TokenSource, ReadsShardsCutInsideALongLine) {
  // One line of about 18 KB in shards of 4 KiB, cut at spaces (data::cut_shards): every word once, in order.
  std::string text;
  for (int i = 0; i < 3000; ++i) text += letter_word(i) + " ";
  text += "\n";
  const auto path = corpus(text);
  fedavg::core::Settings s;
  s.text_block_bytes = 1024;
  s.max_line_bytes = 1024;
  const auto shards = fedavg::data::cut_shards({path.string()}, 4096, s.max_line_bytes);
  ASSERT_GT(shards.size(), 3u);
  TokenSource source(tokenize_letter_words, path.string(), s, {0, fedavg::core::Role::Tokenizer}, "vocab.txt");
  std::vector<std::int32_t> words;
  for (const auto& shard : shards) {
    source.set_range(shard.begin, shard.end);
    const auto ids = words_only(one_pass(source));
    words.insert(words.end(), ids.begin(), ids.end());
  }
  std::vector<std::int32_t> expected(3000);
  for (int i = 0; i < 3000; ++i) expected[static_cast<std::size_t>(i)] = i;
  EXPECT_EQ(words, expected);
  fs::remove(path);
}
