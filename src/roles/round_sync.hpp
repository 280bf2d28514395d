// The collectives of one Federated Averaging round on the learner communicator (Dispatcher = rank 0), shared
// by the Dispatcher and the Learners so both sides issue them in the same order.
#pragma once

#include <array>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/messages.hpp"

namespace fedavg::roles {

// Sum over learners of {windows trained, windows * mean train loss}.
using RoundTotals = std::array<double, 2>;

class RoundSync {
 public:
  RoundSync(const comm::Communicator& comm, double liveness_seconds) : comm_(comm), liveness_(liveness_seconds) {}

  // Dispatcher: sends `c`. Learner: receives it.
  comm::Control control(const comm::Control& c = {});
  // Dispatcher: sends the global weights. Learner: overwrites its weights with them.
  void weights(std::vector<float>& w);
  // Everyone: sums `mine` over all members (the Dispatcher contributes zeros).
  RoundTotals totals(const RoundTotals& mine);
  // Everyone: sums `w` (pre-scaled by each learner's share of the windows) into the Dispatcher's `w`, which
  // the Dispatcher must have zeroed.
  void average_into_root(std::vector<float>& w);

 private:
  comm::Deadline deadline() const { return comm::Deadline::after(liveness_); }
  const comm::Communicator& comm_;
  double liveness_;
};

}  // namespace fedavg::roles
