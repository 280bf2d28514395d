#include "training/lockstep.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "comm/messages.hpp"
#include "training/dispatcher_control.hpp"
#include "training/dispatcher_run.hpp"
#include "training/learner_control.hpp"
#include "training/learner_run.hpp"
#include "training/sparse_dispatcher.hpp"
#include "training/sparse_exchange.hpp"
#include "training/sparse_learner.hpp"

namespace fedavg::training {

namespace {

// The kind of a round of the sparse exchange: full every full_sync_every rounds.
RoundKind round_kind(const core::Settings& s, long round) {
  return s.full_sync_every > 0 && round % s.full_sync_every == 0 ? RoundKind::Full : RoundKind::Regular;
}

}  // namespace

void Lockstep::outer_step(SparseDelta&, const Layout&) {}

void Lockstep::after_sparse_round(RoundSync&, const std::vector<float>&) {}

bool Lockstep::has_outer_step() const { return false; }

Publisher Lockstep::sparse_publisher() const { return has_outer_step() ? Publisher::Dispatcher : Publisher::Owners; }

void Lockstep::dispatcher_sparse_round(RoundSync& sync, SparseDispatcher& sparse, std::vector<float>& w,
                                       RoundKind kind) {
  if (sparse.publisher() == Publisher::Owners) {
    sparse.receive_global(w, kind);
  } else {
    SparseDelta& change = sparse.collect(kind);
    outer_step(change, sparse.layout());
    sparse.publish(change, w, kind);
  }
  after_sparse_round(sync, w);
}

float* Lockstep::learner_weights(const Context& ctx, std::size_t params) {
  if (!HostShare::wanted(ctx)) return nullptr;
  share_ = std::make_unique<HostShare>(ctx, params);
  return share_->weights();
}

void Lockstep::dispatcher_rounds(DispatcherRun& run) {
  const Context& ctx = run.ctx();
  const core::Settings& s = run.settings();
  using Clock = DispatcherRun::Clock;
  if (HostShare::wanted(ctx)) share_ = std::make_unique<HostShare>(ctx, run.weights().size());
  // With shared host weights the exchange holds the Dispatcher and one leader per host.
  RoundSync sync(share_ ? share_->exchange() : ctx.learners, ctx.waits, s.liveness_seconds,
                 share_ ? share_->exchange_ranks() : run.learner_ranks(),
                 share_ ? share_->exchange_hosts() : ctx.learner_hosts);
  DispatcherControl control(ctx.learners, ctx.world, ctx.waits, s.liveness_seconds, run.learner_ranks());
  layout_ = layout_of(run.shapes());
  std::optional<SparseDispatcher> sparse;
  if (sparse_exchange(s, run.weights().size(), ctx.learners_on_one_host()))
    sparse.emplace(sync, layout_, s, sparse_publisher());
  bool first = true;
  while (!run.should_stop()) {
    const long round = run.next_round();
    ctx.hooks.reached(round);
    // The wait for Ready is the learners finishing the previous round's exchange (applying what it brought) and
    // counts with it, but for the first round: that is the learners' start-up.
    auto sync_start = Clock::now();
    control.send({comm::Control::Command::Train, round, run.round_steps(), run.planned_steps()});
    control.await_reports(comm::Tag::Ready, round, comm::kDirect);
    double sync_seconds = first ? 0.0 : DispatcherRun::seconds_since(sync_start);
    if (first) run.training_begins();
    // Every learner is in the collectives once Ready/RoundDone arrived: these spans are pure weight exchange.
    const double bytes_before = sync.weight_bytes() + (sparse ? sparse->bytes() : 0.0);
    const double inbound_before = sync.inbound_bytes() + (sparse ? sparse->inbound_bytes() : 0.0);
    sync_start = Clock::now();
    if (!sparse || first) open_round(sync, run.weights(), first);
    sync_seconds += DispatcherRun::seconds_since(sync_start);
    first = false;
    // balance_rounds: the first learner done ends the round; the others stop after their current step.
    std::function<void(const std::set<int>&)> cut;
    if (s.balance_rounds)
      cut = [&](const std::set<int>& busy) {
        for (const int rank : busy) run.outbox().send(std::vector<std::int64_t>{round}, rank, comm::Tag::Cut);
      };
    control.await_reports(comm::Tag::RoundDone, round, comm::kSlowPeer, cut);
    sync_start = Clock::now();
    const comm::WindowTotals total = sync.totals(run.no_windows());
    if (sparse) {
      dispatcher_sparse_round(sync, *sparse, run.weights(), round_kind(s, round));
    } else {
      close_round(sync, run.weights(), 0.0f);
    }
    sync_seconds += DispatcherRun::seconds_since(sync_start);
    run.add_sync_bytes(sync.weight_bytes() + (sparse ? sparse->bytes() : 0.0) - bytes_before);
    run.add_inbound_bytes(sync.inbound_bytes() + (sparse ? sparse->inbound_bytes() : 0.0) - inbound_before);
    if (run.checkpoint_due()) run.collect_states();  // learners send theirs after the closing exchange
    run.end_round(total, sync_seconds);
  }
  control.send({comm::Control::Command::Stop, run.round()});
  if (sparse && sparse->lossy() && !first) {
    // The final flush: a full exchange with no training, so the final weights hold every change the learners
    // (and the Dispatcher's rounding) kept back.
    const double bytes_before = sparse->bytes();
    const double inbound_before = sparse->inbound_bytes();
    dispatcher_sparse_round(sync, *sparse, run.weights(), RoundKind::Full);
    run.flushed(sparse->bytes() - bytes_before, sparse->inbound_bytes() - inbound_before);
  }
  run.collect_states();  // every learner sends its state on Stop
}

void Lockstep::learner_rounds(LearnerRun& run) {
  const Context& ctx = run.ctx();
  const core::Settings& s = run.settings();
  // With shared host weights (share_) every learner of a host trains them, and only the host's leader is in the
  // exchange, on a copy of them (host_copy_): it takes the host's windows and contributes the host's weights.
  const bool exchanges = !share_ || share_->leader();
  std::optional<RoundSync> sync;
  if (exchanges)
    sync.emplace(share_ ? share_->exchange() : ctx.learners, ctx.waits, s.liveness_seconds,
                 share_ ? share_->exchange_ranks() : run.learner_ranks(),
                 share_ ? share_->exchange_hosts() : ctx.learner_hosts);
  LearnerControl control(ctx.learners, ctx.world, ctx.waits, s.liveness_seconds);
  layout_ = layout_of(run.shapes());
  if (share_ && exchanges) host_copy_.assign(share_->size(), 0.0f);
  std::vector<float>& w = share_ ? host_copy_ : run.weights();
  const auto to_shared = [&] { std::copy(w.begin(), w.end(), share_->weights()); };
  const auto from_shared = [&] { std::copy(share_->weights(), share_->weights() + w.size(), w.begin()); };
  // A model's written rows cover only its own steps: with shared weights every row may have changed.
  const auto written = [&] { return share_ ? bridge::WrittenRows{} : run.written_rows(); };
  std::optional<SparseLearner> sparse;
  if (exchanges && sparse_exchange(s, w.size(), ctx.learners_on_one_host()))
    sparse.emplace(*sync, layout_, s, sparse_publisher(), combine_);
  bool first = true;
  for (;;) {
    const comm::Control c = control.next();
    if (c.command == comm::Control::Command::Stop) {
      if (sparse && sparse->lossy() && !first) {  // the final flush (dispatcher_rounds): every member counts 1/L
        sparse->learner_round(w, 1.0 / (sync->comm().size() - 1), RoundKind::Full, written());
        after_sparse_round(*sync, sparse->global());
        if (share_) to_shared();
      }
      run.send_state();
      if (share_) share_->release();
      return;
    }
    ctx.hooks.reached(c.round);
    run.plan(c.plan);
    control.report(comm::Tag::Ready, c.round);
    if (exchanges && (!sparse || first)) {
      open_round(*sync, w, first);
      if (sparse) {
        sparse->start_from(w);
        run.written_rows();  // starts the count, so that this round reads only the rows its steps write
      }
    }
    if (share_ && first) {  // the leader brings the shared weights to the round's start
      if (exchanges) to_shared();
      share_->barrier();
    }
    first = false;
    run.next_batch();
    comm::WindowTotals mine = run.train(s.balance_rounds ? c.round : 0, {}, c.steps);
    control.report(comm::Tag::RoundDone, c.round);
    if (share_) {
      mine = share_->host_totals(mine);
      share_->barrier();  // every learner of the host is done writing
      if (exchanges) from_shared();
    }
    if (exchanges) {
      const comm::WindowTotals total = sync->totals(mine);
      const double share = mine.windows / total.windows;
      if (sparse) {
        sparse->learner_round(w, share, round_kind(s, c.round), written());
        after_sparse_round(*sync, sparse->global());
      } else {
        close_round(*sync, w, static_cast<float>(share));
      }
    }
    if (share_) {
      if (exchanges) to_shared();
      share_->barrier();  // the round's result is in the shared weights
    }
    control.complete_reports();
    if (c.round % s.checkpoint_every == 0) run.send_state();
  }
}

}  // namespace fedavg::training
