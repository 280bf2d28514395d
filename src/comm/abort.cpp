#include "comm/abort.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "core/log.hpp"

namespace fedavg::comm {

void abort_job(const core::RankInfo& me, std::string_view reason) {
  core::log_failure(me, reason);
  // Give mpiexec's output forwarding a moment to pass the line on before the abort tears the job down.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();  // MPI_Abort does not return; this only satisfies [[noreturn]].
}

void abort_job_collective(const core::RankInfo& me, std::string_view reason) {
  if (me.rank != 0) {
    std::this_thread::sleep_for(std::chrono::seconds(5));
  }
  abort_job(me, reason);
}

}  // namespace fedavg::comm
