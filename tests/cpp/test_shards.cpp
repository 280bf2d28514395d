// data::cut_shards (line boundaries, word boundaries in long lines, every byte in exactly one shard, files smaller
// than a shard) and
// data::ShardQueue (every shard once per epoch, epochs in order, a resumed queue re-reads what was not finished).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>

#include "core/error.hpp"
#include "data/line_reader.hpp"
#include "data/shard_queue.hpp"
#include "data/shards.hpp"

namespace fs = std::filesystem;
using fedavg::data::Shard;
using fedavg::data::ShardQueue;

namespace {

fs::path write(const std::string& name, const std::string& text) {
  const auto dir = fs::temp_directory_path() / ("fedavg_shards_" + std::to_string(std::random_device{}()));
  fs::create_directories(dir);
  const auto p = dir / name;
  std::ofstream(p, std::ios::binary) << text;
  return p;
}

std::string lines(int n, std::uint32_t seed, bool final_newline = true) {
  std::mt19937 rng(seed);
  std::string text;
  for (int i = 0; i < n; ++i) {
    text += std::string(1 + rng() % 200, static_cast<char>('a' + i % 26));
    if (i + 1 < n || final_newline) text += '\n';
  }
  return text;
}

}  // namespace

TEST(CutShards, CoverEveryByteOnceAndEndAtLineEnds) {
  for (const bool final_newline : {true, false}) {
    const std::string a = lines(2000, 1, final_newline), b = lines(30, 2);
    const auto pa = write("a.txt", a), pb = write("b.txt", b);
    const auto shards = fedavg::data::cut_shards({pa.string(), pb.string()}, 4096);
    std::map<std::int64_t, std::int64_t> covered;  // file -> bytes covered so far, in order
    for (const auto& s : shards) {
      const std::string& text = s.file == 0 ? a : b;
      EXPECT_EQ(s.begin, covered[s.file]) << "gap or overlap";
      EXPECT_LT(s.begin, s.end);
      covered[s.file] = s.end;
      if (s.end < static_cast<std::int64_t>(text.size())) {
        EXPECT_EQ(text[static_cast<std::size_t>(s.end - 1)], '\n');
        EXPECT_GE(s.end - s.begin, 4096);
        EXPECT_LT(s.end - s.begin, 4096 + 202);  // up to the first line end after the size
      }
    }
    EXPECT_EQ(covered[0], static_cast<std::int64_t>(a.size()));
    EXPECT_EQ(covered[1], static_cast<std::int64_t>(b.size()));
    EXPECT_GT(shards.size(), 40u);
    // b.txt is smaller than a shard: one shard, the whole file.
    EXPECT_EQ(std::count_if(shards.begin(), shards.end(), [](const Shard& s) { return s.file == 1; }), 1);
    fs::remove_all(pa.parent_path());
    fs::remove_all(pb.parent_path());
  }
}

TEST(CutShards, ALineLongerThanAShardIsOneShard) {
  const std::string text = std::string(10000, 'x') + "\nshort\n";
  const auto p = write("long.txt", text);
  const auto shards = fedavg::data::cut_shards({p.string()}, 100);
  ASSERT_EQ(shards.size(), 2u);
  EXPECT_EQ(shards[0].end, 10001);
  EXPECT_EQ(shards[1].end, static_cast<std::int64_t>(text.size()));
  fs::remove_all(p.parent_path());
}

TEST(CutShards, ALineLongerThanMaxLineBytesIsCutAtWordBoundaries) {
  // text8's shape: one line, which the line reader reads in pieces; shards cut it after a space or other ASCII
  // non-letter, a line of at most max_line_bytes stays whole.
  std::mt19937 rng(3);
  std::string one;
  while (one.size() < 100000) one += std::string(1 + rng() % 12, 'x') + (rng() % 9 == 0 ? ", " : " ");
  const std::string text = "short line\n" + one + "\n" + std::string(3000, 'y') + "\nend";
  const auto p = write("one.txt", text);
  const auto shards = fedavg::data::cut_shards({p.string()}, 4096, 5000);
  std::int64_t covered = 0;
  for (const auto& s : shards) {
    EXPECT_EQ(s.begin, covered);
    covered = s.end;
    if (s.end == static_cast<std::int64_t>(text.size())) continue;
    const char last = text[static_cast<std::size_t>(s.end - 1)];
    EXPECT_TRUE(fedavg::data::is_word_boundary(last)) << s.end;
    EXPECT_GE(s.end - s.begin, 4096);
    // At the first word boundary; at the line end where that comes within max_line_bytes.
    EXPECT_LE(s.end - s.begin, last == '\n' ? 4096 + 5000 : 4096 + 12);
  }
  EXPECT_EQ(covered, static_cast<std::int64_t>(text.size()));
  EXPECT_GT(shards.size(), 100000u / 4096);
  // The line of 3000 bytes (at most max_line_bytes) is not cut: a shard ends at its line end or after it.
  const auto y = static_cast<std::int64_t>(text.find('y'));
  for (const auto& s : shards) EXPECT_FALSE(s.end > y && s.end < y + 3000) << s.end;
  // Without a limit (the default), the long line is one shard, as before.
  EXPECT_LT(fedavg::data::cut_shards({p.string()}, 4096).size(), 4u);
  fs::remove_all(p.parent_path());
}

