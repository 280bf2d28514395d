// The Dispatcher's side of a lock-step round's control: it opens each round with a Control (Train or Stop) to
// every learner, and waits for the learners' Ready and RoundDone reports (LearnerControl), so that a learner that
// stalls is named before any collective starts.
#pragma once

#include <functional>
#include <set>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/messages.hpp"
#include "comm/wait_policy.hpp"

namespace fedavg::training {

class DispatcherControl {
 public:
  // `learners`: the learner communicator (this Dispatcher = rank 0), on which the Control travels; `world`: on
  // which the reports come; `learner_ranks`: the world rank of each learner.
  DispatcherControl(const comm::Communicator& learners, const comm::Communicator& world, const comm::WaitPolicy& waits,
                    double liveness_seconds, std::vector<int> learner_ranks)
      : learners_(learners),
        world_(world),
        waits_(waits),
        liveness_(liveness_seconds),
        learner_ranks_(std::move(learner_ranks)) {}

  // Sends `c` to every learner.
  void send(const comm::Control& c);
  // Waits until every learner reported `tag` (Ready or RoundDone) for `round`; a Timeout (after `factor` times
  // the liveness) names the missing ranks. `first_in`, if set, is called once, with the learners still missing,
  // when the first report has arrived. The wait for the first RoundDone (the learners' training) recurs every
  // round, so the wait policy may sleep through most of it.
  void await_reports(comm::Tag tag, long round, double factor,
                     const std::function<void(const std::set<int>&)>& first_in = {});

 private:
  // Takes every report of `tag` that has come from `missing`, checking its round; true if any came.
  bool take_reports(std::set<int>& missing, comm::Tag tag, long round) const;

  const comm::Communicator& learners_;
  const comm::Communicator& world_;
  const comm::WaitPolicy& waits_;
  double liveness_;
  std::vector<int> learner_ranks_;
  comm::Cadence training_wait_;  // how long the first RoundDone of a round takes to come
};

}  // namespace fedavg::training
