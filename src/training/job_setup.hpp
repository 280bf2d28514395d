// What a job settles before any role starts: rank 0 claims the output folder (nothing finished is lost; see
// core::OutputFolder), and without --config prepares the config from the corpora into OUT/config and ships it to
// every rank; then every rank loads the same settings, the command line's overrides on top.
#pragma once

#include <string>

#include "core/command_line.hpp"
#include "core/config.hpp"
#include "training/run_plan.hpp"

namespace fedavg::comm {
class Communicator;
}
namespace fedavg::bridge {
class Interpreter;
}

namespace fedavg::training {

class Topology;

// Collective over `world`. Throws InputError for bad input (rank 0 reports it).
core::Config settle_config(const core::CommandLine& line, const comm::Communicator& world, bridge::Interpreter& py);

// What the run does with `cfg`'s settings on `topology`, for a strategy with `traits` (Strategy::traits). From
// here on the settings' bpe and add_power are the plan's: what each learner trains a round (cfg.json keeps the
// key as given), and combine add's power; DispatcherRun, LearnerRun, the Batcher and Strategy::make read them
// there.
RunPlan plan_run(core::Config& cfg, const Topology& topology, const StrategyTraits& traits);

// The versions fedavg_mpi runs with, one per line (--version; imports torch).
std::string versions(bridge::Interpreter& py);

}  // namespace fedavg::training
