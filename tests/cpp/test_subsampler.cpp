#include <gtest/gtest.h>

#include <cmath>

#include "data/subsampler.hpp"
#include "data/windower.hpp"

using fedavg::data::Subsampler;
using fedavg::data::Windower;

TEST(Subsampler, KeepsRareWordsAndThinsFrequentOnes) {
  // word 0 is 50 % of the corpus, word 1 is rare.
  const std::vector<std::int64_t> counts{500000, 10, 499990};
  Subsampler s(counts, 1e-3, 7);
  EXPECT_DOUBLE_EQ(s.keep_probability(1), 1.0);
  const double t = 1e-3 * 1e6, f = 500000;
  EXPECT_NEAR(s.keep_probability(0), (std::sqrt(f / t) + 1) * t / f, 1e-6);
  std::vector<std::int32_t> tokens(100000, 0);
  tokens[5] = 1;
  tokens[6] = -1;
  const auto dropped = s.apply(tokens.data(), tokens.size());
  EXPECT_EQ(tokens[5], 1);
  EXPECT_EQ(tokens[6], -1);
  const double kept = 1.0 - static_cast<double>(dropped) / 99999.0;
  EXPECT_NEAR(kept, s.keep_probability(0), 0.01);
}

TEST(Subsampler, SameSeedSameDrops) {
  const std::vector<std::int64_t> counts{1000, 1000};
  std::vector<std::int32_t> a(1000, 0), b(1000, 0);
  Subsampler(counts, 1e-2, 3).apply(a.data(), a.size());
  Subsampler(counts, 1e-2, 3).apply(b.data(), b.size());
  EXPECT_EQ(a, b);
}

TEST(Subsampler, OffWithoutCountsOrThreshold) {
  std::vector<std::int32_t> t(100, 0);
  EXPECT_FALSE(Subsampler({}, 1e-3, 1).active());
  EXPECT_EQ(Subsampler({100}, 0.0, 1).apply(t.data(), t.size()), 0u);
}

TEST(Windower, DroppedWordsCloseTheWindowWithoutBreakingIt) {
  Windower w(1, false, false);
  std::vector<std::int32_t> tokens{1, Subsampler::kDropped, 2, 3}, out;
  w.feed(tokens.data(), tokens.size(), 0, out, 10);
  EXPECT_EQ(out, (std::vector<std::int32_t>{1, 2, 3}));
}
