// The one way a rank waits: poll, and sleep between polls with a delay that grows from microseconds to ~1 ms,
// so a waiting rank costs almost no CPU (MPICH's blocking calls would busy-poll a whole core).
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace fedavg::comm {

using Clock = std::chrono::steady_clock;

class Backoff {
 public:
  static constexpr std::chrono::microseconds kFirst{20};
  static constexpr std::chrono::microseconds kMax{1000};

  // `fast` keeps the delay at kFirst for that long before it starts to grow. Collectives need it: MPI advances
  // a nonblocking collective only inside MPI_Test, so each stage of its algorithm waits for the next poll.
  explicit Backoff(std::chrono::microseconds fast = std::chrono::microseconds{0}) : fast_(fast) {}

  // Sleeps for the current delay, then doubles it up to kMax (after the fast phase).
  void sleep();
  // Call after useful work: the next sleep is short again.
  void reset() {
    delay_ = kFirst;
    waited_ = std::chrono::microseconds{0};
  }

 private:
  std::chrono::microseconds fast_;
  std::chrono::microseconds delay_ = kFirst;
  std::chrono::microseconds waited_{0};
};

// The fast phase used for collectives whose members are all known to be in them.
inline constexpr std::chrono::microseconds kCollectiveFastPhase{5000};

// Liveness tiers. A rank that waits directly on a failed peer must be the one that reports it, so waits that
// only follow from a stall further away (back-pressure, demand, the final barrier) get a longer limit.
inline constexpr double kDirect = 1.0;
inline constexpr double kSlowPeer = 1.5;  // the Dispatcher waiting for a learner that may itself be starved
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
  explicit IdleWatch(double liveness_seconds) : liveness_(liveness_seconds), last_(Clock::now()) {}
  void progress() {
    backoff_.reset();
    last_ = Clock::now();
  }
  // `factor` scales the liveness limit for this wait (kIndirect for waits caused by a fault elsewhere).
  void idle(const std::function<std::string()>& awaited, double factor = 1.0);

 private:
  Backoff backoff_;
  double liveness_;
  Clock::time_point last_;
};

// Polls `done` until it returns true, sleeping with Backoff in between. Throws comm::Timeout(what) once the
// deadline passes.
void poll_until(const std::function<bool()>& done, const Deadline& deadline, const std::string& what,
                std::chrono::microseconds fast = std::chrono::microseconds{0});

}  // namespace fedavg::comm
