#include "training/fedavg.hpp"

#include <algorithm>
#include <cmath>

namespace fedavg::training {

namespace {

std::size_t rows_of(const Layout& layout) {
  std::size_t n = 0;
  for (const Table& t : layout) n += t.rows;
  return n;
}

// Calls f(row, first float, cols) for every row of every table of `layout`, rows numbered across the tables.
template <typename F> void each_row(const Layout& layout, const F& f) {
  std::size_t row = 0;
  for (const Table& t : layout)
    for (std::size_t r = 0; r < t.rows; ++r, ++row) f(row, t.offset + r * t.cols, t.cols);
}

}  // namespace

// The same on both sides. A process's first round starts from the Dispatcher's weights. The sum up the learner
// tree is the new global weights: the Dispatcher keeps the copy it received, and learner 1, which computed it,
// passes it down its subtree at once, so the next round needs nothing from the Dispatcher.
void FedAvg::open_round(RoundSync& sync, std::vector<float>& w, bool first) {
  if (first) sync.weights(w);
  // The round's start, which adding takes the changes from: only where several members add theirs.
  if (first && combine_ == core::Combine::Add && sync.comm().size() > 2) start_ = w;
}

void FedAvg::close_round(RoundSync& sync, std::vector<float>& w, float share) {
  // One learner's change added to the start is its weights: the average keeps its bits exactly.
  if (combine_ == core::Combine::Add && sync.comm().size() > 2) {
    add_changes(sync, w, share);
    return;
  }
  sync.average_into_root(w, share);
  sync.weights(w, true);
}

void FedAvg::add_changes(RoundSync& sync, std::vector<float>& w, float share) {
  const int learners = sync.comm().size() - 1;
  touched_.assign(2 * rows_of(layout()), 0.0f);
  // Scaled by L n_i / N: with equal windows each learner's change counts whole, as Hogwild adds its steps.
  const float scale = share * static_cast<float>(learners);
  if (!sync.on_dispatcher()) own_changes(w, scale);
  sync.average_into_root(w, scale);
  sync.average_into_root(touched_, scale);
  if (sync.on_dispatcher() || sync.comm().rank() == 1) apply_changes(w);
  sync.weights(w, true);
  start_ = w;
}

void FedAvg::own_changes(std::vector<float>& w, float scale) {
  const std::size_t rows = touched_.size() / 2;
  each_row(layout(), [&](std::size_t row, std::size_t at, std::size_t cols) {
    float* v = w.data() + at;
    const float* x = start_.data() + at;
    float norm2 = 0.0f;
    for (std::size_t c = 0; c < cols; ++c) {
      v[c] -= x[c];
      norm2 += v[c] * v[c];
    }
    touched_[row] = norm2 > 0.0f ? 1.0f : 0.0f;
    touched_[rows + row] = norm2 * scale;  // the tree scales it once more: (L n_i / N)^2 |change|^2
  });
}

void FedAvg::apply_changes(std::vector<float>& w) const {
  const std::size_t rows = touched_.size() / 2;
  each_row(layout(), [&](std::size_t row, std::size_t at, std::size_t cols) {
    float* v = w.data() + at;
    const float* x = start_.data() + at;
    // k learners' summed change S times a damping: k^(add_power - 1) (S times it is their mean times
    // k^add_power), and with add_agreement up to 1 where their changes disagree. Changes that agree add up to
    // more than their squares (all k equal to d: |S|^2 = k^2 |d|^2, sum |d_i|^2 = k |d|^2); then
    // sum |d_i|^2 / |S|^2 is 1/k, their mean. Changes that do not (|S|^2 <= sum |d_i|^2) are added whole.
    const float k = touched_[row];
    float damp = k > 1.0f && add_power_ < 1.0f ? std::pow(k, add_power_ - 1.0f) : 1.0f;
    if (agreement_ && k > 1.0f) {
      float sum2 = 0.0f;
      for (std::size_t c = 0; c < cols; ++c) sum2 += v[c] * v[c];
      const float squares = touched_[rows + row];
      const float disagree = sum2 > squares ? squares / sum2 : 1.0f;
      damp = add_power_ < 1.0f ? std::max(damp, disagree) : disagree;
    }
    for (std::size_t c = 0; c < cols; ++c) v[c] = x[c] + damp * v[c];
  });
}

}  // namespace fedavg::training
