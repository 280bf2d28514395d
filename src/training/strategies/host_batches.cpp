#include "training/strategies/host_batches.hpp"

#include <algorithm>
#include <limits>
#include <utility>

namespace fedavg::training {

bool HostBatches::claim(std::int64_t limit) {
  const std::int64_t at = share_.claim(limit);
  if (at < 0) return false;
  run_.at_step(start_ + at / share_.learners_here());
  return true;
}

bool HostBatches::train_on() {
  // Ahead of the next Control, whose round may be shorter (a max_epochs run's last): never beyond the run's plan.
  std::int64_t limit = claimable_ + next_round_;
  if (plan_ > 0) limit = std::min(limit, (plan_ - start_) * share_.learners_here());
  if (!claim(limit)) return false;
  through_ += run_.train(0, after_step_, 1);
  return true;
}

comm::WindowTotals HostBatches::round(std::int64_t steps, long cut_round, std::int64_t done, std::int64_t plan) {
  if (start_ < 0) start_ = done;
  plan_ = plan;
  next_round_ = (steps > 0 ? steps : bpe_) * share_.learners_here();
  claimable_ += next_round_;
  comm::WindowTotals mine = run_.train(cut_round, after_step_, std::numeric_limits<std::int64_t>::max(),
                                       [&] { return claim(claimable_); });
  through_.through = through_.windows;
  mine += std::exchange(through_, comm::WindowTotals{});
  return mine;
}

}  // namespace fedavg::training
