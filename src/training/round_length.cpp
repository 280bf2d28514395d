#include "training/round_length.hpp"

#include <algorithm>
#include <cmath>

namespace fedavg::training {

namespace {

// Weight of the newest round in the averages: a few rounds smooth out one slow exchange.
constexpr double kNewest = 0.3;
// The most a round grows over the last: the overhead is measured again after every round, and grows itself with
// longer rounds (more rows change), so the length approaches its mark from below within a few rounds.
constexpr double kGrowth = 4.0;

double blend(double average, double newest) { return average <= 0 ? newest : average + kNewest * (newest - average); }

}  // namespace

RoundLength::RoundLength(std::int64_t least, double share, double longest_seconds)
    : least_(std::max<std::int64_t>(least, 1)), share_(share), longest_(longest_seconds), steps_(least_) {}

void RoundLength::took(std::int64_t steps, double training_seconds, double round_seconds) {
  if (!adapts() || steps <= 0 || training_seconds <= 0 || round_seconds < training_seconds) return;
  step_seconds_ = blend(step_seconds_, training_seconds / static_cast<double>(steps));
  overhead_seconds_ = blend(overhead_seconds_, round_seconds - training_seconds);
  // overhead / (overhead + k * step) <= share
  const double wanted = overhead_seconds_ * (1.0 - share_) / (share_ * step_seconds_);
  const double longest = std::max(1.0, std::floor(longest_ / step_seconds_));
  const double grown = kGrowth * static_cast<double>(std::max(steps, steps_));
  const double next = std::min({std::ceil(wanted - 1e-6), longest, grown});
  steps_ = std::max(least_, static_cast<std::int64_t>(next));
}

std::int64_t RoundLength::steps_within(double seconds) const {
  if (step_seconds_ <= 0 || steps_ == least_) return steps_;
  const double fit = std::floor(std::max(0.0, seconds) / step_seconds_);
  return std::clamp(static_cast<std::int64_t>(std::min(fit, static_cast<double>(steps_))), least_, steps_);
}

}  // namespace fedavg::training
