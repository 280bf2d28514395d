// The sparse exchange of a lock-step run (sparse_exchange.hpp): the strategy's open_round in a process's first
// round, then each round's changed rows through SparseLearner or SparseDispatcher, the strategy's outer step
// where it has one, and its after_sparse_round (Lockstep).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "core/floats.hpp"
#include "core/settings.hpp"
#include "training/exchange/combine_rule.hpp"
#include "training/exchange/sparse_delta.hpp"
#include "training/exchange/sparse_dispatcher.hpp"
#include "training/exchange/sparse_exchange.hpp"
#include "training/exchange/sparse_learner.hpp"
#include "training/run_plan.hpp"
#include "training/strategies/round_exchange.hpp"

namespace fedavg::training {

class HostShare;
class Lockstep;
class LearnerRun;

class SparseRoundExchange : public RoundExchange {
 public:
  // `run`: a learner's run, which says what rows its model wrote (null on the Dispatcher); `share`: the host's
  // shared weights, which the host's other learners write too (null: the learner's own copy): the rows written
  // are those the host's learners marked (HostShare::take_written), or every row where they mark none. `rule`:
  // how the owners combine the rows they sum. The rows and values sent are the run plan's
  // (RunPlan::sparse_rows, sparse_values).
  SparseRoundExchange(Lockstep& strategy, std::unique_ptr<RoundSync> sync, Layout layout, const core::Settings& s,
                      const RunPlan& plan, CombineRule rule, LearnerRun* run, const HostShare* share);

  void open(core::Floats w, bool first) override;
  // A regular round's rows are picked here (SparseLearner::choose); whole and full ones are read in close().
  void prepare(core::Floats w, RoundEnd end) override;
  void close(core::Floats w, double share, RoundEnd end) override;
  bool flush(core::Floats w) override;
  bool adds_in_place() const override { return true; }
  // Only where rows wait: with every changed row sent, a whole round is a regular one.
  bool checkpoint_rounds_cost_more() const override { return s_.sparse_rows < 1.0; }
  double bytes() const override;
  double inbound_bytes() const override;

 private:
  // A round of `kind`: a learner sends its change at `share`, the Dispatcher leaves the global weights in `w`.
  void round(core::Floats w, double share, RoundKind kind);
  void dispatcher_round(core::Floats w, RoundKind kind);
  // Whether regular rounds keep something back (a fraction of the rows, 16-bit values).
  bool lossy() const;
  // The rows the learner's model (or its host's learners) wrote since the last call (none said: every row is
  // read).
  bridge::WrittenRows written() const;

  Lockstep& strategy_;
  core::Settings s_;  // the run's, with the run plan's sparse_rows and sparse_values
  LearnerRun* run_;
  const HostShare* share_;
  bool opened_ = false;  // a round has run: the final flush has something to send
  std::optional<SparseLearner> learner_;
  std::optional<SparseDispatcher> dispatcher_;
};

}  // namespace fedavg::training
