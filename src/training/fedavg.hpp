// fedavg, Federated Averaging (the default): each round the Dispatcher broadcasts the global weights, every
// learner trains from them, and their window-weighted average replaces them (docs/strategies.md#fedavg).
#pragma once

#include "training/lockstep.hpp"

namespace fedavg::training {

class FedAvg : public Lockstep {
 protected:
  void learner_begin(RoundSync& sync, std::vector<float>& w, bool first) override;
  void learner_end(RoundSync& sync, std::vector<float>& w) override;
  void dispatcher_begin(RoundSync& sync, std::vector<float>& w, bool first) override;
  void dispatcher_end(RoundSync& sync, std::vector<float>& w) override;
};

}  // namespace fedavg::training
