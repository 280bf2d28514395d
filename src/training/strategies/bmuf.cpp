#include "training/strategies/bmuf.hpp"

namespace fedavg::training {

void Bmuf::open_round(RoundSync& sync, core::Floats w, bool) {
  sync.weights(w);
  if (sync.on_dispatcher()) global_.assign(w.begin(), w.end());
}

void Bmuf::close_round(RoundSync& sync, core::Floats w, float share) {
  sync.average_into_root(w, share);
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

void Bmuf::outer_step(SparseDelta& average, const Layout& layout) {
  const std::size_t total = params_of(layout);
  if (m_.size() != total) m_.assign(total, 0.0f);
  for (std::size_t t = 0; t < layout.size(); ++t) {
    auto& part = average.parts[t];
    const std::size_t cols = layout[t].cols;
    for (std::size_t k = 0; k < part.rows.size(); ++k) {
      float* m = m_.data() + layout[t].offset + static_cast<std::size_t>(part.rows[k]) * cols;
      float* v = part.values.data() + k * cols;
      for (std::size_t c = 0; c < cols; ++c) {
        const float g = -v[c];  // the pseudo-gradient: global - average
        m[c] = momentum_ * m[c] + g;
        v[c] = -block_lr_ * (nesterov_ ? g + momentum_ * m[c] : m[c]);
      }
    }
  }
}

std::string Bmuf::divergence_hint(int) const { return "lower lr, block_lr or block_momentum"; }

}  // namespace fedavg::training
