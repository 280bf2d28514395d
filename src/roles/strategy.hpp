// How learners' models are combined each round. One object per rank, used by the Dispatcher and the Learners
// alike, so both sides issue the same collectives in the same order (see docs/strategies.md):
//   fedavg  the Dispatcher broadcasts the global weights; learners' window-weighted average replaces them.
//   bsp     learners keep their own copies and average them with an allreduce (the Dispatcher takes part with
//           zeros only to see the average for evaluation); the replicas stay bit-identical, which is checked.
//   bmuf    block momentum on the averaged update (a pseudo-gradient) with block_lr and block_momentum;
//           with nesterov it is DiLoCo's outer Nesterov step.
// easgd is not a round strategy: it has no rounds in lock step, and its own loops on both sides
// (learner.cpp, dispatcher.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "roles/round_sync.hpp"

namespace fedavg::roles {

// True for easgd, which runs its own asynchronous loops instead of a Strategy.
inline bool is_elastic(const core::Settings& s) { return s.strategy == "easgd"; }

class Strategy {
 public:
  // The round strategy named in `s` (fedavg, bsp or bmuf).
  static std::unique_ptr<Strategy> make(const core::Settings& s);
  virtual ~Strategy() = default;

  // Learner, before training: bring `w` to this round's starting point. `first` is this process's first round.
  virtual void learner_begin(RoundSync& sync, std::vector<float>& w, bool first) = 0;
  // Learner, after training: contribute `w`, already scaled by this learner's share of the round's windows.
  virtual void learner_end(RoundSync& sync, std::vector<float>& w) = 0;
  // Dispatcher, at the start of a round: send what learners start from (`w` holds the global weights).
  virtual void dispatcher_begin(RoundSync& sync, std::vector<float>& w, bool first) = 0;
  // Dispatcher, at the end: receive the average and leave the new global weights in `w`.
  virtual void dispatcher_end(RoundSync& sync, std::vector<float>& w) = 0;
  // Strategy state for checkpoints (empty when there is none).
  virtual std::vector<float>& state() { return no_state_; }

 private:
  std::vector<float> no_state_;
};

}  // namespace fedavg::roles
