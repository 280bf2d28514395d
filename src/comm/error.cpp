#include "comm/error.hpp"

#include <mpi.h>

namespace fedavg::comm {

void check_mpi(int rc, const std::string& what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(what + ": " + std::string(text, static_cast<std::size_t>(len)));
}

}  // namespace fedavg::comm
