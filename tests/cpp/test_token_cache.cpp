// The on-disk token cache: data::TokenCacheWriter and data::TokenCache round trip, what makes a cache file
// count as missing (another key or range, a truncated or half-written file), and data::TokenSource replaying it
// with no call to the tokenizer, in the same and in a later run; a corpus summary follows the content only.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "core/error.hpp"
#include "data/fingerprint.hpp"
#include "data/markers.hpp"
#include "data/token_cache.hpp"
#include "data/token_cache_writer.hpp"
#include "data/token_source.hpp"
#include "word_ids.hpp"

namespace fs = std::filesystem;
using fedavg::data::TokenCache;
using fedavg::data::TokenCacheWriter;
using fedavg::data::TokenSource;

namespace {

constexpr auto B = fedavg::data::kBreak;
constexpr auto E = fedavg::data::kEof;

fs::path fresh_dir() {
  const auto d = fs::temp_directory_path() / ("fedavg_token_cache_" + std::to_string(std::random_device{}()));
  fs::create_directories(d);
  return d;
}

// "w3 w7\n" -> 3, 7, kBreak; counts its calls.
struct CountingTokenizer {
  int* calls;
  void operator()(const char* text, std::size_t size, std::vector<std::int32_t>& out) const {
    ++*calls;
    tokenize_word_ids(text, size, out);
  }
};

std::vector<std::int32_t> one_pass(TokenSource& source) {
  std::vector<std::int32_t> ids;
  do {
    const auto block = source.next();
    ids.insert(ids.end(), block.begin(), block.end());
  } while (ids.empty() || ids.back() != E);
  return ids;
}

void write_two_blocks(const fs::path& path, std::uint64_t key) {
  TokenCacheWriter w(path, key, 100, 300);
  w.add(100, 180, {1, 2, B});
  w.add(180, 300, {3, B, 4, E});
  w.commit();
}

}  // namespace

TEST(TokenCache, RoundTrip) {
  const auto dir = fresh_dir();
  const auto path = fedavg::data::token_cache_path(dir, 42, 100, 300);
  write_two_blocks(path, 42);
  auto cache = TokenCache::open(path, 42, 100, 300);
  ASSERT_TRUE(cache.has_value());
  ASSERT_EQ(cache->blocks(), 2u);
  EXPECT_EQ(cache->ids(0), (std::vector<std::int32_t>{1, 2, B}));
  EXPECT_EQ(cache->ids(1), (std::vector<std::int32_t>{3, B, 4, E}));
  EXPECT_EQ(cache->block(1).text_begin, 180);
  EXPECT_EQ(cache->find(180), 1u);
  EXPECT_EQ(cache->find(150), 2u);  // no block starts there
  // Only the finished file exists: no temporary is left beside it.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  fs::remove_all(dir);
}

TEST(TokenCache, AnotherKeyOrRangeIsNoCache) {
  const auto dir = fresh_dir();
  const auto path = fedavg::data::token_cache_path(dir, 42, 100, 300);
  write_two_blocks(path, 42);
  EXPECT_FALSE(TokenCache::open(path, 43, 100, 300).has_value());
  EXPECT_FALSE(TokenCache::open(path, 42, 0, 300).has_value());
  EXPECT_FALSE(TokenCache::open(dir / "missing.ids", 42, 100, 300).has_value());
  EXPECT_NE(fedavg::data::token_cache_path(dir, 42, 100, 300), fedavg::data::token_cache_path(dir, 43, 100, 300));
  fs::remove_all(dir);
}

