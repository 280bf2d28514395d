#include "comm/environment.hpp"

#include <mpi.h>

#include "comm/error.hpp"

namespace fedavg::comm {

Environment::Environment(int& argc, char**& argv) {
  int provided = 0;
  check_mpi(MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided), "MPI_Init_thread");
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