TEST(CutShards, AnEmptyOrMissingFileIsAnInputError) {
  const auto p = write("empty.txt", "");
  EXPECT_THROW(fedavg::data::cut_shards({p.string()}, 100), fedavg::core::InputError);
  EXPECT_THROW(fedavg::data::cut_shards({(p.parent_path() / "missing.txt").string()}, 100), fedavg::core::InputError);
  fs::remove_all(p.parent_path());
}

TEST(ShardQueue, HandsOutEveryShardOncePerEpochWithTheFilesInStep) {
  // File 0's halves lie at 0.25 and 0.75 of it, file 1's one shard at 0.5.
  ShardQueue q({{0, 0, 10}, {0, 10, 20}, {1, 0, 5}});
  for (std::int64_t epoch = 0; epoch < 3; ++epoch)
    for (const std::int64_t s : {0, 2, 1}) {
      const auto a = q.next(0);
      EXPECT_EQ(a.shard, s);
      EXPECT_EQ(a.epoch, epoch);
    }
}

TEST(ShardQueue, EachReaderReadsTheFilesInStep) {
  // File 0: 4 shards of 10 bytes; file 1: 12 shards of 10 bytes. Reader 0 asks twice as often as reader 1.
  std::vector<fedavg::data::Shard> shards;
  for (std::int64_t b = 0; b < 40; b += 10) shards.push_back({0, b, b + 10});
  for (std::int64_t b = 0; b < 120; b += 10) shards.push_back({1, b, b + 10});
  ShardQueue q(shards);
  std::vector<std::vector<double>> read(2, std::vector<double>(2, 0.0));
  std::vector<int> handed(shards.size(), 0);
  for (int k = 0; k < 48; ++k) {
    const int reader = k % 3 == 2 ? 1 : 0;
    const auto a = q.next(reader);
    EXPECT_EQ(a.epoch, k / 16);
    ++handed[static_cast<std::size_t>(a.shard)];
    read[static_cast<std::size_t>(reader)][static_cast<std::size_t>(shards[static_cast<std::size_t>(a.shard)].file)] +=
        10.0;
    // What each reader has read of the two files, for their sizes, differs by at most a shard of the smaller.
    for (const auto& r : read) EXPECT_LE(std::abs(r[0] / 40.0 - r[1] / 120.0), 10.0 / 40.0 + 1e-9) << k;
  }
  EXPECT_EQ(handed, std::vector<int>(shards.size(), 3));  // every shard once an epoch
}

TEST(ShardQueue, EpochsReadFollowFinishedShards) {
  ShardQueue q({{0, 0, 10}, {0, 10, 40}});
  EXPECT_DOUBLE_EQ(q.epochs_read(), 0.0);
  const auto a = q.next(0), b = q.next(0);
  q.finished(b);
  EXPECT_DOUBLE_EQ(q.epochs_read(), 0.75);  // 30 of 40 bytes
  q.finished(a);
  EXPECT_DOUBLE_EQ(q.epochs_read(), 1.0);
}

TEST(ShardQueue, AResumedQueueReadsWhatWasNotFinishedAndEachEpochOnce) {
  // Shard 1 finished epochs 0 and 1, shard 2 epoch 0; shards 0 and 3 finished none (shard 0 was being read).
  ShardQueue q({{0, 0, 10}, {0, 10, 20}, {0, 20, 30}, {0, 30, 40}}, {0, 2, 1, 0});
  std::map<std::int64_t, std::vector<std::int64_t>> per_epoch;
  for (int k = 0; k < 11; ++k) {
    const auto a = q.next(0);
    per_epoch[a.epoch].push_back(a.shard);
  }
  EXPECT_EQ(per_epoch[0], (std::vector<std::int64_t>{0, 3}));
  EXPECT_EQ(per_epoch[1], (std::vector<std::int64_t>{0, 2, 3}));
  EXPECT_EQ(per_epoch[2], (std::vector<std::int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(per_epoch[3], (std::vector<std::int64_t>{0, 1}));
  EXPECT_THROW(ShardQueue({{0, 0, 10}}, {1, 2}), fedavg::core::Error);
}
