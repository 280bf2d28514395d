// The close of a lock-step round by a host's leader while the host's other learners train on (RunPlan::overlap,
// docs/strategies.md#training-on-through-the-exchange-overlap): the exchange works on a copy of the shared weights
// taken at the round's end, and what it changed in that copy (the combined change of every host, less this host's own)
// is then added to the shared weights in place, on top of the steps the host took meanwhile, as Hogwild adds its
// learners' steps. Only for an exchange that replaces the weights (the dense one); the sparse exchange runs on the
// shared weights in place (RoundExchange::adds_in_place).
#pragma once

#include <vector>

#include "core/floats.hpp"
#include "training/strategies/round_exchange.hpp"

namespace fedavg::training {

class OverlappedClose {
 public:
  // RoundExchange::close on a copy of `w` (the shared weights, which others write meanwhile), then `w` += what the
  // exchange changed in the copy.
  void close(RoundExchange& exchange, core::Floats w, double share, RoundEnd end);

 private:
  std::vector<float> before_;  // the copy as the round ended
  std::vector<float> after_;   // the same, exchanged
};

}  // namespace fedavg::training