TEST(TokenCache, TruncatedOrHalfWrittenIsNoCache) {
  const auto dir = fresh_dir();
  const auto path = fedavg::data::token_cache_path(dir, 42, 100, 300);
  write_two_blocks(path, 42);
  const auto size = fs::file_size(path);
  for (const auto cut : {size - 1, size - 20, std::uintmax_t{12}, std::uintmax_t{0}}) {
    fs::copy_file(path, dir / "cut.ids", fs::copy_options::overwrite_existing);
    fs::resize_file(dir / "cut.ids", cut);
    EXPECT_FALSE(TokenCache::open(dir / "cut.ids", 42, 100, 300).has_value()) << cut;
  }
  {
    // A writer that never commits (a crash, a stop mid-pass) leaves nothing under either name.
    const auto other = fedavg::data::token_cache_path(dir, 7, 0, 300);
    TokenCacheWriter w(other, 7, 0, 300);
    w.add(0, 100, {1, B});
    EXPECT_FALSE(fs::exists(other));
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);  // path, cut.ids
  // Blocks that do not cover the range are refused at commit.
  TokenCacheWriter gap(fedavg::data::token_cache_path(dir, 8, 0, 300), 8, 0, 300);
  gap.add(0, 100, {1, B});
  EXPECT_THROW(gap.commit(), fedavg::core::Error);
  fs::remove_all(dir);
}

TEST(TokenCache, AWriterKilledMidPassLeavesNoFileAndARewriteReplacesTheOld) {
  const auto dir = fresh_dir();
  const auto path = fedavg::data::token_cache_path(dir, 42, 100, 300);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // as a Tokenizer killed while it writes
    TokenCacheWriter w(path, 42, 100, 300);
    w.add(100, 180, {1, 2, B});
    ::raise(SIGKILL);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 0);
  write_two_blocks(path, 42);
  write_two_blocks(path, 42);  // the same range again (another pipeline, a later run): replaces it
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  auto cache = TokenCache::open(path, 42, 100, 300);
  ASSERT_TRUE(cache.has_value());
  fs::remove_all(dir);
}

TEST(TokenCache, FingerprintFollowsContentAndSummary) {
  const auto dir = fresh_dir();
  std::ofstream(dir / "a.txt") << "w1 w2\n";
  fedavg::data::Fingerprint f1, f2, f3;
  f1.add_file_summary(dir / "a.txt");
  f2.add_file_summary(dir / "a.txt");
  EXPECT_EQ(f1.value(), f2.value());
  std::ofstream(dir / "a.txt") << "w1 w3\n";  // same size, other content
  f3.add_file_summary(dir / "a.txt");
  EXPECT_NE(f1.value(), f3.value());
  fs::remove_all(dir);
}

TEST(TokenSourceCache, LaterPassesAndLaterRunsReplayWithoutTokenizing) {
  const auto dir = fresh_dir();
  std::string text;
  for (int i = 0; i < 300; ++i) text += "w" + std::to_string(i) + " w" + std::to_string(i + 1) + "\n";
  const auto corpus = dir / "corpus.txt";
  std::ofstream(corpus) << text;
  std::ofstream(dir / "vocab.txt") << "w0\n";
  fedavg::core::Settings s;
  s.text_block_bytes = 1024;  // several blocks
  const fedavg::core::RankInfo me{0, fedavg::core::Role::Tokenizer};
  const std::vector<std::int64_t> skip{static_cast<std::int64_t>(text.find("w5 "))};
  const fedavg::data::TokenCacheSpec spec{dir / "cache", {dir / "vocab.txt"}};

  int calls = 0;
  std::vector<std::int32_t> first, second;
  {
    TokenSource source(CountingTokenizer{&calls}, corpus.string(), s, me, "vocab.txt", skip, spec);
    first = one_pass(source);
    const int tokenized = calls;
    EXPECT_GT(tokenized, 2);
    second = one_pass(source);
    EXPECT_EQ(calls, tokenized);  // replayed
    EXPECT_TRUE(source.replaying());
    EXPECT_EQ(source.position().passes, 2);
  }
  EXPECT_EQ(first, second);
  calls = 0;
  {
    TokenSource later(CountingTokenizer{&calls}, corpus.string(), s, me, "vocab.txt", skip, spec);
    EXPECT_EQ(one_pass(later), first);
    EXPECT_EQ(calls, 0);  // a later run on the same corpus, vocabulary and held-out lines
  }
  {
    // Other held-out lines: another key, tokenized again.
    TokenSource other(CountingTokenizer{&calls}, corpus.string(), s, me, "vocab.txt", {}, spec);
    one_pass(other);
    EXPECT_GT(calls, 0);
  }
  calls = 0;
  {
    // A resume in the middle of the file replays from the block that starts there (the first block ends at
    // the last line end within its first 1024 bytes).
    TokenSource source(CountingTokenizer{&calls}, corpus.string(), s, me, "vocab.txt", skip, spec);
    source.seek({static_cast<std::int64_t>(text.rfind('\n', 1023)) + 1, 3});
    const auto rest = one_pass(source);
    EXPECT_LT(rest.size(), first.size());
    EXPECT_TRUE(std::equal(rest.begin(), rest.end(), first.end() - static_cast<std::ptrdiff_t>(rest.size())));
    EXPECT_EQ(source.position().passes, 4);
    EXPECT_EQ(calls, 0);
  }
  {
    // A position where no cached block starts: tokenized to the end of the pass, then replayed.
    TokenSource source(CountingTokenizer{&calls}, corpus.string(), s, me, "vocab.txt", skip, spec);
    source.seek({static_cast<std::int64_t>(text.find('\n')) + 1, 0});
    const auto rest = one_pass(source);
    EXPECT_TRUE(std::equal(rest.begin(), rest.end(), first.end() - static_cast<std::ptrdiff_t>(rest.size())));
    EXPECT_GT(calls, 0);
    const int tokenized = calls;
    EXPECT_EQ(one_pass(source), first);
    EXPECT_EQ(calls, tokenized);
  }
  fs::remove_all(dir);
}

