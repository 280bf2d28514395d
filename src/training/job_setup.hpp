// What a job settles before any role starts: rank 0 claims the output folder (nothing finished is lost; see
// core::OutputFolder), and without --config prepares the config from the corpora into OUT/config and ships it to
// every rank; then every rank loads the same settings, the command line's overrides on top.
#pragma once

#include <optional>
#include <string>

#include "core/command_line.hpp"
#include "core/config.hpp"
#include "core/folder_lock.hpp"
#include "core/rank_info.hpp"
#include "core/rank_map.hpp"
#include "training/run_plan.hpp"

namespace fedavg::comm {
class Communicator;
}
namespace fedavg::bridge {
class Interpreter;
}

namespace fedavg::training {

class Topology;

// Collective over `world`. Throws InputError for bad input (rank 0 reports it). Rank 0 takes `lock` on the output
// folder (one job at a time) once the command line is checked, before it claims the folder; the caller holds it
// until the job ends.
core::Config settle_config(const core::CommandLine& line, const comm::Communicator& world, bridge::Interpreter& py,
                           std::optional<core::FolderLock>& lock);

// What the run does with `cfg`'s settings on `topology` (its learners reading `pipelines` pipelines), for a strategy
// with `traits` (Strategy::traits): the settings stay as the user wrote them, and what each learner trains a round,
// combine add's power and the device are the plan's. Throws InputError where the settings do not apply to the
// strategy (the sparse exchange of a strategy that does not run lock-step rounds), and where a round's windows (bs x
// bpe, kept for prefetch_rounds) or the shuffle pool (shuffle_windows) would need more than the machine's memory
// (core::check_fits).
RunPlan plan_run(const core::Config& cfg, const Topology& topology, const StrategyTraits& traits, int pipelines);

// The first learner of each host warns when its host runs more learners than it has cores for this job: they share
// the cores, and the job is slower for them.
void warn_learners_beyond_cores(const Topology& topology, const core::RankMap& map, const core::RankInfo& me);

// The versions fedavg_mpi runs with, one per line (--version; imports torch).
std::string versions(bridge::Interpreter& py);

}  // namespace fedavg::training
