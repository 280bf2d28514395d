#include "comm/environment.hpp"

#include <mpi.h>

#include <csignal>
#include <cstdlib>

#include "comm/error.hpp"
#include "comm/ucx_finalize.hpp"

namespace fedavg::comm {
namespace {

// UCX's TCP transport moves data that cannot go zero-copy (rendezvous and eager protocols alike) one segment
// per progress call, on both sides; its default segments (tens of KB) let a waiter that sleeps between polls
// stall a transfer of megabytes for seconds. One-megabyte segments move a batch or the weights in a few polls.
// Set before MPI_Init, unless the user set them (a receive segment smaller than the send one fails MPI_Init).
constexpr const char* kTcpSegment = "1M";

void transport_defaults() {
  const bool tx = std::getenv("UCX_TCP_TX_SEG_SIZE") != nullptr, rx = std::getenv("UCX_TCP_RX_SEG_SIZE") != nullptr;
  if (!tx && !rx) {
    setenv("UCX_TCP_TX_SEG_SIZE", kTcpSegment, 0);
    setenv("UCX_TCP_RX_SEG_SIZE", kTcpSegment, 0);
  } else if (tx && !rx) {
    setenv("UCX_TCP_RX_SEG_SIZE", std::getenv("UCX_TCP_TX_SEG_SIZE"), 0);
  }
}

// UCX installs its own handler of SIGSEGV, SIGBUS, SIGILL and SIGFPE as its library loads. It prints a backtrace
// with calls that are not safe in a signal handler: a crash that comes while the allocator's lock is held (a stack
// overflow in a parser, say) deadlocks in it, and the rank hangs instead of dying. Put back the default action
// after MPI_Init, so a crashed rank dies of its signal and its watcher names it; unless the user asked for UCX's
// handler by setting UCX_HANDLE_ERRORS (=bt for its backtraces).
void crash_defaults() {
  if (std::getenv("UCX_HANDLE_ERRORS") != nullptr) return;
  for (const int s : {SIGSEGV, SIGBUS, SIGILL, SIGFPE}) std::signal(s, SIG_DFL);
}

}  // namespace

Environment::Environment(int& argc, char**& argv) {
  ucx_finalize_progress_linked();  // links comm/ucx_finalize.cpp's UCX entry points into the program
  transport_defaults();
  int provided = 0;
  check_mpi(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  crash_defaults();
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  check_mpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
}

std::string Environment::library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string v(text, static_cast<std::size_t>(length));
  const auto nl = v.find('\n');
  return v.substr(0, nl);
}

Environment::~Environment() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

}  // namespace fedavg::comm