TEST(TokenSourceCache, ARangeIsCachedOnItsOwn) {
  const auto dir = fresh_dir();
  std::string text;
  for (int i = 0; i < 200; ++i) text += "w" + std::to_string(i) + "\n";
  const auto corpus = dir / "corpus.txt";
  std::ofstream(corpus) << text;
  fedavg::core::Settings s;
  s.text_block_bytes = 1024;
  const fedavg::core::RankInfo me{0, fedavg::core::Role::Tokenizer};
  const fedavg::data::TokenCacheSpec spec{dir / "cache", {}};
  const auto cut = static_cast<std::int64_t>(text.find("w100\n"));
  int calls = 0;
  std::vector<std::int32_t> expected;
  for (int i = 100; i < 200; ++i) expected.insert(expected.end(), {i, B});
  expected.push_back(E);
  TokenSource a(CountingTokenizer{&calls}, corpus.string(), s, me, "vocab.txt", {}, spec);
  a.set_range(cut, static_cast<std::int64_t>(text.size()));
  EXPECT_EQ(one_pass(a), expected);
  const int tokenized = calls;
  TokenSource b(CountingTokenizer{&calls}, corpus.string(), s, me, "vocab.txt", {}, spec);
  b.set_range(cut, static_cast<std::int64_t>(text.size()));
  EXPECT_EQ(one_pass(b), expected);
  EXPECT_EQ(calls, tokenized);
  EXPECT_THROW(b.set_range(cut + 1, static_cast<std::int64_t>(text.size())), fedavg::core::Error);
  fs::remove_all(dir);
}

TEST(CorpusSummary, FollowsTheContentNotTheNameOrTime) {
  const auto dir = fresh_dir();
  const std::string text = "the big dog sees the cat\nthe cat sees the dog\n";
  const auto write = [&](const fs::path& p, const std::string& t) { std::ofstream(p, std::ios::binary) << t; };
  write(dir / "a.txt", text);
  write(dir / "b.txt", text);  // a copy, written later
  std::string edited = text;
  edited[4] = 'x';  // one byte, same size
  write(dir / "c.txt", edited);
  const auto a = fedavg::data::corpus_summary(dir / "a.txt");
  EXPECT_EQ(a.bytes, static_cast<std::int64_t>(text.size()));
  const auto b = fedavg::data::corpus_summary(dir / "b.txt");
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.hash, b.hash);
  const auto c = fedavg::data::corpus_summary(dir / "c.txt");
  EXPECT_EQ(c.bytes, a.bytes);
  EXPECT_NE(c.hash, a.hash);
  EXPECT_EQ(fedavg::data::corpus_summary(dir / "missing.txt").bytes, -1);
  EXPECT_EQ(fedavg::data::corpus_summary(dir).bytes, -1);  // a folder
  fs::remove_all(dir);
}
