// What a rank's work is built from: the run's configuration, who this rank is, its communicators, its Python
// interpreter, how it waits and its test hooks. main() owns all of it, and it outlives every role.
#pragma once

#include <algorithm>
#include <vector>

#include "core/config.hpp"
#include "core/hooks.hpp"
#include "core/rank_info.hpp"
#include "core/rank_map.hpp"
#include "core/stop_signal.hpp"

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
  std::vector<int> learner_hosts;      // by rank of `learners`: its host (Communicator::hosts); empty off it
  bridge::Interpreter& py;
  const core::StopSignal& signals;  // SIGINT/SIGTERM seen by this rank
  const comm::WaitPolicy& waits;    // how this rank's waits sleep
  core::Hooks& hooks;               // --inject-fault and the slow-learner option, for this rank

  // Every member of `learners` runs on one host (shares its memory).
  bool learners_on_one_host() const {
    return std::all_of(learner_hosts.begin(), learner_hosts.end(), [&](int h) { return h == learner_hosts[0]; });
  }
};

}  // namespace fedavg::training
