// Scripted failures for testing (--inject-fault RANK:ROUND:KIND): a rank throws, kills itself or hangs when it
// reaches the given round (for pipeline ranks: the given block). Lets tests exercise every role's failure.
#pragma once

#include <string>
#include <vector>

#include "core/role.hpp"

namespace fedavg::core {

struct Fault {
  enum class Kind { Exception, Kill, Hang, KillInCheckpoint };
  int rank = -1;
  long round = 0;
  Kind kind = Kind::Exception;
};

// Throws InputError if a fault names a rank outside the job.
void check_faults(const std::vector<Fault>& faults, int world_size);

// Parses "RANK:ROUND:KIND" (KIND: exception, kill, hang, kill_in_checkpoint); throws InputError.
Fault parse_fault(const std::string& spec);

// Injects every fault planned for `me.rank` at `round` whose kind is not KillInCheckpoint.
void inject_faults(const std::vector<Fault>& faults, const RankInfo& me, long round);
// True if a KillInCheckpoint fault is planned for `me.rank` at `round`.
bool kill_in_checkpoint_planned(const std::vector<Fault>& faults, const RankInfo& me, long round);
// Kills this process at once with SIGKILL (no cleanup, like a crash).
[[noreturn]] void die_now();

}  // namespace fedavg::core
