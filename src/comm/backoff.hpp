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

  // Sleeps for the current delay, then doubles it up to kMax.
  void sleep();
  // Call after useful work: the next sleep is short again.
  void reset() { delay_ = kFirst; }

 private:
  std::chrono::microseconds delay_ = kFirst;
};

// A liveness deadline for a peer; `describe` says who and what is awaited, for the Timeout message.
struct Deadline {
  Clock::time_point at;
  double seconds;

  static Deadline after(double seconds);
  bool passed() const { return Clock::now() >= at; }
  void extend() { at = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)); }
};

// The event loop's idle handling for a role that waits on several things at once: call progress() after
// useful work, idle() when a pass did nothing. idle() sleeps with backoff and throws comm::Timeout naming what
// was awaited once nothing has happened for the liveness limit.
class IdleWatch {
 public:
  explicit IdleWatch(double liveness_seconds) : deadline_(Deadline::after(liveness_seconds)) {}
  void progress() {
    backoff_.reset();
    deadline_.extend();
  }
  void idle(const std::function<std::string()>& awaited);

 private:
  Backoff backoff_;
  Deadline deadline_;
};

// Polls `done` until it returns true, sleeping with Backoff in between. Throws comm::Timeout(what) once the
// deadline passes.
void poll_until(const std::function<bool()>& done, const Deadline& deadline, const std::string& what);

}  // namespace fedavg::comm
