// Forecasts a wait that recurs every round (a learner's wait for the next round's Control while the Dispatcher
// evaluates, the Dispatcher's wait for the round's first RoundDone while the learners train) from its last few
// durations, so the waiter sleeps through most of it instead of waking every millisecond on a core that a
// learner needs.
#pragma once

#include <array>
#include <cstddef>

#include "comm/backoff.hpp"

namespace fedavg::comm {

class Cadence {
 public:
  // The quiet phase is kShare of the shortest of the last kHistory waits: one long wait (a checkpoint round, a
  // slow start) does not stretch it, and a wait shorter than forecast is noticed at most Backoff::kLongMax late.
  static constexpr double kShare = 0.9;
  static constexpr std::size_t kHistory = 3;

  // `base` with its quiet phase set from the forecast (none before the first recorded wait).
  Pace pace(Pace base = {}) const;
  // Records how long one occurrence of the wait lasted.
  void record(Clock::duration waited);

 private:
  std::array<Clock::duration, kHistory> last_{};
  std::size_t recorded_ = 0;
};

}  // namespace fedavg::comm
