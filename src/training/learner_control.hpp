// A learner's side of a lock-step round's control: the Dispatcher's Control (Train or Stop) that opens each round,
// and the Ready and RoundDone reports by which the Dispatcher (DispatcherControl) names a learner that stalls
// before any collective starts.
#pragma once

#include <functional>

#include "comm/communicator.hpp"
#include "comm/messages.hpp"
#include "comm/outbox.hpp"
#include "comm/wait_policy.hpp"

namespace fedavg::training {

class LearnerControl {
 public:
  // `learners`: the learner communicator (Dispatcher = rank 0), on which the Control travels; `world`: on which
  // the reports go to the Dispatcher (world rank 0).
  LearnerControl(const comm::Communicator& learners, const comm::Communicator& world, const comm::WaitPolicy& waits,
                 double liveness_seconds)
      : learners_(learners), waits_(waits), liveness_(liveness_seconds), reports_(world) {}

  // Receives the next round's Control. The wait recurs every round (the Dispatcher's evaluation and checkpoint),
  // so the wait policy may sleep through most of it; it is a wait on the Dispatcher itself. `work`, if given, is
  // called between polls for as long as it returns true (a learner that trains on through the wait, Lockstep's
  // overlapped exchange) before that wait.
  comm::Control next(const std::function<bool()>& work = {});
  // Tells the Dispatcher that this learner reached `tag` (Ready or RoundDone) of `round`.
  void report(comm::Tag tag, long round);
  // Completes the reports still in flight (at the end of a round: the Dispatcher has received them).
  void complete_reports();

 private:
  const comm::Communicator& learners_;
  const comm::WaitPolicy& waits_;
  double liveness_;
  comm::Outbox reports_;        // Ready/RoundDone in flight
  comm::Cadence control_wait_;  // how long the Control of a round takes to come
};

}  // namespace fedavg::training
