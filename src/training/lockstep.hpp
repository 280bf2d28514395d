// The lock-step round that fedavg, bsp and bmuf share, on both sides (docs/protocol.md): the Dispatcher
// broadcasts Control, every learner reports Ready, the strategy's opening exchange, bpe training steps (with
// balance_rounds, cut short once the first learner is done), RoundDone, the window totals, the strategy's
// closing exchange. A strategy of this shape says only what its two exchanges are; both sides call them, and
// RoundSync::on_dispatcher() tells them apart where they differ.
#pragma once

#include <memory>
#include <vector>

#include "training/combine_rule.hpp"
#include "training/host_share.hpp"
#include "training/round_sync.hpp"
#include "training/sparse_delta.hpp"
#include "training/sparse_dispatcher.hpp"
#include "training/sparse_exchange.hpp"
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

 protected:
  // Before training. Dispatcher: send what learners start from (`w` holds the global weights). Learner: bring
  // `w` to this round's starting point. `first`: this process's first round.
  virtual void open_round(RoundSync& sync, std::vector<float>& w, bool first) = 0;
  // After training. Learner: contribute `w` scaled by `share`, its share of the round's windows. Dispatcher:
  // receive the contributions and leave the new global weights in `w` (its `share` is 0).
  virtual void close_round(RoundSync& sync, std::vector<float>& w, float share) = 0;
  // With the sparse exchange (sparse_exchange.hpp), which takes the place of close_round after the first
  // round's open_round. Dispatcher: turns the learners' average change into the change of the global weights.
  // Only a strategy with an outer step overrides it (and has_outer_step); without one, the learners that own
  // the rows turn their sum into the global change themselves.
  virtual void outer_step(SparseDelta& average, const Layout& layout);
  virtual bool has_outer_step() const;
  // With the sparse exchange, every member, after the round's exchange, with the global weights.
  virtual void after_sparse_round(RoundSync& sync, const std::vector<float>& w);
  // Where each parameter lies in the weights (set before the first round).
  const Layout& layout() const { return layout_; }
  const CombineRule& combine() const { return combine_; }

 private:
  // Dispatcher: the sparse exchange of a round of `kind`, leaving the new global weights in `w`.
  void dispatcher_sparse_round(RoundSync& sync, SparseDispatcher& sparse, std::vector<float>& w, RoundKind kind);
  Publisher sparse_publisher() const;
  CombineRule combine_;
  Layout layout_;
  std::unique_ptr<HostShare> share_;  // share_host with several learners on a host; else null
  std::vector<float> host_copy_;      // a leader's copy of its host's weights, for the exchange
};

}  // namespace fedavg::training
