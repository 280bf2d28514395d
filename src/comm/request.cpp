#include "comm/request.hpp"

#include <exception>
#include <iostream>

#include "comm/error.hpp"

namespace fedavg::comm {

Request& Request::operator=(Request&& o) noexcept {
  if (this != &o) {
    release_pending();
    r_ = std::exchange(o.r_, MPI_REQUEST_NULL);
    what_ = std::move(o.what_);
    peers_ = std::move(o.peers_);
    sending_ = o.sending_;
  }
  return *this;
}

Request::~Request() { release_pending(); }

void Request::release_pending() noexcept {
  if (r_ == MPI_REQUEST_NULL) return;
  if (std::uncaught_exceptions() > 0) {
    // The real error is on its way out and the job is about to be aborted. Abandon the request rather than
    // cancel it: cancelling a send in flight is unreliable (deprecated in MPI-4), and the peer may still be
    // reading from its buffer (Outbox keeps such buffers alive for the same reason).
    r_ = MPI_REQUEST_NULL;
    return;
  }
  std::cerr << "[fedavg] FATAL: leaked request (" << what_ << ") destroyed while pending" << std::endl;
  MPI_Abort(MPI_COMM_WORLD, 3);
}

bool Request::test() {
  if (r_ == MPI_REQUEST_NULL) return true;
  int flag = 0;
  check_mpi(MPI_Test(&r_, &flag, MPI_STATUS_IGNORE), "MPI_Test " + what_);
  return flag != 0;
}

Clock::time_point Request::wait_until(const Deadline& deadline, const Pace& pace) {
  return poll_until([this] { return test(); }, deadline.peers.empty() ? deadline.on(peers_, sending_) : deadline, what_,
                    pace);
}

}  // namespace fedavg::comm
