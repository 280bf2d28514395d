#include "comm/abort.hpp"

#include <mpi.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "core/log.hpp"

namespace fedavg::comm {
namespace {

// How long MPI_Abort may take before the rank ends itself. MPI_Abort asks mpiexec, through the host's launcher
// proxy, to end the job; on a host cut off from the network that request never arrives and MPI_Abort never
// returns, so without this limit the rank (and its watcher, which waits for it) would stay behind.
constexpr std::chrono::seconds kAbortLimit{5};

}  // namespace

void abort_job(const core::RankInfo& me, std::string_view reason, int status) {
  core::log_failure(me, reason);
  // Give mpiexec's output forwarding a moment to pass the line on before the abort tears the job down.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  std::thread([status] {
    std::this_thread::sleep_for(kAbortLimit);
    ::_exit(status);
  }).detach();
  MPI_Abort(MPI_COMM_WORLD, status);
  std::abort();  // MPI_Abort does not return; this only satisfies [[noreturn]].
}

void abort_job_collective(const core::RankInfo& me, std::string_view reason) {
  if (me.rank != 0) {
    std::this_thread::sleep_for(std::chrono::seconds(5));
  }
  abort_job(me, reason, kExitBadInput);
}

}  // namespace fedavg::comm
