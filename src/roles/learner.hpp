// Learner: trains a copy of the model on batches from its Batcher, `bpe` steps a round, and exchanges weights
// with the Dispatcher as the strategy's Learner side says (training::Strategy, training::LearnerRun).
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
