#include "core/stop_signal.hpp"

#include <atomic>

namespace fedavg::core {
namespace {

// A signal handler can only reach process-wide state; this flag is the one such variable in the program.
std::atomic<int> g_received{0};

extern "C" void record_signal(int signo) { g_received.store(signo); }

}  // namespace

StopSignal::StopSignal() {
  struct sigaction sa {};
  sa.sa_handler = record_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &old_int_);
  sigaction(SIGTERM, &sa, &old_term_);
}

StopSignal::~StopSignal() {
  sigaction(SIGINT, &old_int_, nullptr);
  sigaction(SIGTERM, &old_term_, nullptr);
}

int StopSignal::received() const { return g_received.load(); }

const char* StopSignal::name(int signo) {
  switch (signo) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return "signal";
  }
}

}  // namespace fedavg::core
