// How learners' models are combined each round. One object per rank, used by the Dispatcher and the Learners
// alike, so both sides issue the same collectives in the same order (see docs/strategies.md):
//   fedavg  the Dispatcher broadcasts the global weights; learners' window-weighted average replaces them.
//   bsp     learners keep their own copies and average them with an allreduce (the Dispatcher takes part with
//           zeros only to see the average for evaluation); the replicas stay bit-identical, which is checked.
//   bmuf    block momentum on the averaged update (a pseudo-gradient) with block_lr and block_momentum;
//           with nesterov it is DiLoCo's outer Nesterov step.
// easgd and hogwild are not round strategies: they have no rounds in lock step, and their own loops on both
// sides (learner.cpp, dispatcher.cpp).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "roles/round_sync.hpp"

namespace fedavg::roles {

// easgd: learners push their weights to the Dispatcher's centre, which answers with an elastic step.
inline bool is_elastic(const core::Settings& s) { return s.strategy == "easgd"; }
// hogwild: learners train one shared copy of the weights in place; they only report their periods.
inline bool is_hogwild(const core::Settings& s) { return s.strategy == "hogwild"; }
// True for the strategies that run their own asynchronous loops instead of a Strategy.
inline bool is_asynchronous(const core::Settings& s) { return is_elastic(s) || is_hogwild(s); }

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
