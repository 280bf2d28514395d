// fedavg, Federated Averaging (the default): every learner trains from the global weights, and their
// window-weighted average replaces them (docs/strategies.md#fedavg).
#pragma once

#include "training/lockstep.hpp"

namespace fedavg::training {

class FedAvg : public Lockstep {
 protected:
  void open_round(RoundSync& sync, std::vector<float>& w, bool first) override;
  void close_round(RoundSync& sync, std::vector<float>& w, float share) override;
};

}  // namespace fedavg::training
