#include "training/strategy.hpp"

#include "core/error.hpp"
#include "training/bmuf.hpp"
#include "training/bsp.hpp"
#include "training/easgd.hpp"
#include "training/fedavg.hpp"
#include "training/hogwild.hpp"

namespace fedavg::training {

std::unique_ptr<Strategy> Strategy::make(const core::Settings& s) {
  // The combine rule of the lock-step strategies: fedavg's combine add, else the window-weighted average.
  const CombineRule average = CombineRule::average(s.sparse_weighting == core::SparseWeighting::Touched);
  const CombineRule fedavg = s.combine == core::Combine::Add ? CombineRule::add(s.add_power, s.add_agreement) : average;
  switch (s.strategy) {
    case core::StrategyKind::FedAvg: return std::make_unique<FedAvg>(fedavg);
    case core::StrategyKind::Bsp: return std::make_unique<Bsp>(average);
    case core::StrategyKind::Bmuf: return std::make_unique<Bmuf>(s.block_lr, s.block_momentum, s.nesterov, average);
    case core::StrategyKind::Diloco: return std::make_unique<Bmuf>(s.block_lr, s.block_momentum, true, average);
    case core::StrategyKind::Easgd: return std::make_unique<Easgd>(s.elastic_alpha);
    case core::StrategyKind::Hogwild: return std::make_unique<Hogwild>();
  }
  throw core::Error("no strategy of kind " + std::to_string(static_cast<int>(s.strategy)));
}

float* Strategy::learner_weights(const Context&, std::size_t) { return nullptr; }

int Strategy::sharing(const Context&) const { return 1; }

bool Strategy::moves_whole_weights(const core::Settings& s, std::size_t params) const {
  return s.exchange == core::Exchange::Dense || (s.exchange == core::Exchange::Auto && params < core::kLargeModel);
}

std::string Strategy::divergence_hint(int) const { return "lower lr"; }

}  // namespace fedavg::training
