#include "training/collectives/round_sync.hpp"

#include <array>
#include <cstdint>

namespace fedavg::training {

comm::Deadline RoundSync::deadline() const {
  // Learners wait in collectives only because some member is late: that member is named elsewhere first.
  return comm::Deadline::after(liveness_ * (comm_.rank() == 0 ? comm::kDirect : comm::kIndirect));
}

comm::WindowTotals RoundSync::totals(const comm::WindowTotals& mine) {
  const auto in = mine.encode();
  std::vector<double> sum(in.size());
  comm_.iallreduce_sum(in.data(), sum.data(), in.size()).wait_until(deadline(), waits_.collective());
  return comm::WindowTotals::decode(sum);
}

comm::Arrival RoundSync::await_member(int rank, comm::Tag tag, const comm::Deadline& until) const {
  return comm_.await_message(rank, tag, until, who(rank), waits_.collective());
}

std::string RoundSync::who(int rank) const {
  if (rank == 0) return "the global weights from the Dispatcher";
  const auto world = rank >= 1 && static_cast<std::size_t>(rank) <= learner_ranks_.size()
                         ? learner_ranks_[static_cast<std::size_t>(rank - 1)]
                         : -1;
  return "the weights of learner rank " + (world >= 0 ? std::to_string(world) : "?");
}

bool RoundSync::same_everywhere(double value) {
  // The largest of {v, -v} over the members is {max, -min}: the values agree if max == min.
  const std::array<double, 2> mine{value, -value};
  std::array<double, 2> range{};
  comm_.iallreduce_max(mine.data(), range.data(), mine.size()).wait_until(deadline(), waits_.collective());
  return range[0] == -range[1];
}

}  // namespace fedavg::training
