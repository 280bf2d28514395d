// The fused step of the neg model (kernels/neg_cbow): its loss, its update against word2vec's written out, the
// duplicate scaling, the written rows, and that a bad id or a loss that is not finite writes nothing.
#include "kernels/neg_cbow.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

namespace fk = fedavg::kernels;

namespace {

constexpr std::int64_t kV = 20, kD = 7, kW = 2, kK = 3;

std::vector<float> random_table(unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 0.3f);
  std::vector<float> t(2 * kV * kD);
  for (float& x : t) x = normal(gen);
  return t;
}

fk::NegBatch<std::int32_t> batch(std::vector<float>& table, const std::vector<std::int32_t>& ids,
                                 const std::vector<std::int64_t>& noise) {
  return {table.data(), kV, kD, ids.data(), noise.data(), static_cast<std::int64_t>(ids.size()) / (2 * kW + 1), kW, kK};
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

TEST(NegCbow, ZeroOutputVectorsScoreLogTwoPerKeptWord) {
  auto table = random_table(1);
  std::fill(table.begin() + kV * kD, table.end(), 0.0f);
  const std::vector<std::int32_t> ids{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const std::vector<std::int64_t> noise{11, 3, 12, 13, 14, 15};  // the first window's 3 is its target: skipped
  EXPECT_NEAR(fk::neg_cbow_loss(batch(table, ids, noise)), 7 * std::log(2.0), 1e-5);
}

TEST(NegCbow, OneWindowIsWord2vecsUpdate) {
  auto table = random_table(2);
  const auto before = table;
  const std::vector<std::int32_t> ids{4, 5, 2, 11, 12};
  const std::vector<std::int64_t> noise{7, 2, 9};  // 2 is the target: skipped
  const float lr = 0.05f;
  bool written[2 * kV] = {};
  const double loss = fk::neg_cbow_step(batch(table, ids, noise), lr, fk::Duplicates::kSum, written);

  const auto e = [&](std::int64_t r, std::int64_t c) { return static_cast<double>(before[r * kD + c]); };
  const auto u = [&](std::int64_t r, std::int64_t c) { return static_cast<double>(before[(kV + r) * kD + c]); };
  std::vector<double> h(kD), neu1e(kD);
  for (std::int64_t c = 0; c < kD; ++c) h[c] = (e(4, c) + e(5, c) + e(11, c) + e(12, c)) / 4;
  double ref_loss = 0.0;
  std::vector<double> expect_u(before.begin() + kV * kD, before.end());
  for (const auto& [word, label] : std::vector<std::pair<std::int64_t, int>>{{2, 1}, {7, 0}, {9, 0}}) {
    double f = 0.0;
    for (std::int64_t c = 0; c < kD; ++c) f += u(word, c) * h[c];
    ref_loss -= std::log(label ? sigmoid(f) : sigmoid(-f));
    const double g = lr * (label - sigmoid(f));
    for (std::int64_t c = 0; c < kD; ++c) {
      neu1e[c] += g * u(word, c);
      expect_u[word * kD + c] += g * h[c];
    }
  }
  EXPECT_NEAR(loss, ref_loss, 1e-5);
  for (std::int64_t c = 0; c < kD; ++c)
    for (std::int64_t r : {4, 5, 11, 12}) EXPECT_NEAR(table[r * kD + c], e(r, c) + neu1e[c], 1e-6);
  for (std::int64_t i = 0; i < kV * kD; ++i) EXPECT_NEAR(table[kV * kD + i], expect_u[i], 1e-6);
  for (std::int64_t r = 0; r < 2 * kV; ++r) {
    const bool touched = r == 4 || r == 5 || r == 11 || r == 12 || r == kV + 2 || r == kV + 7 || r == kV + 9;
    EXPECT_EQ(written[r], touched) << "row " << r;
  }
}

TEST(NegCbow, ARowTwiceInABatchMovesByItsScaledSum) {
  const std::vector<std::int32_t> one{4, 5, 2, 11, 12}, two{4, 5, 2, 11, 12, 4, 5, 2, 11, 12};
  const std::vector<std::int64_t> noise_one{7, 9, 13}, noise_two{7, 9, 13, 7, 9, 13};
  for (const auto& [rule, factor] :
       std::vector<std::pair<fk::Duplicates, float>>{{fk::Duplicates::kSum, 1.0f},
                                                     {fk::Duplicates::kSqrt, 1.0f / std::sqrt(2.0f)},
                                                     {fk::Duplicates::kMean, 0.5f}}) {
    auto a = random_table(3), b = random_table(3);
    const auto start = a;
    fk::neg_cbow_step(batch(a, one, noise_one), 0.1f, rule, nullptr);
    fk::neg_cbow_step(batch(b, two, noise_two), 0.1f, rule, nullptr);
    for (std::size_t i = 0; i < a.size(); ++i)
      EXPECT_NEAR(b[i] - start[i], 2 * factor * (a[i] - start[i]), 1e-6) << "element " << i;
  }
}

TEST(NegCbow, ABadIdOrALossThatIsNotFiniteWritesNothing) {
  auto table = random_table(4);
  const auto before = table;
  std::vector<std::int32_t> ids{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  std::vector<std::int64_t> noise{11, 12, 13, 14, 15, 16};
  bool written[2 * kV] = {};
  ids[9] = kV;
  EXPECT_THROW(fk::neg_cbow_step(batch(table, ids, noise), 0.1f, fk::Duplicates::kSqrt, written), std::out_of_range);
  ids[9] = 10;
  noise[5] = -1;
  EXPECT_THROW(fk::neg_cbow_step(batch(table, ids, noise), 0.1f, fk::Duplicates::kSqrt, written), std::out_of_range);
  EXPECT_EQ(table, before);
  noise[5] = 16;
  table[2 * kD] = INFINITY;  // a context row of the first window
  const auto infinite = table;
  EXPECT_FALSE(std::isfinite(fk::neg_cbow_step(batch(table, ids, noise), 0.1f, fk::Duplicates::kSqrt, written)));
  for (std::size_t i = 0; i < table.size(); ++i) EXPECT_EQ(table[i], infinite[i]);
  for (bool w : written) EXPECT_FALSE(w);
}

TEST(NegCbow, AWindowCutShortByALineEndIsTheSmallerWindowOfItsWords) {
  // Window 2 with its outer slots empty (kNoWord) against window 1 over the same words: the same loss and step,
  // the empty slots' rows untouched, and in a batch their rows count no occurrence (the kSqrt scale).
  constexpr auto no = static_cast<std::int32_t>(fk::kNoWord);
  const std::vector<std::int32_t> cut{no, 4, 2, 11, no, 6, 7, 3, no, no}, small{4, 2, 11, 7, 3, 6};
  const std::vector<std::int64_t> noise{7, 9, 13, 14, 15, 16};
  auto a = random_table(5), b = random_table(5);
  bool written[2 * kV] = {};
  const double loss_cut = fk::neg_cbow_step(batch(a, cut, noise), 0.1f, fk::Duplicates::kSqrt, written);
  const fk::NegBatch<std::int32_t> one{b.data(), kV, kD, small.data(), noise.data(), 2, 1, kK};
  const double loss_small = fk::neg_cbow_step(one, 0.1f, fk::Duplicates::kSqrt, nullptr);
  EXPECT_NEAR(loss_cut, loss_small, 1e-5);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-6) << "element " << i;
  EXPECT_TRUE(written[4] && written[11] && written[6] && written[7]);
  EXPECT_FALSE(written[1] || written[5] || written[8]);
  // A window with no context word at all is refused before anything is written.
  const auto before = a;
  const std::vector<std::int32_t> empty{no, no, 2, no, no};
  EXPECT_THROW(fk::neg_cbow_step(batch(a, empty, {7, 9, 13}), 0.1f, fk::Duplicates::kSqrt, nullptr), std::out_of_range);
  EXPECT_EQ(a, before);
}
