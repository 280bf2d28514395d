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
  // The quiet phase is kShare of the shortest of the last kHistory waits, and there is none until that many are
  // known: one long wait (the first checkpoint, a slow round) does not stretch it, and a wait shorter than
  // forecast is noticed at most Backoff::kLongMax late.
  static constexpr double kShare = 0.9;
  static constexpr std::size_t kHistory = 3;

  // `base` with its quiet phase set from the forecast.
  Pace pace(Pace base = {}) const;
  // Records one occurrence of the wait, from its start to `missed`, when a poll last found nothing (see
  // poll_until). That is a lower bound: a waiter that slept past the arrival would otherwise count its own
  // lateness, forecast it for the next round and be as late again. The first occurrence is not counted: it
  // includes the job's start-up.
  void record(Clock::time_point start, Clock::time_point missed);

 private:
  std::array<Clock::duration, kHistory> last_{};
  std::size_t seen_ = 0;  // occurrences, the uncounted first one included
};

}  // namespace fedavg::comm
