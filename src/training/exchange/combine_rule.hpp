// The combine rule: how the exchange members' changes of one row become the row's global change, for both weight
// exchanges. Averaged: the members' changes weighted by their windows (with the sparse exchange's "touched"
// weighting, by the windows of the members that changed the row). Added (fedavg's combine add,
// docs/strategies.md#fedavg): the k members that changed a row move it by their mean change times k^power, and
// with agreement by up to their sum where their changes disagree. The dense exchange (fedavg.cpp) sums changes
// scaled by L n_i / N along the learner tree and damps the sum (own_change, apply_sum); the sparse exchange
// (sparse_learner.cpp) sums changes scaled by n_i / N with their shares as the row's weight and scales the sum
// (row_factor). Both give a row mean * k^power; the sparse exchange carries no squares, so the agreement term is
// the dense exchange's alone.
#pragma once

#include <cmath>
#include <cstddef>

namespace fedavg::training {

class CombineRule {
 public:
  // Averaged by windows; `touched`: the sparse exchange weighs each row by its senders' windows alone.
  static CombineRule average(bool touched = false) { return CombineRule(false, touched, 1.0, false); }
  // Added: a row's mean change times k^power for k members, and with `agreement` by up to their sum.
  static CombineRule add(double power, bool agreement) { return CombineRule(true, true, power, agreement); }

  bool adds() const { return adds_; }
  // Sparse exchange: whether each row carries its senders' window shares (its weight).
  bool weighs_rows() const { return weighs_rows_; }

  // Dense add, a member's side: turns row `v` (its trained weights) into its change from `start`; `moved` is 1
  // if the row changed (else 0), `squares` its squared norm times `scale` (the tree scales it once more).
  void own_change(float* v, const float* start, std::size_t cols, float scale, float& moved, float& squares) const;
  // Dense add: `v` holds the members' summed changes of a row, each scaled by L n_i / N; `k` their summed
  // `moved` and `squares` their summed `squares`. Leaves `start` + the damped sum in `v`.
  void apply_sum(float* v, const float* start, std::size_t cols, float k, float squares) const;
  // Sparse exchange: what a row's summed values (each sender's change times its share of the windows, the
  // shares summing to `weight`) are multiplied by, of `learners` learners: 1 / weight, and added times
  // (learners * weight)^power; 0 for a row of no weight.
  float row_factor(float weight, int learners) const {
    float inv = weight > 0 ? 1.0f / weight : 0.0f;
    if (adds_ && weight > 0) inv *= std::pow(static_cast<float>(learners) * weight, power_);
    return inv;
  }

 private:
  CombineRule(bool adds, bool weighs_rows, double power, bool agreement)
      : adds_(adds), weighs_rows_(weighs_rows), power_(static_cast<float>(power)), agreement_(agreement) {}

  bool adds_;
  bool weighs_rows_;
  float power_;
  bool agreement_;
};

}  // namespace fedavg::training
