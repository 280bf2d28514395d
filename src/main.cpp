// fedavg_mpi: startup, role dispatch, teardown. Every failure on any rank ends the whole job with one line
// naming the rank, its role and the reason.
#include <iostream>
#include <optional>
#include <vector>

#include "bridge/interpreter.hpp"
#include "comm/abort.hpp"
#include "comm/communicator.hpp"
#include "comm/environment.hpp"
#include "comm/wait_chain.hpp"
#include "comm/wait_policy.hpp"
#include "core/command_line.hpp"
#include "core/error.hpp"
#include "core/folder_lock.hpp"
#include "core/hooks.hpp"
#include "core/outputs.hpp"
#include "core/rank_map.hpp"
#include "core/rank_watch.hpp"
#include "core/stop_signal.hpp"
#include "roles/role.hpp"
#include "training/collectives/topology.hpp"
#include "training/finished_run.hpp"
#include "training/job_setup.hpp"
#include "training/run_plan.hpp"
#include "training/strategy.hpp"

using namespace fedavg;

namespace {

// What every rank checks of the settled config before the roles start, and what rank 0 writes for the supervisor:
// which rank plays which role on which host (scripts/supervise.py tells a learner host from the rest by it).
void check_layout(const core::Config& cfg, const core::RankMap& map, const comm::Communicator& world,
                  const training::Topology& topology, const core::RankInfo& me) {
  training::warn_learners_beyond_cores(topology, map, me);
  core::check_pipelines(cfg, map.pipelines());
  core::check_faults(cfg.faults, map.world_size());
  if (const auto names = world.host_names(); me.rank == 0)
    core::write_file_atomic(cfg.out_dir / (cfg.settings.data_name + "_ranks.json"), map.to_json(names));
}

}  // namespace

int main(int argc, char** argv) {
  core::watch_rank();
  comm::Environment mpi(argc, argv);
  const core::StopSignal signals;
  core::RankInfo me{mpi.world_rank(), core::Role::Unassigned};
  core::tell_watcher(me);
  try {
    const core::CommandLine line = core::parse_command_line(argc, argv);
    core::tell_watcher_liveness(core::liveness_hint(line));
    if (line.help) {
      if (me.rank == 0) std::cout << core::usage();
      return 0;
    }
    const auto world = comm::Communicator::world();
    comm::WaitChain chain;  // every wait answers and asks through it (comm/wait_chain.hpp)
    double liveness = core::Settings{}.liveness_seconds;
    {
      bridge::Interpreter py(line.python_dir, core::torch_threads_hint(line));
      if (line.version) {
        if (me.rank == 0) std::cout << training::versions(py);
        return 0;
      }
      const core::RankMap map(mpi.world_size(), core::pipelines_hint(line));
      me.role = map.role_of(me.rank);
      core::tell_watcher(me);
      // Collective over the world: where the Dispatcher and each learner run, the topology the rounds follow,
      // which also decides how many batches a learner trains a round (the run plan). The ranks start their
      // interpreters at different speeds: they meet at a polled barrier first, since the collectives of hosts()
      // spin while they wait.
      world.ibarrier().wait_until(comm::Deadline::after(liveness * comm::kIndirect));
      const auto topology = training::Topology::of_world(world.hosts(), map);
      std::optional<core::FolderLock> folder_lock;  // rank 0: held from the folder's claim until the job ends
      core::Config cfg = training::settle_config(line, world, py, folder_lock);
      const auto plan = training::plan_run(cfg, topology, training::Strategy::traits(cfg.settings), map.pipelines());
      if (training::resumed_run_is_complete(cfg, world)) return 0;
      liveness = cfg.settings.liveness_seconds;
      core::tell_watcher_liveness(liveness);
      check_layout(cfg, map, world, topology, me);
      const auto learners = world.split(me.role == core::Role::Dispatcher || me.role == core::Role::Learner, me.rank);
      const auto waits = comm::WaitPolicy::choose(cfg.settings.wait_profile, world.ranks_on_node(),
                                                  comm::WaitPolicy::usable_cores());
      core::Hooks hooks(cfg, map, me);
      roles::make({cfg, me, map, world, learners, topology, plan, py, signals, waits, hooks})->run();
    }
    // Arrive at MPI_Finalize together, sleeping rather than spinning while slower ranks finish.
    world.ibarrier().wait_until(comm::Deadline::after(liveness * comm::kIndirect));
    // Stopped by SIGINT/SIGTERM: the run ended cleanly, but did not finish; say so in the exit status.
    if (signals.received()) return 128 + signals.received();
  } catch (const core::CorpusError& e) {
    comm::abort_job(me, e.what(), comm::kExitBadInput);
  } catch (const core::InputError& e) {
    comm::abort_job_collective(me, e.what());
  } catch (const std::exception& e) {
    comm::abort_job(me, e.what());
  }
  return 0;
}
