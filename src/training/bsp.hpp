// bsp, bulk-synchronous averaging with no central copy: learners keep their replicas and average them with an
// allreduce each round; the Dispatcher takes part with zeros only to see the average. The replicas must stay
// bit-identical, and every round checks it (docs/strategies.md#bsp).
#pragma once

#include "training/lockstep.hpp"

namespace fedavg::training {

class Bsp : public Lockstep {
 protected:
  void learner_begin(RoundSync& sync, std::vector<float>& w, bool first) override;
  void learner_end(RoundSync& sync, std::vector<float>& w) override;
  void dispatcher_begin(RoundSync& sync, std::vector<float>& w, bool first) override;
  void dispatcher_end(RoundSync& sync, std::vector<float>& w) override;

 private:
  // The allreduce, then the check that every member holds the same bits; throws core::Error if not.
  static void average_and_check(RoundSync& sync, std::vector<float>& w);
};

}  // namespace fedavg::training
