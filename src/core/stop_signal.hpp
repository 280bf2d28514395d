// SIGINT/SIGTERM handling. mpiexec forwards these signals to every rank; the handler only records the
// signal, and the Dispatcher ends the run at the next round boundary, writing its checkpoint and outputs.
// Lives on main()'s stack: installs the handlers in its constructor and restores the old ones on destruction.
#pragma once

#include <csignal>

namespace fedavg::core {

class StopSignal {
 public:
  StopSignal();
  ~StopSignal();
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  // The signal received (SIGINT or SIGTERM), or 0.
  int received() const;
  // "SIGINT" / "SIGTERM".
  static const char* name(int signo);

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace fedavg::core
