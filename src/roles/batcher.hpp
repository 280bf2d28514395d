// Batcher: keeps windows from its Filter ready (a few rounds' worth per learner) and answers each learner's
// Request at once with one Batch. It returns a credit to the Filter for every block it has used up.
#pragma once

#include "roles/role.hpp"

namespace fedavg::roles {

class Batcher : public Role {
 public:
  explicit Batcher(const Context& ctx) : ctx_(ctx) {}
  void run() override;

 private:
  const Context& ctx_;
};

}  // namespace fedavg::roles
