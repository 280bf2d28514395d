// bsp, bulk-synchronous averaging with no central copy: learners keep their replicas and average them with an
// allreduce among themselves each round (a ring; across hosts, each host's sum, then a ring of one learner per
// host: RoundSync::allreduce_in_place); the Dispatcher only receives the average. The replicas must stay
// bit-identical, and every round checks it (docs/strategies.md#bsp).
#pragma once

#include "core/floats.hpp"
#include "training/strategies/lockstep.hpp"

namespace fedavg::training {

class Bsp : public Lockstep {
 public:
  explicit Bsp(CombineRule rule = CombineRule::average()) : Lockstep(rule) {}

 protected:
  // Only the first round of a process needs the Dispatcher's weights (initial or resumed).
  void open_round(RoundSync& sync, core::Floats w, bool first) override;
  // The allreduce, then the check that every member holds the same bits; throws core::Error if not.
  void close_round(RoundSync& sync, core::Floats w, float share) override;
  // The sparse exchange averages as fedavg's does; the replicas are checked the same way.
  void after_sparse_round(RoundSync& sync, const float* w, std::size_t size) override;
};

}  // namespace fedavg::training
