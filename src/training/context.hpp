// What a rank's work is built from: the run's configuration and plan, who this rank is, where the learners run,
// its communicators, its Python interpreter, how it waits and its test hooks. main() owns all of it, and it
// outlives every role.
#pragma once

#include "core/config.hpp"
#include "core/hooks.hpp"
#include "core/rank_info.hpp"
#include "core/rank_map.hpp"
#include "core/stop_signal.hpp"
#include "training/collectives/topology.hpp"
#include "training/run_plan.hpp"

namespace fedavg::comm {
class Communicator;
class WaitPolicy;
}  // namespace fedavg::comm
namespace fedavg::bridge {
class Interpreter;
}

namespace fedavg::training {

struct Context {
  const core::Config& cfg;
  core::RankInfo me;
  const core::RankMap& map;
  const comm::Communicator& world;     // duplicate of MPI_COMM_WORLD
  const comm::Communicator& learners;  // Dispatcher (rank 0 here) + Learners; invalid on pipeline ranks
  const Topology& topology;            // the host of each rank of `learners` (on every rank)
  const RunPlan& plan;                 // what the run does with cfg's settings on `topology`
  bridge::Interpreter& py;
  const core::StopSignal& signals;  // SIGINT/SIGTERM seen by this rank
  const comm::WaitPolicy& waits;    // how this rank's waits sleep
  core::Hooks& hooks;               // --inject-fault and the slow-learner option, for this rank
};

}  // namespace fedavg::training
