#include "training/strategies/dense_round_exchange.hpp"

#include "training/strategies/lockstep.hpp"

namespace fedavg::training {

void DenseRoundExchange::open(core::Floats w, bool first) { strategy_.open_round(sync(), w, first); }

void DenseRoundExchange::close(core::Floats w, double share, RoundEnd) {
  strategy_.close_round(sync(), w, static_cast<float>(share));
}

}  // namespace fedavg::training
