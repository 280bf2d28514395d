#include "training/bmuf.hpp"

namespace fedavg::training {

void Bmuf::open_round(RoundSync& sync, std::vector<float>& w, bool) {
  sync.weights(w);
  if (sync.on_dispatcher()) global_ = w;
}

void Bmuf::close_round(RoundSync& sync, std::vector<float>& w) {
  sync.average_into_root(w);
  if (!sync.on_dispatcher()) return;
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
