// The interface every role implements, the context a role is built from, and the factory.
#pragma once

#include <memory>

#include "core/config.hpp"
#include "core/rank_map.hpp"
#include "core/role.hpp"
#include "core/stop_signal.hpp"

namespace fedavg::comm { class Communicator; }
namespace fedavg::bridge { class Interpreter; }

namespace fedavg::roles {

// What a role needs; everything is owned by main() and outlives the role.
struct Context {
  const core::Config& cfg;
  core::RankInfo me;
  const core::RankMap& map;
  const comm::Communicator& world;     // duplicate of MPI_COMM_WORLD
  const comm::Communicator& learners;  // Dispatcher (rank 0 here) + Learners; invalid on pipeline ranks
  bridge::Interpreter& py;
  const core::StopSignal& signals;     // SIGINT/SIGTERM seen by this rank
};

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
