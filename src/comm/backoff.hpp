// The one way a rank waits: poll, and sleep between polls with a delay that grows from microseconds to ~1 ms,
// so a waiting rank costs almost no CPU (MPICH's blocking calls would busy-poll a whole core). A Pace lets a
// wait sleep longer where nobody is held up by it, so idle ranks wake a core's learner less often.
#pragma once

#include <chrono>
#include <functional>
#include <string>

namespace fedavg::comm {

using Clock = std::chrono::steady_clock;

// How a wait spaces its polls. The default suits a wait that others wait on in turn: the delay grows from
// Backoff::kFirst to Backoff::kMax, so the rank notices an arrival at most about 1 ms late.
struct Pace {
  // Keep the delay at kFirst this long (after any quiet phase) before it starts to grow. Collectives need it:
  // MPI advances a nonblocking collective only inside MPI_Test, so each stage of its algorithm waits for the
  // next poll.
  std::chrono::microseconds fast{0};
  // The wait is forecast to last at least this long (a recurring wait, see Cadence): until then, sleep in
  // steps of up to Backoff::kLongMax, so an arrival before the forecast is noticed at most that late.
  Clock::duration quiet{0};
  // Nobody is held up by how soon this rank notices an arrival (a pipeline stage: what it feeds is buffered
  // rounds ahead): the delay may grow to 1/Backoff::kPatience of the time waited so far, up to kLongMax.
  bool patient = false;
};

class Backoff {
 public:
  static constexpr std::chrono::microseconds kFirst{20};
  static constexpr std::chrono::microseconds kMax{1000};
  // Every wake-up of a waiting rank lands on a core that a learner is using once learners fill the cores, and
  // costs that learner far more than the poll itself (four sleepers waking every 10 ms slowed two busy softmax
  // processes on 2 cores by 3-5 %). So the long steps are long: an arrival that nobody is held up by may be
  // noticed up to 50 ms, or half the time waited, late.
  static constexpr std::chrono::microseconds kLongMax{50000};
  static constexpr int kPatience = 2;

  explicit Backoff(const Pace& pace = {}) : pace_(pace), start_(Clock::now()) {}

  // Sleeps for the current delay, then doubles it up to its cap (after the fast phase); see Pace.
  void sleep();
  // Call after useful work: the next sleep is short again. The quiet phase, a forecast of the first arrival,
  // does not come back.
  void reset() {
    delay_ = kFirst;
    start_ = Clock::now();
    pace_.quiet = Clock::duration{0};
  }

 private:
  Pace pace_;
  Clock::time_point start_;
  std::chrono::microseconds delay_ = kFirst;
};

// The pace of collectives whose members are all known to be in them.
inline constexpr Pace kCollective{std::chrono::microseconds{5000}};
// The pace of pipeline stages (Tokenizer, Filter, Batcher).
inline constexpr Pace kPatient{std::chrono::microseconds{0}, Clock::duration{0}, true};

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
  explicit IdleWatch(double liveness_seconds, const Pace& pace = {})
      : backoff_(pace), liveness_(liveness_seconds), last_(Clock::now()) {}
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
// deadline passes. Returns when it last found `done` false (its start if never): what it waited for came after
// that, however long the last sleep overshot it.
Clock::time_point poll_until(const std::function<bool()>& done, const Deadline& deadline, const std::string& what,
                             const Pace& pace = {});

}  // namespace fedavg::comm
