#include "training/checkpoint_schedule.hpp"

#include <algorithm>

namespace fedavg::training {

bool CheckpointSchedule::due(long round, long current, double now) {
  decided_.erase(decided_.begin(), decided_.lower_bound(current));
  const auto [it, fresh] = decided_.try_emplace(round, false);
  if (fresh) it->second = (every_ > 0 && round % every_ == 0) || (seconds_ > 0 && now - written_at_ >= spacing());
  return it->second;
}

void CheckpointSchedule::round_ended(double exchange_seconds, bool checkpoint) {
  if (checkpoint && spaced_) extra_ = std::max(0.0, exchange_seconds - last_exchange_);
  last_exchange_ = exchange_seconds;
}

double CheckpointSchedule::spacing() const { return std::max(seconds_, kCheckpointSpacing * extra_); }

}  // namespace fedavg::training
