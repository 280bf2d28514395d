#include "roles/round_sync.hpp"

namespace fedavg::roles {

comm::Control RoundSync::control(const comm::Control& c) {
  auto wire = c.encode();
  comm_.ibcast(wire.data(), wire.size(), 0).wait_until(deadline());
  return comm::Control::decode(wire);
}

void RoundSync::weights(std::vector<float>& w) { comm_.ibcast(w.data(), w.size(), 0).wait_until(deadline()); }

RoundTotals RoundSync::totals(const RoundTotals& mine) {
  RoundTotals sum{};
  comm_.iallreduce_sum(mine.data(), sum.data(), mine.size()).wait_until(deadline());
  return sum;
}

void RoundSync::average_into_root(std::vector<float>& w) {
  comm_.ireduce_sum_to(w.data(), w.size(), 0).wait_until(deadline());
}

}  // namespace fedavg::roles
