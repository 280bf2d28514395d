#include "training/strategy.hpp"

#include "core/error.hpp"
#include "training/bmuf.hpp"
#include "training/bsp.hpp"
#include "training/easgd.hpp"
#include "training/fedavg.hpp"
#include "training/hogwild.hpp"

namespace fedavg::training {

std::unique_ptr<Strategy> Strategy::make(const core::Settings& s) {
  switch (s.strategy) {
    case core::StrategyKind::FedAvg: return std::make_unique<FedAvg>(s.combine, s.add_power, s.add_agreement);
    case core::StrategyKind::Bsp: return std::make_unique<Bsp>();
    case core::StrategyKind::Bmuf: return std::make_unique<Bmuf>(s.block_lr, s.block_momentum, s.nesterov);
    case core::StrategyKind::Diloco: return std::make_unique<Bmuf>(s.block_lr, s.block_momentum, true);
    case core::StrategyKind::Easgd: return std::make_unique<Easgd>(s.elastic_alpha);
    case core::StrategyKind::Hogwild: return std::make_unique<Hogwild>();
  }
  throw core::Error("no strategy of kind " + std::to_string(static_cast<int>(s.strategy)));
}

float* Strategy::learner_weights(const Context&, std::size_t) { return nullptr; }

std::string Strategy::divergence_hint(int) const { return "lower lr"; }

}  // namespace fedavg::training
