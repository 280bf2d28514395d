#include "training/exchange/combine_rule.hpp"

#include <algorithm>

namespace fedavg::training {

void CombineRule::own_change(float* v, const float* start, std::size_t cols, float scale, float& moved,
                             float& squares) const {
  float norm2 = 0.0f;
  for (std::size_t c = 0; c < cols; ++c) {
    v[c] -= start[c];
    norm2 += v[c] * v[c];
  }
  moved = norm2 > 0.0f ? 1.0f : 0.0f;
  squares = norm2 * scale;
}

void CombineRule::apply_sum(float* v, const float* start, std::size_t cols, float k, float squares) const {
  // k members' summed change S times a damping: k^(power - 1) (S times it is their mean times k^power), and
  // with agreement up to 1 where their changes disagree. Changes that agree add up to more than their squares
  // (all k equal to d: |S|^2 = k^2 |d|^2, sum |d_i|^2 = k |d|^2); then sum |d_i|^2 / |S|^2 is 1/k, their mean.
  // Changes that do not (|S|^2 <= sum |d_i|^2) are added whole.
  float damp = k > 1.0f && power_ < 1.0f ? std::pow(k, power_ - 1.0f) : 1.0f;
  if (agreement_ && k > 1.0f) {
    float sum2 = 0.0f;
    for (std::size_t c = 0; c < cols; ++c) sum2 += v[c] * v[c];
    const float disagree = sum2 > squares ? squares / sum2 : 1.0f;
    damp = power_ < 1.0f ? std::max(damp, disagree) : disagree;
  }
  for (std::size_t c = 0; c < cols; ++c) v[c] = start[c] + damp * v[c];
}

}  // namespace fedavg::training
