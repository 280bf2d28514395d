// fedavg, Federated Averaging (the default): every learner trains from the global weights, and their changes
// replace them: added (combine add, the default: each row's sum damped by the learners that changed it) or
// window-weighted averaged (combine average) (docs/strategies.md#fedavg).
#pragma once

#include "core/floats.hpp"
#include "training/exchange/combine_rule.hpp"
#include "training/strategies/lockstep.hpp"

namespace fedavg::training {

class FedAvg : public Lockstep {
 public:
  explicit FedAvg(CombineRule rule = CombineRule::average()) : Lockstep(rule) {}

 protected:
  void open_round(RoundSync& sync, core::Floats w, bool first) override;
  void close_round(RoundSync& sync, core::Floats w, float share) override;
  bool sole_member_keeps_weights() const override { return true; }

 private:
  // Adds the learners' changes: every member turns `w` (a learner: its trained weights) into the new global
  // weights, from start_ (the round's start).
  void add_changes(RoundSync& sync, core::Floats w, float share);
  // Learner: its change of the round in `w` (w - start_) and, per row of every table, 1 if the row moved.
  void own_changes(core::Floats w, float scale);
  // Learner 1 and the Dispatcher: `w` holds the learners' summed changes and touched_ how many changed each row
  // (weighted by windows); leaves start_ + the damped sum in `w` (CombineRule::apply_sum).
  void apply_changes(core::Floats w) const;

  std::vector<float> start_;  // combine add: the round's global weights
  // combine add: per row of every table, the learners that changed it, then the sum of their changes' squares.
  std::vector<float> touched_;
};

}  // namespace fedavg::training
