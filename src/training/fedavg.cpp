#include "training/fedavg.hpp"

#include <algorithm>

namespace fedavg::training {

void FedAvg::learner_begin(RoundSync& sync, std::vector<float>& w, bool) { sync.weights(w); }

void FedAvg::learner_end(RoundSync& sync, std::vector<float>& w) { sync.average_into_root(w); }

void FedAvg::dispatcher_begin(RoundSync& sync, std::vector<float>& w, bool) { sync.weights(w); }

void FedAvg::dispatcher_end(RoundSync& sync, std::vector<float>& w) {
  std::fill(w.begin(), w.end(), 0.0f);
  sync.average_into_root(w);
}

}  // namespace fedavg::training
