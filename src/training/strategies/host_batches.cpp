#include "training/strategies/host_batches.hpp"

#include <limits>
#include <utility>

namespace fedavg::training {

bool HostBatches::train_on() {
  if (!share_.claim(claimable_ + next_round_)) return false;
  through_ += run_.train(0, {}, 1);
  return true;
}

comm::WindowTotals HostBatches::round(std::int64_t steps, long cut_round) {
  next_round_ = (steps > 0 ? steps : bpe_) * share_.learners_here();
  claimable_ += next_round_;
  comm::WindowTotals mine = run_.train(cut_round, {}, std::numeric_limits<std::int64_t>::max(),
                                       [&] { return share_.claim(claimable_); });
  through_.through = through_.windows;
  mine += std::exchange(through_, comm::WindowTotals{});
  return mine;
}

}  // namespace fedavg::training
