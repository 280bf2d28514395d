#include "training/strategies/dense_round_exchange.hpp"

#include "training/strategies/lockstep.hpp"

namespace fedavg::training {

void DenseRoundExchange::open(core::Floats w, bool first) { strategy_.open_round(sync(), w, first); }

void DenseRoundExchange::close(core::Floats w, double share, RoundEnd) {
  strategy_.close_round(sync(), w, static_cast<float>(share));
}

bool DenseRoundExchange::adds_in_place() const { return members_ == 1 && strategy_.sole_member_keeps_weights(); }

}  // namespace fedavg::training
