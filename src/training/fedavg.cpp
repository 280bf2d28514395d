#include "training/fedavg.hpp"

namespace fedavg::training {

// The same on both sides: the Dispatcher sends the global weights and receives the sum of the scaled ones,
// the learners receive the former and send the latter.
void FedAvg::open_round(RoundSync& sync, std::vector<float>& w, bool) { sync.weights(w); }

void FedAvg::close_round(RoundSync& sync, std::vector<float>& w, float share) { sync.average_into_root(w, share); }

}  // namespace fedavg::training
