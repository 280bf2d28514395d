// The interface every role implements, and the factory that builds this rank's role from its Context.
#pragma once

#include <memory>

#include "training/context.hpp"

namespace fedavg::roles {

using training::Context;

class Role {
 public:
  virtual ~Role() = default;
  // Runs the role to completion. Returns only after every message this rank exchanged is complete.
  // Throws core::Error (or a subclass) on any failure.
  virtual void run() = 0;
};

// Builds the role for ctx.me.role.
std::unique_ptr<Role> make(const Context& ctx);

}  // namespace fedavg::roles
