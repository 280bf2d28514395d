#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/error.hpp"
#include "data/line_reader.hpp"

using fedavg::data::LineReader;

namespace {

std::string temp_file(const std::string& name, const std::string& content) {
  const auto p = std::filesystem::temp_directory_path() / ("fedavg_lr_" + name);
  std::ofstream(p, std::ios::binary) << content;
  return p.string();
}

std::string error_of(const std::string& path, std::size_t block = 1024, std::int64_t max_line = 1 << 20) {
  try {
    LineReader r(path, block, max_line);
    std::string s;
    for (int i = 0; i < 100; ++i) r.next_block(s);
  } catch (const fedavg::core::Error& e) {
    return e.what();
  }
  return "";
}

// Words of letters ("wbc " for 12: a digit is a word boundary too) for the numbers [first, first + count), on one
// line without its line end.
std::string words_line(int first, int count) {
  std::string s;
  for (int i = first; i < first + count; ++i) {
    s += 'w';
    for (const char d : std::to_string(i)) s += static_cast<char>('a' + (d - '0'));
    s += ' ';
  }
  return s;
}

}  // namespace

TEST(LineReader, WholeLinesThenStartsAgain) {
  const auto p = temp_file("a", "one two\nthree\nfour five six\n");
  LineReader r(p, 10, 1 << 20);
  std::string s, all;
  bool eof = false;
  while (!eof) {
    eof = r.next_block(s);
    ASSERT_FALSE(s.empty());
    EXPECT_EQ(s.back(), '\n');
    all += s;
  }
  EXPECT_EQ(all, "one two\nthree\nfour five six\n");
  EXPECT_EQ(r.epochs_completed(), 1);
  r.next_block(s);
  EXPECT_EQ(s.rfind("one two\n", 0), 0u);
  EXPECT_EQ(r.block_first_line(), 1);
}

TEST(LineReader, LastLineWithoutNewline) {
  const auto p = temp_file("b", "alpha\nbeta");
  LineReader r(p, 4096, 1 << 20);
  std::string s;
  EXPECT_TRUE(r.next_block(s));
  EXPECT_EQ(s, "alpha\nbeta");
}

TEST(LineReader, ClearErrors) {
  EXPECT_NE(error_of("/nonexistent/corpus.txt").find("corpus /nonexistent/corpus.txt: cannot open"), std::string::npos);
  const auto empty = temp_file("empty", "");
  EXPECT_NE(error_of(empty).find("is empty"), std::string::npos);
  const auto bin = temp_file("bin", std::string("ok\nbad \0 byte\n", 14));
  EXPECT_NE(error_of(bin).find(":2: binary content"), std::string::npos) << error_of(bin);
  // A NUL byte far into a long line, read in pieces: still the line's number.
  const auto bin_long = temp_file("bin_long", "ok\n" + words_line(0, 2000) + std::string("\0", 1) + " w\n");
  EXPECT_NE(error_of(bin_long, 1024, 1024).find(":2: binary content"), std::string::npos)
      << error_of(bin_long, 1024, 1024);
}

TEST(LineReader, ALongLineComesInPiecesCutAtWordBoundaries) {
  // A line many times max_line_bytes (text8 is one line of 100 MB), between short lines, with punctuation.
  const std::string text = "first line\n" + words_line(0, 3000) + ", the end.\nlast line\n" + words_line(5000, 900);
  const auto p = temp_file("pieces", text);
  for (const std::size_t block : {std::size_t{100}, std::size_t{1024}, std::size_t{5000}}) {
    LineReader r(p, block, 1024);
    std::vector<std::string> blocks;
    std::vector<std::int64_t> first_lines;
    std::string s;
    bool eof = false;
    while (!eof) {
      eof = r.next_block(s);
      blocks.push_back(s);
      first_lines.push_back(r.block_first_line());
    }
    std::string all, words;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      const auto& b = blocks[i];
      all += b;
      if (b.find('\n') == std::string::npos && i + 1 < blocks.size()) {
        // A piece of the long line: at most max_line_bytes, ending in a word boundary.
        EXPECT_LE(b.size(), 1024u);
        EXPECT_TRUE(fedavg::data::is_word_boundary(b.back())) << b;
        EXPECT_TRUE(first_lines[i] == 2 || first_lines[i] == 4) << first_lines[i];
      }
      std::istringstream in(b);  // the words of each block on its own: none is cut
      for (std::string w; in >> w;) words += w + " ";
    }
    EXPECT_EQ(all, text) << block;  // every byte once, in order
    std::istringstream in(text);
    std::string expected;
    for (std::string w; in >> w;) expected += w + " ";
    EXPECT_EQ(words, expected) << block;
    EXPECT_GT(blocks.size(), text.size() / 1024);
    EXPECT_EQ(r.epochs_completed(), 1);
  }
}

