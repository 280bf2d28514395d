// Names a rank that a signal ends. A rank killed outright (SIGKILL from the out-of-memory killer, SIGSEGV in a
// library) cannot print its own `[fedavg] rank N (Role): reason` line, and mpiexec names only a process id. So
// each rank starts as two processes: the watcher, which mpiexec launched, forks the rank before MPI starts and
// waits. When the rank dies of a signal without having printed a failure line of its own, the watcher prints
// `[fedavg] rank N (Role): killed by signal S (NAME) on host H` and dies of the same signal; otherwise it exits
// with the rank's status. It passes SIGINT, SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2 on to the rank, and the rank
// dies with it: a rank whose watcher alone is killed prints `[fedavg] rank N (Role): its watcher, process P (the
// process mpiexec started), was killed; the rank ends with it` and exits. FEDAVG_RANK_WATCH=0 runs the rank alone
// (e.g. under a debugger).
#pragma once

#include "core/rank_info.hpp"

namespace fedavg::core {

// Returns in the rank (or in the one process when watching is off or fork fails); the watcher never returns.
void watch_rank();

// The rank: who it is, once known; the watcher names it so.
void tell_watcher(const RankInfo& me);

// The rank: its liveness_seconds. A rank stopped by a signal (SIGSTOP, SIGTSTP) for half of it is ended by its
// watcher, which names it (`[fedavg] rank N (Role): stopped by signal 19 (SIGSTOP) on host H for 60 s ...`),
// before the peers that wait on it run out of their own limits (liveness_seconds and more). main tells it the
// command line's or cfg.json's value once the command line is read (core::liveness_hint) and the loaded one later;
// until the first, the limit is 60 s, half of the default, and the line says so ("60 s (the limit before the
// settings are read, ...)").
void tell_watcher_liveness(double liveness_seconds);

// The rank: it has printed its failure line, so the watcher adds none when the job's end kills it.
void tell_watcher_failure_reported();

}  // namespace fedavg::core
