// Owns one nonblocking MPI request. Move-only. Destroying a pending request is a bug (the job aborts with
// "leaked request") unless an exception is unwinding, in which case the request is abandoned quietly: the
// job is about to abort, and the real error must be the one printed.
#pragma once

#include <mpi.h>

#include <string>
#include <utility>

#include "comm/wait.hpp"

namespace fedavg::comm {

class Request {
 public:
  Request() = default;
  Request(MPI_Request r, std::string what) : r_(r), what_(std::move(what)) {}
  Request(Request&& o) noexcept : r_(std::exchange(o.r_, MPI_REQUEST_NULL)), what_(std::move(o.what_)) {}
  Request& operator=(Request&& o) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request();

  bool pending() const { return r_ != MPI_REQUEST_NULL; }
  // True once the operation has completed (the request is then released). Never blocks.
  bool test();
  // Polls with backoff until complete; throws comm::Timeout naming `what` once the deadline passes. `pace`:
  // see WaitPolicy. Returns when a poll last found it pending (see poll_until).
  Clock::time_point wait_until(const Deadline& deadline, const Pace& pace = {});
  const std::string& what() const { return what_; }

 private:
  void release_pending() noexcept;
  MPI_Request r_ = MPI_REQUEST_NULL;
  std::string what_;
};

}  // namespace fedavg::comm
