// The building blocks' kernels (kernels/table_blocks): the mean of rows, the negative-sampling loss and its
// derivatives against the formulas written out, the SGD step of row-sparse gradients with its duplicate scaling and
// written rows, and that a bad id writes nothing.
#include "kernels/table_blocks.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

namespace fk = fedavg::kernels;

namespace {

constexpr std::int64_t kV = 20, kD = 7;

std::vector<float> random_rows(std::int64_t rows, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal(0.0f, 0.3f);
  std::vector<float> t(static_cast<std::size_t>(rows * kD));
  for (float& x : t) x = normal(gen);
  return t;
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

TEST(TableBlocks, RowsSumIsTheScaledSumOfTheRows) {
  auto table = random_rows(kV, 1);
  const fk::TableRef t{table.data(), kV, kD};
  const std::vector<std::int64_t> ids{3, 4, 4, 19, 0, 1, 2, 3};
  std::vector<float> out(2 * kD);
  fk::rows_sum(t, ids.data(), 2, 4, 0.25f, out.data());
  for (std::int64_t i = 0; i < 2; ++i)
    for (std::int64_t c = 0; c < kD; ++c) {
      double sum = 0.0;
      for (std::int64_t j = 0; j < 4; ++j) sum += table[ids[i * 4 + j] * kD + c];
      EXPECT_NEAR(out[i * kD + c], 0.25 * sum, 1e-6);
    }
}

TEST(TableBlocks, NegativeSamplingIsWord2vecsLossAndGradient) {
  auto table = random_rows(kV, 2);
  const fk::TableRef t{table.data(), kV, kD};
  const auto h = random_rows(2, 3);
  const std::vector<std::int64_t> target{2, 5}, noise{7, 2, 9, 5, 1, 1};  // window 0's 2, window 1's 5: skipped
  std::vector<float> g_target(2), g_noise(6), grad_h(2 * kD);
  const float scale = 0.5f;
  const double loss = fk::negative_sampling(t, h.data(), target.data(), noise.data(), 2, 3, scale, g_target.data(),
                                            g_noise.data(), grad_h.data());
  double ref_loss = 0.0;
  for (std::int64_t i = 0; i < 2; ++i) {
    std::vector<double> ref_grad(kD, 0.0);
    for (std::int64_t j = 0; j <= 3; ++j) {
      const std::int64_t word = j == 0 ? target[i] : noise[i * 3 + j - 1];
      const float got = j == 0 ? g_target[i] : g_noise[i * 3 + j - 1];
      if (j > 0 && word == target[i]) {
        EXPECT_EQ(got, 0.0f);
        continue;
      }
      double s = 0.0;
      for (std::int64_t c = 0; c < kD; ++c) s += table[word * kD + c] * h[i * kD + c];
      ref_loss -= std::log(j == 0 ? sigmoid(s) : sigmoid(-s));
      const double g = scale * (j == 0 ? -sigmoid(-s) : sigmoid(s));
      EXPECT_NEAR(got, g, 1e-6);
      for (std::int64_t c = 0; c < kD; ++c) ref_grad[c] += g * table[word * kD + c];
    }
    for (std::int64_t c = 0; c < kD; ++c) EXPECT_NEAR(grad_h[i * kD + c], ref_grad[c], 1e-6);
  }
  EXPECT_NEAR(loss, ref_loss, 1e-5);
  EXPECT_NEAR(fk::negative_sampling(t, h.data(), target.data(), noise.data(), 2, 3, 1.0f, nullptr, nullptr, nullptr),
              loss, 1e-9);
}

TEST(TableBlocks, SgdRowsAddsTheScaledSumOfEachRowsGradients) {
  const auto vecs = random_rows(2, 4);
  const std::vector<std::int64_t> a{3, 4, 3, 5}, b{4};  // row 3 twice in a, row 4 in a and in b
  const std::vector<float> coef{1.0f, 2.0f, 0.5f, -1.0f};
  for (const auto& [rule, f2] : std::vector<std::pair<fk::Duplicates, double>>{
           {fk::Duplicates::kSum, 1.0}, {fk::Duplicates::kSqrt, 1.0 / std::sqrt(2.0)}, {fk::Duplicates::kMean, 0.5}}) {
    auto table = random_rows(kV, 5);
    const auto before = table;
    bool written[kV] = {};
    fk::sgd_rows({table.data(), kV, kD},
                 {{a.data(), coef.data(), vecs.data(), 2, 2, 0.5f}, {b.data(), nullptr, vecs.data(), 1, 1, 2.0f}},
                 -0.1f, rule, written);
    for (std::int64_t c = 0; c < kD; ++c) {
      const double v0 = vecs[c], v1 = vecs[kD + c];
      // Row 3: 0.5 * (1 * v0 + 0.5 * v1), named twice; row 4: 0.5 * 2 * v0 + 2 * v0, twice; row 5: 0.5 * -1 * v1.
      EXPECT_NEAR(table[3 * kD + c], before[3 * kD + c] - 0.1 * f2 * 0.5 * (v0 + 0.5 * v1), 1e-6);
      EXPECT_NEAR(table[4 * kD + c], before[4 * kD + c] - 0.1 * f2 * (v0 + 2 * v0), 1e-6);
      EXPECT_NEAR(table[5 * kD + c], before[5 * kD + c] - 0.1 * 0.5 * -v1, 1e-6);
    }
    for (std::int64_t r = 0; r < kV; ++r) {
      EXPECT_EQ(written[r], r >= 3 && r <= 5) << "row " << r;
      if (r >= 3 && r <= 5) continue;
      for (std::int64_t c = 0; c < kD; ++c) EXPECT_EQ(table[r * kD + c], before[r * kD + c]);
    }
  }
}

TEST(TableBlocks, ABadIdWritesNothing) {
  auto table = random_rows(kV, 6);
  const auto before = table;
  const auto vecs = random_rows(2, 7);
  const fk::TableRef t{table.data(), kV, kD};
  bool written[kV] = {};
  for (std::int64_t bad : {kV, std::int64_t{-1}}) {
    const std::vector<std::int64_t> good{1, 2}, wrong{3, bad};
    EXPECT_THROW(fk::sgd_rows(t,
                              {{good.data(), nullptr, vecs.data(), 2, 1, 1.0f},
                               {wrong.data(), nullptr, vecs.data(), 2, 1, 1.0f}},
                              -0.1f, fk::Duplicates::kSqrt, written),
                 std::out_of_range);
    std::vector<float> out(kD);
    EXPECT_THROW(fk::rows_sum(t, wrong.data(), 1, 2, 0.5f, out.data()), std::out_of_range);
    EXPECT_THROW(fk::negative_sampling(t, vecs.data(), good.data(), wrong.data(), 2, 1, 1.0f, nullptr, nullptr,
                                       nullptr),
                 std::out_of_range);
  }
  EXPECT_EQ(table, before);
  for (bool w : written) EXPECT_FALSE(w);
}
