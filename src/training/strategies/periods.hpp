// The shape easgd and hogwild share (docs/protocol.md): learners train periods of bpe steps at their own pace,
// with no barrier; after each one a learner reports it (PeriodDone) and the Dispatcher answers at once (Answer:
// go on or stop, and whether to send its state for a checkpoint). Every `learners` reports, from whichever
// learners sent them, make a round for evaluation, metrics and checkpoints. Each strategy says what travels with
// a report and its answer, and writes its learners' loop.
#pragma once

#include <optional>
#include <string>

#include "comm/messages.hpp"
#include "training/strategy.hpp"

namespace fedavg::training {

class Periods : public Strategy {
 public:
  void dispatcher_rounds(DispatcherRun& run) final;

 protected:
  // Dispatcher, before the first period: set up what every learner starts from, then run.training_begins().
  virtual void dispatcher_start(DispatcherRun& run) = 0;
  // Dispatcher: take what follows learner `rank`'s PeriodDone (easgd: its weights), whether or not it is applied.
  virtual void take_report(DispatcherRun& run, int rank) = 0;
  // Dispatcher: apply the period reported by learner `rank` and send what it needs besides the answer (easgd:
  // the elastic step).
  virtual void apply_report(DispatcherRun& run, int rank) = 0;
  // Dispatcher: a round's reports are in, and the weights to evaluate must be in run.weights(); `trained` and
  // `sync_seconds` may be corrected.
  virtual void round_complete(DispatcherRun& run, comm::WindowTotals& trained, double& sync_seconds);
  // Dispatcher: every learner has stopped and sent its final state.
  virtual void dispatcher_done(DispatcherRun& run);
  // What a learner sends after each period, for a liveness error ("a push").
  virtual std::string report_name() const = 0;

  // Learner: sends the period's totals to the Dispatcher.
  static void report(LearnerRun& run, const comm::WindowTotals& period);
  // Learner: waits for the Dispatcher's answer (`what` names it in a liveness error). On Stop, sends this
  // learner's final state and returns nothing.
  static std::optional<comm::Answer> await_answer(LearnerRun& run, const std::string& what);

 private:
  class DispatcherLoop;
};

}  // namespace fedavg::training
