// The one way a rank waits: poll against a deadline, sleeping between polls as a Pace says (see WaitPolicy).
// Every wait has a liveness deadline, so a dead or stalled peer becomes an error that names it.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "comm/wait_chain.hpp"
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

// A liveness deadline: `seconds` from when it was made. `peers`: the world ranks the wait waits on (one of them, or
// all), if known; they are asked before they are blamed (Verdict).
struct Deadline {
  Clock::time_point at;
  double seconds;
  std::vector<int> peers = {};
  bool sending = false;  // the wait is for a send of this rank's to leave

  static Deadline after(double seconds);
  // This deadline, for a wait on the world ranks `world_ranks` (for a send to them: `sending`).
  Deadline on(std::vector<int> world_ranks, bool send = false) const {
    return {at, seconds, std::move(world_ranks), send};
  }
  bool passed() const { return Clock::now() >= at; }
};

// Throws comm::Timeout("liveness limit: <what> did not happen within <seconds> s ...<why>"), the one wording of
// every liveness failure; `why`: what the peer answered, or that it did not (Verdict).
[[noreturn]] void liveness_timeout(const std::string& what, double seconds, const std::string& why = "");

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
    waiting_.reset();
    verdict_.reset();
  }
  // `factor` scales the liveness limit for this wait (kIndirect for waits caused by a fault elsewhere); `peers`:
  // the world ranks one of which is awaited, if known (asked before they are blamed, see Verdict).
  void idle(const std::function<std::string()>& awaited, double factor = 1.0, const std::vector<int>& peers = {});
  // The end of one pass of an event loop: progress() if the pass did useful work, else idle(awaited, ...).
  template <typename Awaited>
  void end_pass(bool progressed, const Awaited& awaited, double factor = 1.0, const std::vector<int>& peers = {}) {
    if (progressed) progress();
    else idle(awaited, factor, peers);
  }

 private:
  Backoff backoff_;
  double liveness_;
  Clock::time_point last_;
  std::vector<int> peers_;
  std::optional<WaitChain::Waiting> waiting_;  // what this rank answers while idle
  std::optional<Verdict> verdict_;             // once the limit has passed
  Clock::time_point extended_{};               // the verdict's deadline
};

// Polls `done` until it returns true, sleeping with Backoff in between. Throws comm::Timeout(what) once the
// deadline passes. Returns when it last found `done` false (its start if never): what it waited for came after
// that, however long the last sleep overshot it.
Clock::time_point poll_until(const std::function<bool()>& done, const Deadline& deadline, const std::string& what,
                             const Pace& pace = {});

}  // namespace fedavg::comm
