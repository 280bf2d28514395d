// fedavg, Federated Averaging (the default): each round the Dispatcher broadcasts the global weights, every
// learner trains from them, and their window-weighted average replaces them (docs/strategies.md#fedavg).
#pragma once

#include "training/lockstep.hpp"

namespace fedavg::training {

class FedAvg : public Lockstep {
 protected:
  void open_round(RoundSync& sync, std::vector<float>& w, bool first) override;
  void close_round(RoundSync& sync, std::vector<float>& w, float share) override;
};

}  // namespace fedavg::training
