#include "training/lockstep.hpp"

#include <functional>
#include <set>

#include "comm/messages.hpp"
#include "training/dispatcher_run.hpp"
#include "training/learner_run.hpp"

namespace fedavg::training {

void Lockstep::dispatcher_rounds(DispatcherRun& run) {
  const Context& ctx = run.ctx();
  const core::Settings& s = run.settings();
  using Clock = DispatcherRun::Clock;
  RoundSync sync(ctx.learners, ctx.world, ctx.waits, s.liveness_seconds, run.learner_ranks());
  bool first = true;
  while (!run.should_stop()) {
    const long round = run.next_round();
    ctx.hooks.reached(round);
    sync.control({comm::Control::Command::Train, round});
    sync.await_reports(comm::Tag::Ready, round, comm::kDirect);
    if (first) run.training_begins();
    // Every learner is in the collectives once Ready/RoundDone arrived: these spans are pure weight exchange.
    const double bytes_before = sync.weight_bytes();
    auto sync_start = Clock::now();
    open_round(sync, run.weights(), first);
    double sync_seconds = DispatcherRun::seconds_since(sync_start);
    first = false;
    // balance_rounds: the first learner done ends the round; the others stop after their current step.
    std::function<void(const std::set<int>&)> cut;
    if (s.balance_rounds)
      cut = [&](const std::set<int>& busy) {
        for (const int rank : busy) run.outbox().send(std::vector<std::int64_t>{round}, rank, comm::Tag::Cut);
      };
    sync.await_reports(comm::Tag::RoundDone, round, comm::kSlowPeer, cut);
    sync_start = Clock::now();
    const comm::WindowTotals total = sync.totals(run.no_windows());
    close_round(sync, run.weights());
    sync_seconds += DispatcherRun::seconds_since(sync_start);
    run.add_sync_bytes(sync.weight_bytes() - bytes_before);
    if (run.checkpoint_due()) run.collect_states();  // learners send theirs after the closing exchange
    run.end_round(total, sync_seconds);
  }
  sync.control({comm::Control::Command::Stop, run.round()});
  run.collect_states();  // every learner sends its state on Stop
}

void Lockstep::learner_rounds(LearnerRun& run) {
  const Context& ctx = run.ctx();
  const core::Settings& s = run.settings();
  RoundSync sync(ctx.learners, ctx.world, ctx.waits, s.liveness_seconds, {});
  bool first = true;
  for (;;) {
    const comm::Control c = sync.control();
    if (c.command == comm::Control::Command::Stop) {
      run.send_state();
      return;
    }
    ctx.hooks.reached(c.round);
    sync.report(comm::Tag::Ready, c.round);
    open_round(sync, run.weights(), first);
    first = false;
    run.next_batch();
    const comm::WindowTotals mine = run.train(s.balance_rounds ? c.round : 0);
    sync.report(comm::Tag::RoundDone, c.round);
    const comm::WindowTotals total = sync.totals(mine);
    const auto share = static_cast<float>(mine.windows / total.windows);
    for (auto& x : run.weights()) x *= share;
    close_round(sync, run.weights());
    if (c.round % s.checkpoint_every == 0) run.send_state();
  }
}

}  // namespace fedavg::training
