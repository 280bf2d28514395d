// Scripted failures for testing (--inject-fault RANK:ROUND:KIND): a rank throws, kills itself, crashes, hangs or
// pauses when it reaches the given round (for pipeline ranks: the given block). Parsed here; core::Hooks fires them.
#pragma once

#include <string>
#include <vector>

namespace fedavg::core {

struct Fault {
  enum class Kind { Exception, Kill, Crash, Hang, KillInCheckpoint, Pause };
  int rank = -1;
  long round = 0;
  Kind kind = Kind::Exception;
  double seconds = 0.0;  // Pause: how long the rank is busy, answering nobody (a slow disk, a long step)
};

// Throws InputError if a fault names a rank outside the job.
void check_faults(const std::vector<Fault>& faults, int world_size);

// Parses "RANK:ROUND:KIND" (KIND: exception, kill, crash, hang, kill_in_checkpoint, pause=SECONDS); throws
// InputError.
Fault parse_fault(const std::string& spec);

// Kills this process at once with SIGKILL (no cleanup, like a crash).
[[noreturn]] void die_now();

// Writes through a null pointer: the SIGSEGV of a real crash, through whatever handlers the libraries installed.
[[noreturn]] void crash_now();

}  // namespace fedavg::core
