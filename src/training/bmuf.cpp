#include "training/bmuf.hpp"

#include <algorithm>

namespace fedavg::training {

void Bmuf::learner_begin(RoundSync& sync, std::vector<float>& w, bool) { sync.weights(w); }

void Bmuf::learner_end(RoundSync& sync, std::vector<float>& w) { sync.average_into_root(w); }

void Bmuf::dispatcher_begin(RoundSync& sync, std::vector<float>& w, bool) {
  sync.weights(w);
  global_ = w;
}

void Bmuf::dispatcher_end(RoundSync& sync, std::vector<float>& w) {
  std::fill(w.begin(), w.end(), 0.0f);
  sync.average_into_root(w);
  if (m_.size() != w.size()) m_.assign(w.size(), 0.0f);
  // g = global - average (a pseudo-gradient); m = mu m + g; global -= lr (nesterov ? g + mu m : m).
  for (std::size_t i = 0; i < w.size(); ++i) {
    const float g = global_[i] - w[i];
    m_[i] = momentum_ * m_[i] + g;
    const float step = nesterov_ ? g + momentum_ * m_[i] : m_[i];
    w[i] = global_[i] - block_lr_ * step;
  }
}

std::string Bmuf::divergence_hint(int) const { return "lower lr, block_lr or block_momentum"; }

}  // namespace fedavg::training
