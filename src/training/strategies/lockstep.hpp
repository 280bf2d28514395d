// The lock-step round that fedavg, bsp and bmuf share, on both sides (docs/protocol.md): the Dispatcher
// broadcasts Control, every learner reports Ready, the exchange's opening, bpe training steps (with
// balance_rounds, cut short once the first learner is done), RoundDone, the window totals, the exchange's
// closing. The exchange (RoundExchange), dense or sparse, is chosen once per run; a strategy of this shape says
// only what its dense exchanges are and, for the sparse one, its outer step; both sides call them, and
// RoundSync::on_dispatcher() tells them apart where they differ. With shared host weights (HostShare) only each
// host's leader is in the exchange, for its host.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

#include "core/floats.hpp"
#include "training/collectives/round_sync.hpp"
#include "training/exchange/combine_rule.hpp"
#include "training/exchange/host_share.hpp"
#include "training/exchange/sparse_delta.hpp"
#include "training/strategies/round_exchange.hpp"
#include "training/strategy.hpp"

namespace fedavg::training {

class Lockstep : public Strategy {
 public:
  // `rule`: how the exchange combines the members' changes (CombineRule), for both exchanges.
  explicit Lockstep(CombineRule rule) : combine_(rule) {}
  void dispatcher_rounds(DispatcherRun& run) final;
  void learner_rounds(LearnerRun& run) final;
  // share_host with several learners on a host (HostShare): the host's shared copy of the weights.
  float* learner_weights(const Context& ctx, std::size_t params) override;
  // Its host's learners where they share the weights (HostShare), else 1.
  int sharing(const Context& ctx) const override;

 protected:
  // Before training. Dispatcher: send what learners start from (`w` holds the global weights). Learner: bring
  // `w` to this round's starting point. `first`: this process's first round.
  virtual void open_round(RoundSync& sync, core::Floats w, bool first) = 0;
  // Whether open_round brings a learner new weights in every round (the Dispatcher's), not only in a process's
  // first: with shared host weights the host's learners then wait for them before they train.
  virtual bool opens_with_weights() const;
  // After training. Learner: contribute `w` scaled by `share`, its share of the round's windows. Dispatcher:
  // receive the contributions and leave the new global weights in `w` (its `share` is 0).
  virtual void close_round(RoundSync& sync, core::Floats w, float share) = 0;
  // Whether close_round leaves a sole learner member's `w` as it is (it only sends it): the dense exchange of one
  // host may then run on the weights the host's other learners train meanwhile (RoundExchange::adds_in_place).
  virtual bool sole_member_keeps_weights() const;
  // With the sparse exchange (sparse_exchange.hpp), which takes the place of close_round after the first
  // round's open_round. Dispatcher: turns the learners' average change into the change of the global weights.
  // Only a strategy with an outer step overrides it (and has_outer_step); without one, the learners that own
  // the rows turn their sum into the global change themselves.
  virtual void outer_step(SparseDelta& average, const Layout& layout);
  virtual bool has_outer_step() const;
  // With the sparse exchange, every member, after the round's exchange, with the global weights (`size` floats).
  virtual void after_sparse_round(RoundSync& sync, const float* w, std::size_t size);
  // Where each parameter lies in the weights (set before the first round).
  const Layout& layout() const { return layout_; }
  const CombineRule& combine() const { return combine_; }

 private:
  friend class DenseRoundExchange;
  friend class SparseRoundExchange;

  // Whether the run shares hosts' weights: share_host is set and some host has several learners.
  static bool shares_hosts(const Context& ctx);
  // The fewest learners that share a host's weights, over the hosts.
  static int fewest_sharing(const Context& ctx);
  // Collective over ctx.learners: the host share of a run that shares_hosts, with `params` floats.
  static std::unique_ptr<HostShare> host_share(const Context& ctx, std::size_t params);

  // The run's exchange, over the Dispatcher and every learner (`learner_ranks`, by learner index), or with
  // shared host weights the Dispatcher and the hosts' leaders; `params` floats. `run`: a learner's (null on the
  // Dispatcher).
  std::unique_ptr<RoundExchange> exchange(const Context& ctx, const core::Settings& s,
                                          const std::vector<int>& learner_ranks, std::size_t params, LearnerRun* run);

  // The sparse exchange of shared weights (collective over the host's learners): the host's learners mark the rows
  // each step wrote, so that the leader reads only those (HostShare::take_written), not every row of the tables.
  // Returns what a learner runs after each step.
  std::function<void(std::int64_t)> marks_rows(LearnerRun& run);

  CombineRule combine_;
  Layout layout_;
  std::unique_ptr<HostShare> share_;  // share_host with several learners on a host; else null
};

}  // namespace fedavg::training
