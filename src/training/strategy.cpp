#include "training/strategy.hpp"

namespace fedavg::training {

float* Strategy::learner_weights(const Context&, std::size_t) { return nullptr; }

int Strategy::sharing(const Context&) const { return 1; }

bool Strategy::moves_whole_weights(const core::Settings& s, std::size_t params) const {
  return s.exchange == core::Exchange::Dense || (s.exchange == core::Exchange::Auto && params < core::kLargeModel);
}

std::string Strategy::divergence_hint(int) const { return "lower lr"; }

}  // namespace fedavg::training
