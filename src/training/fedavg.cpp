#include "training/fedavg.hpp"

namespace fedavg::training {

// The same on both sides. A process's first round starts from the Dispatcher's weights. The sum up the learner
// tree is the new global weights: the Dispatcher keeps the copy it received, and learner 1, which computed it,
// passes it down its subtree at once, so the next round needs nothing from the Dispatcher.
void FedAvg::open_round(RoundSync& sync, std::vector<float>& w, bool first) {
  if (first) sync.weights(w);
}

void FedAvg::close_round(RoundSync& sync, std::vector<float>& w, float share) {
  sync.average_into_root(w, share);
  sync.weights(w, true);
}

}  // namespace fedavg::training
