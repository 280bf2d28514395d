// Ending the whole job from any rank after an error.
#pragma once

#include <string_view>

#include "core/rank_info.hpp"

namespace fedavg::comm {

// The job's exit statuses (mpiexec passes on the status a rank aborts with): a failure, and bad input (a run of
// the same command would fail the same way: scripts/supervise.py does not restart it).
constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;

// Prints "[fedavg] rank N (Role): <reason>" to stderr, flushes, and aborts every rank with `status`. A rank
// whose MPI_Abort has not ended it within 5 s (its host cut off from mpiexec) ends itself, with that status.
[[noreturn]] void abort_job(const core::RankInfo& me, std::string_view reason, int status = kExitFailure);

// For errors every rank detects identically (bad input): rank 0 reports and aborts the job with kExitBadInput;
// other ranks stay quiet, give rank 0 a moment to do so, then abort themselves in case rank 0 could not.
[[noreturn]] void abort_job_collective(const core::RankInfo& me, std::string_view reason);

}  // namespace fedavg::comm
