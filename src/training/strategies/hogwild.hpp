// hogwild (Niu, Recht, Re & Wright 2011): the Dispatcher and the learners share one copy of the weights in MPI
// shared memory, and learners train it in place without locks; after each period a learner only reports it, and
// the Dispatcher evaluates a snapshot every `learners` reports (docs/strategies.md#hogwild). One node only.
#pragma once

#include <cstdint>
#include <memory>

#include "comm/shared_weights.hpp"
#include "training/strategies/periods.hpp"

namespace fedavg::training {

class Hogwild : public Periods {
 public:
  float* learner_weights(const Context& ctx, std::size_t params) override;
  // Every learner trains the one copy.
  int sharing(const Context& ctx) const override;
  bool moves_whole_weights(const core::Settings&, std::size_t) const override { return false; }
  void learner_rounds(LearnerRun& run) override;
  std::string divergence_hint(int learners) const override;

 protected:
  void dispatcher_start(DispatcherRun& run) override;
  void take_report(DispatcherRun&, int) override {}
  void apply_report(DispatcherRun&, int) override {}
  void round_complete(DispatcherRun& run, comm::WindowTotals& trained, double& sync_seconds) override;
  void dispatcher_done(DispatcherRun& run) override;
  std::string report_name() const override { return "a report"; }

 private:
  std::unique_ptr<comm::SharedWeights> shared_;
  double trained_before_ = 0.0;  // Dispatcher: windows the learners had trained at the last snapshot
};

}  // namespace fedavg::training
