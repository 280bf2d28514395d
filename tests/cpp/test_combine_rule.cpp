// The combine rule (training/exchange/combine_rule.hpp) as the two exchanges apply it: the dense one (fedavg.cpp: each
// member's change scaled by L n_i / N, summed along the tree, then damped) and the sparse one (sparse_learner.cpp:
// each changed row scaled by n_i / N with its share as weight, summed by the owner, then normalised) give the same
// rows for the same changes.
#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "training/exchange/combine_rule.hpp"
#include "training/exchange/sparse_delta.hpp"

using namespace fedavg;
using training::CombineRule;
using training::Layout;
using training::SparseDelta;

namespace {

// One table of 5 rows of 3.
const Layout kLayout{{0, 5, 3}};
constexpr std::size_t kRows = 5;
constexpr std::size_t kCols = 3;

std::vector<float> start_weights() {
  std::vector<float> w(kRows * kCols);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * static_cast<float>(i);
  return w;
}

// Member m's trained weights: row r changed by members m < r (row 0 by none, row 4 by every one of up to 4).
// `agree`: every member that changes a row changes it the same way.
std::vector<std::vector<float>> trained(const std::vector<float>& start, int members, bool agree) {
  std::vector<std::vector<float>> out;
  for (int m = 0; m < members; ++m) {
    std::vector<float> w = start;
    for (std::size_t r = 0; r < kRows; ++r) {
      if (static_cast<std::size_t>(m) >= r) continue;
      for (std::size_t c = 0; c < kCols; ++c)
        w[r * kCols + c] += agree ? 0.5f - 0.25f * static_cast<float>(c)
                                  : 0.3f * static_cast<float>((m + 1) * (c % 2 == 0 ? 1 : -1)) + 0.05f * c;
    }
    out.push_back(w);
  }
  return out;
}

// The dense exchange. Added: own_change per member and row, the sums the tree forms (each member's values times
// its scale, its marks times its scale once more), then apply_sum. Averaged: the members' weights times their
// shares, summed.
std::vector<float> dense(const CombineRule& rule, const std::vector<float>& start,
                         const std::vector<std::vector<float>>& members, const std::vector<float>& shares) {
  const auto learners = static_cast<float>(members.size());
  std::vector<float> sum(start.size(), 0.0f);
  if (!rule.adds()) {
    for (std::size_t m = 0; m < members.size(); ++m)
      for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += members[m][i] * shares[m];
    return sum;
  }
  std::vector<float> k(kRows, 0.0f);
  std::vector<float> squares(kRows, 0.0f);
  for (std::size_t m = 0; m < members.size(); ++m) {
    const float scale = shares[m] * learners;
    std::vector<float> w = members[m];
    for (std::size_t r = 0; r < kRows; ++r) {
      float moved = 0.0f;
      float sq = 0.0f;
      rule.own_change(w.data() + r * kCols, start.data() + r * kCols, kCols, scale, moved, sq);
      k[r] += moved * scale;
      squares[r] += sq * scale;
    }
    for (std::size_t i = 0; i < w.size(); ++i) sum[i] += w[i] * scale;
  }
  for (std::size_t r = 0; r < kRows; ++r)
    rule.apply_sum(sum.data() + r * kCols, start.data() + r * kCols, kCols, k[r], squares[r]);
  return sum;
}

// The sparse exchange: each member's changed rows times its share (with the share as the row's weight where the
// rule weighs rows), summed, normalised, added to the start.
std::vector<float> sparse(const CombineRule& rule, const std::vector<float>& start,
                          const std::vector<std::vector<float>>& members, const std::vector<float>& shares) {
  SparseDelta sum(1);
  for (std::size_t m = 0; m < members.size(); ++m) {
    SparseDelta mine(1);
    auto& part = mine.parts[0];
    for (std::size_t r = 0; r < kRows; ++r) {
      bool changed = false;
      for (std::size_t c = 0; c < kCols; ++c) changed = changed || members[m][r * kCols + c] != start[r * kCols + c];
      if (!changed) continue;
      part.rows.push_back(static_cast<std::uint32_t>(r));
      for (std::size_t c = 0; c < kCols; ++c)
        part.values.push_back((members[m][r * kCols + c] - start[r * kCols + c]) * shares[m]);
      if (rule.weighs_rows()) part.weights.push_back(shares[m]);
    }
    sum.add(mine, kLayout);
  }
  if (rule.weighs_rows()) sum.normalise(kLayout, rule, static_cast<int>(members.size()));
  std::vector<float> w = start;
  sum.apply_to(w.data(), kLayout);
  return w;
}

void expect_same_rows(const CombineRule& rule, int members, const std::vector<float>& shares, bool agree) {
  const std::vector<float> start = start_weights();
  const auto trained_weights = trained(start, members, agree);
  const std::vector<float> d = dense(rule, start, trained_weights, shares);
  const std::vector<float> s = sparse(rule, start, trained_weights, shares);
  for (std::size_t i = 0; i < d.size(); ++i) EXPECT_NEAR(d[i], s[i], 1e-5f) << "element " << i;
  // Something moved, and where the rule adds, the untouched row kept its bits.
  EXPECT_NE(d[(kRows - 1) * kCols], start[(kRows - 1) * kCols]);
  if (rule.adds()) {
    for (std::size_t c = 0; c < kCols; ++c) EXPECT_EQ(d[c], start[c]);
  }
}

}  // namespace

TEST(CombineRule, AddGivesTheSameRowsDenseAndSparse) {
  for (const double power : {0.5, 0.6, 1.0})
    expect_same_rows(CombineRule::add(power, false), 4, {0.25f, 0.25f, 0.25f, 0.25f}, false);
}

TEST(CombineRule, AddWithUnequalWindowsGivesTheSameRows) {
  // Every row's senders hold more than one learner's share of the windows (k > 1), where the damping applies:
  // member 0, which changes every row, holds 0.4 of them (k = 1.6 on its own).
  expect_same_rows(CombineRule::add(0.6, false), 4, {0.4f, 0.3f, 0.2f, 0.1f}, false);
}

TEST(CombineRule, AgreeingChangesAreNotDampedByTheAgreementTerm) {
  // Changes that agree add up to more than their squares: the agreement term leaves the k^power damping, which
  // the sparse exchange applies alone.
  expect_same_rows(CombineRule::add(0.6, true), 4, {0.25f, 0.25f, 0.25f, 0.25f}, true);
}

TEST(CombineRule, ARowOneMemberChangedTakesItsChangeWhole) {
  const std::vector<float> start = start_weights();
  const auto members = trained(start, 2, false);
  // Row 1: changed by member 0 alone, which holds one learner's share of the windows (k = 1).
  const std::vector<float> d = dense(CombineRule::add(0.6, true), start, members, {0.5f, 0.5f});
  for (std::size_t c = 0; c < kCols; ++c) EXPECT_FLOAT_EQ(d[kCols + c], members[0][kCols + c]) << "column " << c;
}

TEST(CombineRule, AverageGivesTheSameRowsDenseAndSparse) {
  expect_same_rows(CombineRule::average(), 3, {0.2f, 0.3f, 0.5f}, false);
}
