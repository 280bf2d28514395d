#include "training/strategies/lockstep.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <utility>

#include "comm/communicator.hpp"
#include "comm/messages.hpp"
#include "training/dispatcher_control.hpp"
#include "training/dispatcher_run.hpp"
#include "training/exchange/sparse_exchange.hpp"
#include "training/learner_control.hpp"
#include "training/learner_run.hpp"
#include "training/strategies/dense_round_exchange.hpp"
#include "training/strategies/host_batches.hpp"
#include "training/strategies/overlapped_close.hpp"
#include "training/strategies/sparse_round_exchange.hpp"

namespace fedavg::training {

namespace {

// balance_rounds: the first learner done ends round `round`; the others (`busy`) stop after their current step.
struct CutRound {
  comm::Outbox& outbox;
  long round;
  void operator()(const std::set<int>& busy) const {
    for (const int rank : busy) outbox.send(std::vector<std::int64_t>{round}, rank, comm::Tag::Cut);
  }
};

}  // namespace

void Lockstep::outer_step(SparseDelta&, const Layout&) {}

void Lockstep::after_sparse_round(RoundSync&, const float*, std::size_t) {}

bool Lockstep::has_outer_step() const { return false; }

bool Lockstep::opens_with_weights() const { return false; }

bool Lockstep::sole_member_keeps_weights() const { return false; }

bool Lockstep::shares_hosts(const Context& ctx) { return ctx.learners.valid() && ctx.plan.shares_hosts; }

std::unique_ptr<HostShare> Lockstep::host_share(const Context& ctx, std::size_t params) {
  if (!shares_hosts(ctx)) return nullptr;
  return std::make_unique<HostShare>(ctx.learners, ctx.topology, ctx.map, ctx.waits, ctx.cfg.settings.liveness_seconds,
                                     params);
}

int Lockstep::fewest_sharing(const Context& ctx) {
  std::size_t fewest = 0;
  for (const auto& host : ctx.topology.learners_by_host(ctx.learners.size()))
    if (!host.empty() && (fewest == 0 || host.size() < fewest)) fewest = host.size();
  return std::max<int>(1, static_cast<int>(fewest));
}

int Lockstep::sharing(const Context& ctx) const {
  if (!ctx.learners.valid() || !shares_hosts(ctx)) return 1;
  return ctx.topology.learners_on_host(ctx.learners.rank(), ctx.learners.size());
}

float* Lockstep::learner_weights(const Context& ctx, std::size_t params) {
  share_ = host_share(ctx, params);
  return share_ ? share_->weights() : nullptr;
}

std::unique_ptr<RoundExchange> Lockstep::exchange(const Context& ctx, const core::Settings& s,
                                                  const std::vector<int>& learner_ranks, std::size_t params,
                                                  LearnerRun* run) {
  auto sync = std::make_unique<RoundSync>(share_ ? share_->exchange() : ctx.learners, ctx.waits, s.liveness_seconds,
                                          share_ ? share_->exchange_ranks() : learner_ranks,
                                          share_ ? share_->exchange_hosts() : ctx.topology.hosts());
  if (!sparse_exchange(s, params, ctx.topology.one_host()))
    return std::make_unique<DenseRoundExchange>(*this, std::move(sync));
  // With shared weights the rows written are those the host's learners marked (HostShare::take_written).
  return std::make_unique<SparseRoundExchange>(*this, std::move(sync), layout_, s, ctx.plan, combine_, run,
                                               share_.get());
}

void Lockstep::dispatcher_rounds(DispatcherRun& run) {
  const Context& ctx = run.ctx();
  const core::Settings& s = run.settings();
  using Clock = DispatcherRun::Clock;
  share_ = host_share(ctx, run.weights().size());
  layout_ = layout_of(run.shapes());
  const auto exchange = this->exchange(ctx, s, run.learner_ranks(), run.weights().size(), nullptr);
  if (exchange->checkpoint_rounds_cost_more()) run.checkpoint_rounds_cost_more();
  DispatcherControl control(ctx.learners, ctx.world, ctx.waits, s.liveness_seconds, run.learner_ranks());
  // With overlap a host's other learners train on through what is not training (the exchange, the evaluation), so
  // of that time only its leader's share is lost to training: the share RoundLength weighs the round's overhead by.
  const double lost = ctx.plan.overlap ? 1.0 / fewest_sharing(ctx) : 1.0;
  bool first = true;
  while (!run.should_stop()) {
    const long round = run.next_round();
    ctx.hooks.reached(round);
    // The wait for Ready is the learners finishing the previous round's exchange (applying what it brought) and
    // counts with it, but for the first round: that is the learners' start-up.
    const bool start_up = first;  // the round is not timed (RoundLength): its wait for Ready is the start-up
    const auto round_start = Clock::now();
    auto sync_start = round_start;
    control.send({comm::Control::Command::Train, round, run.round_steps(), run.planned_steps(), run.checkpoint_due(),
                  run.steps_done()});
    control.await_reports(comm::Tag::Ready, round, comm::kDirect);
    double sync_seconds = first ? 0.0 : DispatcherRun::seconds_since(sync_start);
    if (first) run.training_begins();
    // Every learner is in the collectives once Ready/RoundDone arrived: these spans are pure weight exchange.
    const double bytes_before = exchange->bytes();
    const double inbound_before = exchange->inbound_bytes();
    sync_start = Clock::now();
    exchange->open(run.weights(), first);
    sync_seconds += DispatcherRun::seconds_since(sync_start);
    first = false;
    std::function<void(const std::set<int>&)> cut;
    if (s.balance_rounds) cut = CutRound{run.outbox(), round};
    const auto training_start = Clock::now();
    control.await_reports(comm::Tag::RoundDone, round, comm::kSlowPeer, cut);
    const double training_seconds = DispatcherRun::seconds_since(training_start);
    sync_start = Clock::now();
    const comm::WindowTotals total = exchange->totals(run.no_windows());
    exchange->close(run.weights(), 0.0, {round, run.checkpoint_due()});
    sync_seconds += DispatcherRun::seconds_since(sync_start);
    run.add_sync_bytes(exchange->bytes() - bytes_before);
    run.add_inbound_bytes(exchange->inbound_bytes() - inbound_before);
    if (run.checkpoint_due()) run.collect_states();  // learners send theirs after the closing exchange
    run.end_round(total, sync_seconds);
    if (!start_up) {
      const double overhead = DispatcherRun::seconds_since(round_start) - training_seconds;
      run.round_took(training_seconds, training_seconds + lost * overhead);
    }
  }
  control.send({comm::Control::Command::Stop, run.round()});
  const double bytes_before = exchange->bytes();
  const double inbound_before = exchange->inbound_bytes();
  if (exchange->flush(run.weights()))
    run.flushed(exchange->bytes() - bytes_before, exchange->inbound_bytes() - inbound_before);
  run.collect_states();  // every learner sends its state on Stop
}

std::function<void(std::int64_t)> Lockstep::marks_rows(LearnerRun& run) {
  share_->track_rows(layout_);
  run.written_rows();  // starts the count before the first step
  return [this, &run](std::int64_t /*windows*/) { share_->mark(run.written_rows()); };
}

void Lockstep::learner_rounds(LearnerRun& run) {
  const Context& ctx = run.ctx();
  const core::Settings& s = run.settings();
  LearnerControl control(ctx.learners, ctx.world, ctx.waits, s.liveness_seconds);
  layout_ = layout_of(run.shapes());
  // With shared host weights (share_) every learner of a host trains them, and only the host's leader is in the
  // exchange, on them in place (HostShare::shared): it takes the host's windows and contributes the weights.
  const core::Floats w = share_ ? share_->shared() : core::Floats(run.weights());
  const auto exchange = !share_ || share_->leader() ? this->exchange(ctx, s, run.learner_ranks(), w.size(), &run)
                                                    : nullptr;
  // Where every round's opening brings the Dispatcher's weights (the dense exchange of a strategy that sends them),
  // the host's learners wait for them each round, not only in the first (the same on all of a host's learners).
  const bool sparse = sparse_exchange(s, params_of(layout_), ctx.topology.one_host());
  const bool reopens = share_ && opens_with_weights() && !sparse;
  const std::function<void(std::int64_t)> mark_rows = share_ && sparse ? marks_rows(run) : nullptr;
  // overlap: the host's learners train on through the exchange and the wait for the next Control, and share each
  // round's batches (HostBatches); what they train there counts with the next round.
  const bool through = share_ && ctx.plan.overlap;
  std::optional<HostBatches> batches;
  if (through) batches.emplace(run, *share_, ctx.plan.learner_bpe, mark_rows);
  const auto train_on = [&] { return batches->train_on(); };
  OverlappedClose copies;  // the leader's, with overlap and an exchange that replaces the weights (dense)
  bool first = true;
  for (;;) {
    const comm::Control c = through && !first ? control.next(train_on) : control.next();
    if (c.command == comm::Control::Command::Stop) break;
    ctx.hooks.reached(c.round);
    run.plan(c.plan);
    control.report(comm::Tag::Ready, c.round);
    if (exchange) exchange->open(w, first);
    if (share_ && (first || reopens)) share_->start();  // the shared weights hold the round's start
    first = false;
    run.next_batch();
    const long cut_round = s.balance_rounds ? c.round : 0;
    comm::WindowTotals mine = batches ? batches->round(c.steps, cut_round, c.done, c.plan)
                                      : run.train(cut_round, mark_rows, c.steps);
    control.report(comm::Tag::RoundDone, c.round);
    // Its own copy holds the round's steps, or the host's learners train on anyway: the exchange reads the
    // round's changes while the round's totals wait for the others.
    if (exchange && (!share_ || through)) exchange->prepare(w, {c.round, c.checkpoint});
    if (share_) mine = through ? share_->host_totals(mine, c.round) : share_->trained(mine);
    if (exchange) {
      const comm::WindowTotals total = exchange->totals(mine);
      if (through && !exchange->adds_in_place()) {
        copies.close(*exchange, w, mine.windows / total.windows, {c.round, c.checkpoint});
      } else {
        exchange->close(w, mine.windows / total.windows, {c.round, c.checkpoint});
      }
    }
    if (share_ && !through) share_->finish();  // the round's result is in the shared weights
    control.complete_reports();
    if (c.checkpoint) run.send_state();
  }
  if (exchange) exchange->flush(w);  // the host's learners wait in release() until it is done
  run.send_state();
  if (share_) share_->release();
}

}  // namespace fedavg::training
