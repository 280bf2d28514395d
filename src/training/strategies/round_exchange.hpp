// The weight exchange of a lock-step run (Lockstep), chosen once per run: dense (DenseRoundExchange: the
// strategy's open_round and close_round every round) or sparse (SparseRoundExchange, sparse_exchange.hpp). It
// owns the round's RoundSync. Every member of the exchange, the Dispatcher and the learners alike, calls the same
// steps in the same order.
#pragma once

#include <memory>
#include <vector>

#include "comm/messages.hpp"
#include "core/floats.hpp"
#include "training/collectives/round_sync.hpp"

namespace fedavg::training {

// How a round ends: its number, and whether the Dispatcher writes a checkpoint after it (comm::Control's
// checkpoint, so every member knows it before the round's close). A lossy sparse exchange sends every change it
// kept back in such a round (RoundKind::Whole), so that the checkpoint holds every change the learners made.
struct RoundEnd {
  long round = 0;
  bool checkpoint = false;
};

class RoundExchange {
 public:
  explicit RoundExchange(std::unique_ptr<RoundSync> sync) : sync_(std::move(sync)) {}
  virtual ~RoundExchange() = default;
  RoundExchange(const RoundExchange&) = delete;
  RoundExchange& operator=(const RoundExchange&) = delete;

  // Before training. Dispatcher: sends what learners start from (`w` holds the global weights). Learner: brings
  // `w` to the round's starting point. `first`: this process's first round.
  virtual void open(core::Floats w, bool first) = 0;
  // Learner, after training and before the totals, where nothing more of the round is written to `w` after it, or
  // the host's learners train on through the close anyway (overlap): reads what the round changed, so that close()
  // need not (the sparse exchange picks its rows while the other members finish training). Optional.
  virtual void prepare(core::Floats /*w*/, RoundEnd /*end*/) {}
  // After training: the round's window totals over every member, of each member's `mine`.
  comm::WindowTotals totals(const comm::WindowTotals& mine) { return sync_->totals(mine); }
  // After training. Learner: contributes `w`, trained on `share` of the round's windows, and leaves in `w` the
  // new global weights (the sparse exchange: plus what it kept back). Dispatcher: leaves the new global weights in
  // `w` (its `share` is 0). `end` picks the sparse exchange's whole and full rounds.
  virtual void close(core::Floats w, double share, RoundEnd end) = 0;
  // After the last round, on Stop: the final flush of a lossy sparse exchange, a full round with no training, so
  // that the final weights hold every change kept back. True if it ran.
  virtual bool flush(core::Floats w) = 0;
  // Whether a learner's close only adds to `w`: it takes from each row what it sends and adds what it receives,
  // and writes no other row. Such a close may run on weights that the host's other learners train meanwhile
  // (overlap), as Hogwild's learners write theirs: a step written to a row in the instant the close updates that
  // row may be lost, as concurrent steps may lose one another's.
  virtual bool adds_in_place() const { return false; }
  // Whether a round that ends in a checkpoint sends more than others (a lossy sparse exchange: every change kept
  // back).
  virtual bool checkpoint_rounds_cost_more() const { return false; }
  // Bytes of weights moved so far (RoundSync::weight_bytes, and the sparse exchange's), and those the
  // Dispatcher received.
  virtual double bytes() const { return sync_->weight_bytes(); }
  virtual double inbound_bytes() const { return sync_->inbound_bytes(); }

 protected:
  RoundSync& sync() { return *sync_; }

 private:
  std::unique_ptr<RoundSync> sync_;
};

}  // namespace fedavg::training
