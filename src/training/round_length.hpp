// How many batches each learner trains in the next round where rounds are sized by what the exchange costs
// (RunPlan::link_sized_rounds: hosts whose learners share the weights, across a network). After every round the
// Dispatcher reports how long its learners trained and how long the whole round took; what is not training (the
// weight exchange, the copies around it, the evaluation) is the round's overhead. The next round trains enough
// batches that this overhead is at most `share` of the round, by the averages of the last rounds: never fewer
// than the plan's batches, at most four times the last round's, and short enough to stay well inside the
// liveness limit.
#pragma once

#include <cstdint>

namespace fedavg::training {

class RoundLength {
 public:
  // `least`: the plan's batches per learner per round; `share`: the overhead's largest share of a round (0: every
  // round trains `least`); `longest_seconds`: the most training time one round may take.
  RoundLength(std::int64_t least, double share, double longest_seconds);

  // The batches per learner of the next round.
  std::int64_t steps() const { return steps_; }
  // The batches per learner of a next round that should end within `seconds` of training: steps(), or fewer (but
  // never fewer than the plan's) where the averages say it would take longer.
  std::int64_t steps_within(double seconds) const;
  // The round that trained `steps` batches per learner took `training_seconds` of training in `round_seconds`.
  void took(std::int64_t steps, double training_seconds, double round_seconds);
  bool adapts() const { return share_ > 0; }

 private:
  std::int64_t least_;
  double share_;
  double longest_;
  std::int64_t steps_;
  double step_seconds_ = 0;      // average training seconds per batch; 0 before a round is measured
  double overhead_seconds_ = 0;  // average seconds per round that are not training
};

}  // namespace fedavg::training
