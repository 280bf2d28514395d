#include "roles/dispatcher.hpp"

#include "training/dispatcher_run.hpp"
#include "training/strategy.hpp"

namespace fedavg::roles {

void Dispatcher::run() {
  const auto strategy = training::Strategy::make(ctx_.cfg.settings);
  training::DispatcherRun run(ctx_, *strategy);
  run.start();
  strategy->dispatcher_rounds(run);
  run.finish();
}

}  // namespace fedavg::roles
