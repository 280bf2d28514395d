// Errors raised by the MPI layer: a failed MPI call, or a peer that did not answer before its deadline.
#pragma once

#include <string>

#include "core/error.hpp"

namespace fedavg::comm {

// An MPI call returned an error; what() carries the call's description and MPI's error string.
class Error : public core::Error {
 public:
  using core::Error::Error;
};

// A wait passed its liveness deadline; what() names the peer and what was awaited.
class Timeout : public core::Error {
 public:
  using core::Error::Error;
};

// Throws comm::Error("<what>: <MPI error string>") unless rc == MPI_SUCCESS.
void check_mpi(int rc, const std::string& what);

}  // namespace fedavg::comm
