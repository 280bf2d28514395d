// Owns one nonblocking MPI request. Move-only. Destroying a pending request is a bug (the job aborts with
// "leaked request") unless an exception is unwinding, in which case the request is abandoned quietly: the
// job is about to abort, and the real error must be the one printed.
#pragma once

#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

#include "comm/wait.hpp"

namespace fedavg::comm {

class Request {
 public:
  Request() = default;
  // `peers`: the world ranks whose part completes it (a send's receiver, a collective's other members); `sending`:
  // it is a send.
  Request(MPI_Request r, std::string what, std::vector<int> peers = {}, bool sending = false)
      : r_(r), what_(std::move(what)), peers_(std::move(peers)), sending_(sending) {}
  Request(Request&& o) noexcept
      : r_(std::exchange(o.r_, MPI_REQUEST_NULL)),
        what_(std::move(o.what_)),
        peers_(std::move(o.peers_)),
        sending_(o.sending_) {}
  Request& operator=(Request&& o) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request();

  bool pending() const { return r_ != MPI_REQUEST_NULL; }
  // True once the operation has completed (the request is then released). Never blocks.
  bool test();
  // Polls with backoff until complete; throws comm::Timeout naming `what` once the deadline passes, unless its
  // peers, asked, wait in turn (Verdict; the deadline's peers, else the request's). `pace`: see WaitPolicy.
  // Returns when a poll last found it pending (see poll_until).
  Clock::time_point wait_until(const Deadline& deadline, const Pace& pace = {});
  const std::string& what() const { return what_; }
  const std::vector<int>& peers() const { return peers_; }

 private:
  void release_pending() noexcept;
  MPI_Request r_ = MPI_REQUEST_NULL;
  std::string what_;
  std::vector<int> peers_;
  bool sending_ = false;
};

}  // namespace fedavg::comm
