// How a waiting rank spaces its polls: the one policy behind every wait in the program. A wait polls
// (MPI_Test, MPI_Iprobe) and sleeps in between, the sleep doubling from `first` to `max`, so an idle rank costs
// almost no CPU and notices an arrival about `max` late at worst (MPICH's blocking calls would spin a core).
// Two profiles (docs/architecture.md#waiting-never-spins):
//   plain           every wait as above, and collectives poll fast at first (MPI advances them only when polled);
//   oversubscribed  for more ranks than cores: a wake-up lands on a core that a learner needs, so the waits
//                   nobody is held up by sleep longer (pipeline stages; the two waits that recur every round).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <functional>

#include "core/wait_profile.hpp"

namespace fedavg::comm {

using Clock = std::chrono::steady_clock;

// How one wait sleeps between its polls.
struct Pace {
  std::chrono::microseconds first{20};  // the first sleep, and the sleep after any progress
  std::chrono::microseconds max{1000};  // the sleep doubles up to this
  // Keep sleeping `first` this long before doubling (collectives: each stage of their algorithm waits for a poll).
  std::chrono::microseconds fast{0};
  // The wait is forecast to last at least this long: until then, sleep in steps of up to `long_max`, so an
  // arrival before the forecast is noticed at most that late.
  Clock::duration quiet{0};
  // > 0: nobody is held up by how soon this rank notices an arrival, and the cap grows to 1/patience of the
  // time waited so far, up to `long_max`.
  int patience = 0;
  std::chrono::microseconds long_max{50000};
  // Work the waiting rank does before each sleep (WaitPolicy::set_between_polls); null or empty: none.
  const std::function<void()>* between_polls = nullptr;
};

// Forecasts a wait that recurs every round (a learner's wait for the next Control while the Dispatcher
// evaluates; the Dispatcher's wait for the first RoundDone while the learners train) from its last durations.
class Cadence {
 public:
  // The forecast is kShare of the shortest of the last kHistory waits, and there is none until that many are
  // known: one long wait (the first checkpoint, a slow round) does not stretch it.
  static constexpr double kShare = 0.9;
  static constexpr std::size_t kHistory = 3;

  // The forecast length of the next wait (zero when there is none).
  Clock::duration forecast() const;
  // Records one occurrence of the wait, from its start to `missed`, when a poll last found nothing (see
  // poll_until): a waiter that slept past the arrival would otherwise count its own lateness, forecast it and
  // be as late again. The first occurrence is not counted: it includes the job's start-up.
  void record(Clock::time_point start, Clock::time_point missed);

 private:
  std::array<Clock::duration, kHistory> last_{};
  std::size_t seen_ = 0;  // occurrences, the uncounted first one included
};

class WaitPolicy {
 public:
  enum class Profile { Plain, Oversubscribed };

  explicit WaitPolicy(Profile profile = Profile::Plain) : profile_(profile) {}
  // The profile cfg.json asks for; `auto` is oversubscribed when this node runs more ranks than it has cores.
  static WaitPolicy choose(core::WaitProfile requested, int ranks_on_node, int cores);
  // The cores this process may run on.
  static int usable_cores();

  Profile profile() const { return profile_; }
  const char* name() const { return profile_ == Profile::Plain ? "plain" : "oversubscribed"; }

  // Work to do before every sleep of the waits paced by this policy, which must not wait itself (the Dispatcher
  // answers its pipelines' reports and shard requests while it waits for learners).
  void set_between_polls(std::function<void()> task) { between_polls_ = std::move(task); }

  // A wait that others wait on in turn (the default of every wait).
  Pace prompt() const {
    Pace p;
    p.between_polls = &between_polls_;
    return p;
  }
  // A collective whose members are all known to be in it: polls every `first` for its first 5 ms.
  Pace collective() const;
  // A pipeline stage: what it feeds is buffered rounds ahead. Oversubscribed: patient (a half of the time
  // waited, up to 50 ms).
  Pace stage() const;
  // `base` for a wait that recurs every round. Oversubscribed: its quiet phase is c's forecast.
  Pace recurring(const Cadence& c, Pace base) const;

 private:
  Profile profile_;
  std::function<void()> between_polls_;
};

// Sleeps between the polls of one wait, as its Pace says.
class Backoff {
 public:
  explicit Backoff(const Pace& pace = {}) : pace_(pace), start_(Clock::now()), delay_(pace.first) {}

  // Sleeps for the current delay, then doubles it up to its cap (after the fast phase); see Pace.
  void sleep();
  // Call after useful work: the next sleep is short again. The quiet phase, a forecast of the first arrival,
  // does not come back.
  void reset() {
    delay_ = pace_.first;
    start_ = Clock::now();
    pace_.quiet = Clock::duration{0};
  }

 private:
  Pace pace_;
  Clock::time_point start_;
  std::chrono::microseconds delay_;
};

}  // namespace fedavg::comm
