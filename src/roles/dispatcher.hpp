// Dispatcher: owns the global model. Each round it broadcasts the weights, gathers the learners' window-
// weighted average, evaluates the test loss, logs and checkpoints, and decides whether to stop (target,
// max_rounds or max_seconds). At the end it writes the embeddings and the final statistics line.
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
