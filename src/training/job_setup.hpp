// What a job settles before any role starts: rank 0 claims the output folder (nothing finished is lost; see
// core::OutputFolder), and without --config prepares the config from the corpora into OUT/config and ships it to
// every rank; then every rank loads the same settings, the command line's overrides on top.
#pragma once

#include <string>

#include "core/command_line.hpp"
#include "core/config.hpp"

namespace fedavg::comm {
class Communicator;
}
namespace fedavg::bridge {
class Interpreter;
}

namespace fedavg::training {

class Topology;
struct RunPlan;

// Collective over `world`. Throws InputError for bad input (rank 0 reports it). Leaves in `plan` what the run
// does with the settings on `topology` (RunPlan); the settings' bpe and add_power are the plan's (what each
// learner trains a round, combine add's power).
core::Config settle_config(const core::CommandLine& line, const comm::Communicator& world, bridge::Interpreter& py,
                           const Topology& topology, RunPlan& plan);

// The versions fedavg_mpi runs with, one per line (--version; imports torch).
std::string versions(bridge::Interpreter& py);

}  // namespace fedavg::training
