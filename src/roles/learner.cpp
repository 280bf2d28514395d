#include "roles/learner.hpp"

#include "training/learner_run.hpp"
#include "training/strategy.hpp"

namespace fedavg::roles {

void Learner::run() {
  const auto strategy = training::Strategy::make(ctx_.cfg.settings, ctx_.plan);
  training::LearnerRun run(ctx_, *strategy);
  strategy->learner_rounds(run);
  run.finish();
}

}  // namespace fedavg::roles
