// How learners' models are combined: one class per strategy (docs/strategies.md), holding both of its sides.
// The Dispatcher runs dispatcher_rounds and every learner runs learner_rounds; the two sides exchange the same
// messages in the same order. Adding a strategy takes a file pair with its class in strategies/, a
// core::StrategyKind value (with its cfg.json name in config.cpp), its case in Strategy::make
// (strategies/strategy_factory.cpp), a section in docs/strategies.md and a case in tests/e2e/test_strategies.py.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "training/context.hpp"

namespace fedavg::training {

class DispatcherRun;
class LearnerRun;

class Strategy {
 public:
  // The strategy `s` names, with its settings (defined with the strategies, strategies/strategy_factory.cpp).
  static std::unique_ptr<Strategy> make(const core::Settings& s, const RunPlan& plan);
  // What the run plan needs to know of the strategy `s` names before it is made (StrategyTraits). Defined with
  // make.
  static StrategyTraits traits(const core::Settings& s);
  virtual ~Strategy() = default;

  // Dispatcher: rounds until the stop rule ends them (DispatcherRun::should_stop); then every learner is told to
  // stop and its final state is received.
  virtual void dispatcher_rounds(DispatcherRun& run) = 0;
  // Learner: rounds until the Dispatcher says stop; the learner's final state is then sent.
  virtual void learner_rounds(LearnerRun& run) = 0;
  // Learner, before its model is built: the memory its `params` weights live in, or null for a buffer of its
  // own. The strategy owns that memory and outlives the model.
  virtual float* learner_weights(const Context& ctx, std::size_t params);
  // The learners that train the weights this rank's learner trains, at once (its own: 1; the Dispatcher: 1).
  // The same on every rank for the same host.
  virtual int sharing(const Context& ctx) const;
  // Whether every round moves the whole weights to and from each learner with `params` parameters (the dense
  // exchange): not where it moves only what changed (the sparse exchange, and shared weights).
  virtual bool moves_whole_weights(const core::Settings& s, std::size_t params) const;
  // State to checkpoint besides the weights (bmuf: the block momentum); empty when there is none.
  virtual std::vector<float>& state() { return no_state_; }
  // What the user should change after the weights diverged with `learners` learners.
  virtual std::string divergence_hint(int learners) const;

 private:
  std::vector<float> no_state_;
};

}  // namespace fedavg::training