TEST(LineReader, ALineOfMaxLineBytesIsReadWhole) {
  const std::string line = words_line(0, 500).substr(0, 1024);  // exactly max_line_bytes, without its line end
  const auto p = temp_file("exact", "a\n" + line + "\nb\n");
  LineReader r(p, 100, 1024);
  std::string s;
  r.next_block(s);
  EXPECT_EQ(s, "a\n");
  r.next_block(s);
  EXPECT_EQ(s.rfind(line + "\n", 0), 0u);  // not cut
}

TEST(LineReader, ResumesAtThePieceItRecorded) {
  const std::string text = words_line(0, 2000) + "\ntail\n";
  const auto p = temp_file("seek", text);
  LineReader r(p, 256, 1024);
  std::string s;
  r.next_block(s);
  r.next_block(s);
  const auto at = r.position();
  ASSERT_TRUE(fedavg::data::is_word_boundary(text[static_cast<std::size_t>(at) - 1]));
  std::string rest, again;
  for (bool eof = false; !eof;) {
    eof = r.next_block(s);
    rest += s + "|";
  }
  LineReader resumed(p, 256, 1024);
  resumed.seek(at, 0);
  for (bool eof = false; !eof;) {
    eof = resumed.next_block(s);
    again += s + "|";
  }
  EXPECT_EQ(again, rest);  // the same pieces
  LineReader bad(p, 256, 1024);
  EXPECT_THROW(bad.seek(at + 1, 0), fedavg::core::Error);  // after a letter: inside a word
}

TEST(LineReader, AWordLongerThanMaxLineBytesIsAnError) {
  // No space or other non-letter in max_line_bytes bytes of a longer line: it cannot be cut without cutting a word.
  const auto p = temp_file("word", "short\nthe big dog " + std::string(1500, 'x') + " the dog\n");
  const auto e = error_of(p, 1024, 1024);
  EXPECT_NE(e.find("fedavg_lr_word:2: a word longer than max_line_bytes (1024): no space or other ASCII non-letter "
                   "in the 1024 bytes from byte 18"),
            std::string::npos)
      << e;
  // A line that is one word of max_line_bytes is read whole; a word as long at the end of a long line is its last
  // piece.
  EXPECT_EQ(error_of(temp_file("word_ok", "a\n" + std::string(1024, 'x') + "\n"), 100, 1024), "");
  EXPECT_EQ(error_of(temp_file("word_end", "a b " + std::string(1024, 'x') + "\n"), 100, 1024), "");
}

#include "data/utf8.hpp"

TEST(Utf8, FindsTheFirstInvalidByte) {
  using fedavg::data::first_invalid_utf8;
  EXPECT_EQ(first_invalid_utf8("plain ascii\n"), std::string_view::npos);
  EXPECT_EQ(first_invalid_utf8("caf\xc3\xa9 \xe2\x80\x94 \xf0\x9f\x98\x80"), std::string_view::npos);
  EXPECT_EQ(first_invalid_utf8("ab\xff"
                               "cd"),
            2u);
  EXPECT_EQ(first_invalid_utf8("ab\xc3"), 2u);         // cut off
  EXPECT_EQ(first_invalid_utf8("\xc0\xaf"), 0u);       // overlong
  EXPECT_EQ(first_invalid_utf8("x\xed\xa0\x80"), 1u);  // surrogate
}
