// The rows that a host's learners wrote in their shared weights since its leader last read them: one mark per
// row in MPI-3 shared memory (SharedSegment), which every learner sets after its steps and the leader reads and
// clears before its exchange, so that the leader reads only those rows rather than the whole table
// (training::HostShare::take_written).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/shared_segment.hpp"
#include "comm/wait.hpp"

namespace fedavg::comm {

class SharedRowMarks {
 public:
  // Collective over `comm` (one node): marks for `rows` rows, none set.
  SharedRowMarks(const Communicator& comm, std::size_t rows, const Deadline& deadline);

  std::size_t rows() const { return segment_.size(); }
  // Marks rows `first + r` for each r of `rows`. Call it after the writes it names: a mark is released after them.
  void mark(std::size_t first, const std::vector<std::uint32_t>& rows) const;
  // Appends to `out`, ascending, the r in [0, n) whose row `first + r` is marked, and clears those marks. A row
  // marked again while this runs is either taken now or stays marked for the next call; none is lost.
  void take(std::size_t first, std::size_t n, std::vector<std::uint32_t>& out) const;
  // Collective end of use (SharedSegment::release).
  void release(const Deadline& deadline) { segment_.release(deadline); }

 private:
  SharedSegment segment_;
};

}  // namespace fedavg::comm
