// A slot per member of a communicator on one node, in MPI-3 shared memory (SharedSegment): each member posts its
// values for a round in its own slot and goes on, and one reader collects them once every member has posted that
// round. The posters never wait for the reader; the reader waits for the last poster
// (training::HostShare::host_totals: the host's window totals of a round, while its learners train on).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/shared_segment.hpp"
#include "comm/wait.hpp"

namespace fedavg::comm {

class SharedSlots {
 public:
  // Collective over `comm` (one node): a slot of `values` doubles per member, none posted.
  SharedSlots(const Communicator& comm, std::size_t values, const Deadline& deadline);

  std::size_t values() const { return values_; }
  int members() const { return members_; }
  // Writes `values` (values() of them) in this member's slot for `round`, which must be above the slot's last.
  // The caller's protocol must ensure that the reader has read the slot's last round before it is overwritten.
  void post(std::int64_t round, const std::vector<double>& values) const;
  // Whether every member has posted `round` (or a later one).
  bool all_posted(std::int64_t round) const;
  // The values every member posted, summed element by element (after all_posted).
  std::vector<double> sum() const;
  // Collective end of use (SharedSegment::release).
  void release(const Deadline& deadline) { segment_.release(deadline); }

 private:
  std::int64_t* stamp(int member) const;
  const double* slot(int member) const;

  std::size_t values_;
  int members_;
  int me_;
  SharedSegment segment_;
};

}  // namespace fedavg::comm
