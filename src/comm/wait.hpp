// The one way a rank waits: poll against a deadline, sleeping between polls as a Pace says (see WaitPolicy).
// Every wait has a liveness deadline, so a dead or stalled peer becomes an error that names it.
#pragma once

#include <functional>
#include <string>

#include "comm/wait_policy.hpp"

namespace fedavg::comm {

// Liveness tiers. A rank that waits directly on a failed peer must be the one that reports it, so waits that
// only follow from a stall further away (back-pressure, demand, the final barrier) get a longer limit.
inline constexpr double kDirect = 1.0;
inline constexpr double kBatch = 1.25;    // a learner waiting for its Batcher, which may itself wait on its Filter
inline constexpr double kSlowPeer = 1.5;  // the Dispatcher waiting for a learner that may itself be starved
// A learner waiting for the Dispatcher's next round, while the Dispatcher may itself wait on another learner (in a
// collective with a peer whose host is cut off) or end the round: the Dispatcher, at 1x, names the stall first.
inline constexpr double kNextRound = 1.5;
inline constexpr double kIndirect = 2.0;

// A liveness deadline: `seconds` from when it was made.
struct Deadline {
  Clock::time_point at;
  double seconds;

  static Deadline after(double seconds);
  bool passed() const { return Clock::now() >= at; }
};

// Throws comm::Timeout("liveness limit: <what> did not happen within <seconds> s ..."), the one wording of every
// liveness failure.
[[noreturn]] void liveness_timeout(const std::string& what, double seconds);

// The event loop's idle handling for a role that waits on several things at once: call progress() after
// useful work, idle() when a pass did nothing. idle() sleeps with backoff and throws comm::Timeout naming what
// was awaited once nothing has happened for the liveness limit.
class IdleWatch {
 public:
  explicit IdleWatch(double liveness_seconds, const Pace& pace = {})
      : backoff_(pace), liveness_(liveness_seconds), last_(Clock::now()) {}
  void progress() {
    backoff_.reset();
    last_ = Clock::now();
  }
  // `factor` scales the liveness limit for this wait (kIndirect for waits caused by a fault elsewhere).
  void idle(const std::function<std::string()>& awaited, double factor = 1.0);
  // The end of one pass of an event loop: progress() if the pass did useful work, else idle(awaited, factor).
  template <typename Awaited> void end_pass(bool progressed, const Awaited& awaited, double factor = 1.0) {
    if (progressed) progress();
    else idle(awaited, factor);
  }

 private:
  Backoff backoff_;
  double liveness_;
  Clock::time_point last_;
};

// Polls `done` until it returns true, sleeping with Backoff in between. Throws comm::Timeout(what) once the
// deadline passes. Returns when it last found `done` false (its start if never): what it waited for came after
// that, however long the last sleep overshot it.
Clock::time_point poll_until(const std::function<bool()>& done, const Deadline& deadline, const std::string& what,
                             const Pace& pace = {});

}  // namespace fedavg::comm
