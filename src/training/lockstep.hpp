// The lock-step round that fedavg, bsp and bmuf share, on both sides (docs/protocol.md): the Dispatcher
// broadcasts Control, every learner reports Ready, the strategy's opening exchange, bpe training steps (with
// balance_rounds, cut short once the first learner is done), RoundDone, the window totals, the strategy's
// closing exchange. A strategy of this shape says only what its two exchanges are; both sides call them, and
// RoundSync::on_dispatcher() tells them apart where they differ.
#pragma once

#include <vector>

#include "training/round_sync.hpp"
#include "training/strategy.hpp"

namespace fedavg::training {

class Lockstep : public Strategy {
 public:
  void dispatcher_rounds(DispatcherRun& run) final;
  void learner_rounds(LearnerRun& run) final;

 protected:
  // Before training. Dispatcher: send what learners start from (`w` holds the global weights). Learner: bring
  // `w` to this round's starting point. `first`: this process's first round.
  virtual void open_round(RoundSync& sync, std::vector<float>& w, bool first) = 0;
  // After training. Learner: contribute `w`, already scaled by its share of the round's windows. Dispatcher:
  // receive the contributions and leave the new global weights in `w`.
  virtual void close_round(RoundSync& sync, std::vector<float>& w) = 0;
};

}  // namespace fedavg::training
