#include "training/strategies/sparse_round_exchange.hpp"

#include "training/exchange/host_share.hpp"
#include "training/learner_run.hpp"
#include "training/strategies/lockstep.hpp"

namespace fedavg::training {

namespace {

// The kind of a round of the sparse exchange: full every full_sync_every rounds; whole where a lossy exchange's
// round ends in a checkpoint (what the members kept back is in no checkpoint, so a restart would lose it; what
// 16-bit values lost to rounding waits, as in every round).
RoundKind round_kind(const core::Settings& s, RoundEnd end, bool lossy) {
  if (s.full_sync_every > 0 && end.round % s.full_sync_every == 0) return RoundKind::Full;
  return end.checkpoint && lossy ? RoundKind::Whole : RoundKind::Regular;
}

}  // namespace

SparseRoundExchange::SparseRoundExchange(Lockstep& strategy, std::unique_ptr<RoundSync> sync, Layout layout,
                                         const core::Settings& s, const RunPlan& plan, CombineRule rule,
                                         LearnerRun* run, const HostShare* share)
    : RoundExchange(std::move(sync)), strategy_(strategy), s_(s), run_(run), share_(share) {
  s_.sparse_rows = plan.sparse_rows;
  s_.sparse_values = plan.sparse_values;
  // Without an outer step the learners that own the rows turn their sum into the global change themselves.
  const Publisher publisher = strategy.has_outer_step() ? Publisher::Dispatcher : Publisher::Owners;
  if (this->sync().on_dispatcher()) {
    dispatcher_.emplace(this->sync(), std::move(layout), s_, publisher);
  } else {
    learner_.emplace(this->sync(), std::move(layout), s_, publisher, rule);
  }
}

void SparseRoundExchange::open(core::Floats w, bool first) {
  if (!first) return;
  strategy_.open_round(sync(), w, first);
  opened_ = true;
  if (!learner_) return;
  learner_->start_from(w);
  run_->written_rows();  // starts the count, so that this round reads only the rows its steps write
}

void SparseRoundExchange::prepare(core::Floats w, RoundEnd end) {
  if (!learner_) return;
  const RoundKind kind = round_kind(s_, end, lossy());
  if (kind == RoundKind::Regular) learner_->choose(w, kind, written());
}

void SparseRoundExchange::close(core::Floats w, double share, RoundEnd end) {
  round(w, share, round_kind(s_, end, lossy()));
}

bool SparseRoundExchange::lossy() const { return learner_ ? learner_->lossy() : dispatcher_->lossy(); }

bool SparseRoundExchange::flush(core::Floats w) {
  if (!opened_ || !lossy()) return false;
  // Every member counts 1/L.
  round(w, 1.0 / (sync().comm().size() - 1), RoundKind::Full);
  return true;
}

void SparseRoundExchange::round(core::Floats w, double share, RoundKind kind) {
  if (dispatcher_) {
    dispatcher_round(w, kind);
    return;
  }
  // Rows chosen in prepare(): the rows written are read already (taken again, they would be lost).
  const auto wr = learner_->chosen() ? bridge::WrittenRows{} : written();
  learner_->learner_round(w, share, kind, wr);
  const std::vector<float>& global = learner_->global();
  strategy_.after_sparse_round(sync(), global.data(), global.size());
}

void SparseRoundExchange::dispatcher_round(core::Floats w, RoundKind kind) {
  if (dispatcher_->publisher() == Publisher::Owners) {
    dispatcher_->receive_global(w, kind);
  } else {
    SparseDelta& change = dispatcher_->collect(kind);
    strategy_.outer_step(change, dispatcher_->layout());
    dispatcher_->publish(change, w, kind);
  }
  strategy_.after_sparse_round(sync(), w.data(), w.size());
}

bridge::WrittenRows SparseRoundExchange::written() const {
  if (!share_) return run_->written_rows();
  return share_->tracks_rows() ? share_->take_written(run_->written_rows()) : bridge::WrittenRows{};
}

double SparseRoundExchange::bytes() const {
  return dispatcher_ ? RoundExchange::bytes() + dispatcher_->bytes() : RoundExchange::bytes();
}

double SparseRoundExchange::inbound_bytes() const {
  return dispatcher_ ? RoundExchange::inbound_bytes() + dispatcher_->inbound_bytes() : RoundExchange::inbound_bytes();
}

}  // namespace fedavg::training
