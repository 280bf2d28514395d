#include "training/strategies/overlapped_close.hpp"

#include <cstddef>

namespace fedavg::training {

void OverlappedClose::close(RoundExchange& exchange, core::Floats w, double share, RoundEnd end) {
  before_.assign(w.begin(), w.end());
  after_ = before_;
  exchange.close(after_, share, end);
  float* const out = w.data();
  const float* const was = before_.data();
  const float* const now = after_.data();
#pragma omp simd
  for (std::size_t i = 0; i < w.size(); ++i) out[i] += now[i] - was[i];
}

}  // namespace fedavg::training
