#include "roles/dispatcher.hpp"

#include "comm/wait_policy.hpp"
#include "training/dispatcher_run.hpp"
#include "training/strategy.hpp"

namespace fedavg::roles {

void Dispatcher::run() {
  // Between the polls of every wait (learners' reports, collectives), the Dispatcher also answers its
  // pipelines, so a Tokenizer that asks for a shard never waits for a round to end.
  comm::WaitPolicy waits = ctx_.waits;
  const Context ctx{ctx_.cfg,  ctx_.me, ctx_.map,     ctx_.world, ctx_.learners, ctx_.topology,
                    ctx_.plan, ctx_.py, ctx_.signals, waits,      ctx_.hooks};
  const auto strategy = training::Strategy::make(ctx.cfg.settings, ctx.plan);
  training::DispatcherRun run(ctx, *strategy);
  waits.set_between_polls([&run] { run.serve_pipelines(); });
  run.start();
  strategy->dispatcher_rounds(run);
  run.finish();
  waits.set_between_polls({});
}

}  // namespace fedavg::roles
