// Dispatcher: owns the global model. It runs the strategy's Dispatcher side round by round (training::Strategy):
// evaluates the test loss, checkpoints (weights, learner states, read positions), logs, and decides whether to
// stop (target, max_rounds, max_seconds or a signal). At the end it writes the embeddings and the final
// statistics line. With --resume it continues from the checkpoint in the out folder (training::DispatcherRun).
#pragma once

#include "roles/role.hpp"

namespace fedavg::roles {

class Dispatcher : public Role {
 public:
  explicit Dispatcher(const Context& ctx) : ctx_(ctx) {}
  void run() override;

 private:
  const Context& ctx_;
};

}  // namespace fedavg::roles
