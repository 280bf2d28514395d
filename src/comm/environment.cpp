#include "comm/environment.hpp"

#include <mpi.h>

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

}  // namespace

Environment::Environment(int& argc, char**& argv) {
  ucx_finalize_progress_linked();  // links comm/ucx_finalize.cpp's UCX entry points into the program
  transport_defaults();
  int provided = 0;
  check_mpi(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
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
