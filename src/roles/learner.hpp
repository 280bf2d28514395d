// Learner: each round, takes the global weights from the Dispatcher, trains `bpe` batches from its Batcher,
// and contributes its weights to the window-weighted average.
#pragma once

#include "roles/role.hpp"

namespace fedavg::roles {

class Learner : public Role {
 public:
  explicit Learner(const Context& ctx) : ctx_(ctx) {}
  void run() override;

 private:
  const Context& ctx_;
};

}  // namespace fedavg::roles
