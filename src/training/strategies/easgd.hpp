// easgd, asynchronous elastic averaging (Zhang, Choromanska & LeCun 2015): the Dispatcher holds the centre. After
// each period a learner pushes its weights x_i; the Dispatcher moves the centre by d = alpha (x_i - centre) and
// answers with d, which the learner subtracts (docs/strategies.md#easgd).
#pragma once

#include <vector>

#include "training/strategies/periods.hpp"

namespace fedavg::training {

class Easgd : public Periods {
 public:
  // `alpha` 0: 0.9 / learners (the paper's beta = 0.9).
  explicit Easgd(double alpha) : configured_alpha_(alpha) {}
  void learner_rounds(LearnerRun& run) override;

 protected:
  void dispatcher_start(DispatcherRun& run) override;
  void take_report(DispatcherRun& run, int rank) override;
  void apply_report(DispatcherRun& run, int rank) override;
  std::string report_name() const override { return "a push"; }

 private:
  double configured_alpha_;
  float alpha_ = 0.0f;
  std::vector<float> pushed_;  // Dispatcher: a learner's weights, then its elastic step
};

}  // namespace fedavg::training
