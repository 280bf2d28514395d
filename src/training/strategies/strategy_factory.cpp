// Strategy::make, the strategy factory: the one place that tells the strategies apart by core::StrategyKind.
#include "core/error.hpp"
#include "training/strategies/bmuf.hpp"
#include "training/strategies/bsp.hpp"
#include "training/strategies/easgd.hpp"
#include "training/strategies/fedavg.hpp"
#include "training/strategies/hogwild.hpp"
#include "training/strategy.hpp"

namespace fedavg::training {

std::unique_ptr<Strategy> Strategy::make(const core::Settings& s, const RunPlan& plan) {
  // The combine rule of the lock-step strategies: fedavg's combine add (where the plan keeps it, with the plan's
  // power), else the window-weighted average.
  const CombineRule average = CombineRule::average(s.sparse_weighting == core::SparseWeighting::Touched);
  const CombineRule fedavg = plan.combine == core::Combine::Add ? CombineRule::add(plan.add_power, s.add_agreement)
                                                                : average;
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

StrategyTraits Strategy::traits(const core::Settings& s) {
  StrategyTraits t;
  switch (s.strategy) {
    case core::StrategyKind::FedAvg:
      t.adds = s.combine == core::Combine::Add;
      t.trains_through = true;
      [[fallthrough]];
    case core::StrategyKind::Bsp:
    case core::StrategyKind::Bmuf:
    case core::StrategyKind::Diloco: t.lock_step = true; break;
    case core::StrategyKind::Easgd: break;
    case core::StrategyKind::Hogwild: t.host_memory = true; break;
  }
  return t;
}

}  // namespace fedavg::training
