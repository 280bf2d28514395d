#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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
    for (int i = 0; i < 10; ++i) r.next_block(s);
  } catch (const fedavg::core::Error& e) {
    return e.what();
  }
  return "";
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
  const auto long_line = temp_file("long", "short\n" + std::string(5000, 'x') + "\n");
  EXPECT_NE(error_of(long_line, 1024, 2048).find(":2: line longer than 2048 bytes"), std::string::npos)
      << error_of(long_line, 1024, 2048);
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
