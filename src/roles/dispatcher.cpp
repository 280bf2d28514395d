#include "roles/dispatcher.hpp"

#include "core/outputs.hpp"
#include "roles/dispatcher_run.hpp"
#include "roles/strategy.hpp"

namespace fedavg::roles {

void Dispatcher::run() {
  core::ensure_writable_dir(ctx_.cfg.out_dir);
  DispatcherRun run(ctx_);
  run.start();
  if (is_asynchronous(ctx_.cfg.settings)) {
    run.asynchronous_rounds();
  } else {
    run.synchronous_rounds();
  }
  run.finish();
}

}  // namespace fedavg::roles
