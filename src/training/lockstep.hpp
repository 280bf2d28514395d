// The lock-step round that fedavg, bsp and bmuf share, on both sides (docs/protocol.md): the Dispatcher
// broadcasts Control, every learner reports Ready, the strategy's opening exchange, bpe training steps (with
// balance_rounds, cut short once the first learner is done), RoundDone, the window totals, the strategy's
// closing exchange. A strategy of this shape says only what its two exchanges are.
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
  // Learner, before training: bring `w` to this round's starting point. `first` is this process's first round.
  virtual void learner_begin(RoundSync& sync, std::vector<float>& w, bool first) = 0;
  // Learner, after training: contribute `w`, already scaled by this learner's share of the round's windows.
  virtual void learner_end(RoundSync& sync, std::vector<float>& w) = 0;
  // Dispatcher, at the start of a round: send what learners start from (`w` holds the global weights).
  virtual void dispatcher_begin(RoundSync& sync, std::vector<float>& w, bool first) = 0;
  // Dispatcher, at the end: receive the learners' contributions and leave the new global weights in `w`.
  virtual void dispatcher_end(RoundSync& sync, std::vector<float>& w) = 0;
};

}  // namespace fedavg::training
