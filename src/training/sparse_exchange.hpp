// The sparse weight exchange of a lock-step round (exchange "sparse", docs/strategies.md#sparse-exchange): each
// learner sends only the rows it changed since the round's global weights (scaled by its share of the round's
// windows, which for the "touched" weighting is also each row's weight), summed along the learner tree so the
// Dispatcher receives one delta however many learners there are; the Dispatcher adds the average to the global
// weights and sends what it added back down the tree, and every learner adds that to the global weights it
// started from, so all hold the same bits again. Lossy settings (a fraction of the rows, 16-bit values) keep what
// was not sent in a residual (error feedback) that joins the next delta; a full round sends everything, residuals
// included.
#pragma once

#include <cstdint>
#include <vector>

#include "core/settings.hpp"
#include "training/round_sync.hpp"
#include "training/sparse_delta.hpp"

namespace fedavg::training {

class SparseExchange {
 public:
  SparseExchange(RoundSync& sync, Layout layout, const core::Settings& s);

  // Learner, holding the global weights (after a dense broadcast): they are the start of the next round.
  void start_from(const std::vector<float>& w);
  // Learner: sends what it changed since the start, scaled by `share` (its share of the round's windows; for
  // the "touched" weighting also each row's weight), takes the global delta and leaves the new global weights
  // in `w`. `full`: every changed row and every residual, in float32.
  void learner_round(std::vector<float>& w, double share, bool full);
  // Dispatcher: the learners' summed delta (each row divided by its weight for "touched"); `full` as theirs.
  // Valid until the next collect.
  SparseDelta& collect(bool full);
  // Dispatcher: adds `delta` to `w` and sends it down the learner tree in the learners' value type (`full`:
  // float32), rounded before it adds it, so every replica adds exactly the same; the rounding waits in the
  // Dispatcher's residual for the row's next change (or the next full round). Leaves in `delta` what it sent.
  void publish(SparseDelta& delta, std::vector<float>& w, bool full);

  const Layout& layout() const { return layout_; }
  // Lossy settings (a fraction of the rows, 16-bit values): residuals hold changes not sent yet.
  bool lossy() const { return type_ != ValueType::Float32 || fraction_ < 1.0; }
  // Payload bytes moved so far: every member's send up the tree, and the global delta once per learner.
  double bytes() const { return bytes_; }
  // Bytes the Dispatcher received so far.
  double inbound_bytes() const { return inbound_; }

 private:
  // The learner's own delta into own_: changed rows (and rows with a residual) since start_, chosen and scaled;
  // puts the changed rows of `w` back to start_.
  void own_delta(std::vector<float>& w, double share, bool full);
  // Sums the children's deltas into own_ and sends it to the parent.
  void reduce_up(bool full);
  // Dispatcher: the rows with a rounding residual, with zero values.
  SparseDelta pending_residual() const;
  ValueType type(bool full) const { return full ? ValueType::Float32 : type_; }

  RoundSync& sync_;
  Layout layout_;
  ValueType type_;
  double fraction_;   // of each table's rows a learner sends per round (1: every changed row)
  bool touched_;      // weight each row by the windows of the learners that sent it
  std::vector<float> start_;     // learner: the global weights the round started from
  std::vector<float> residual_;  // what was not sent yet: a learner's (lossy settings), the Dispatcher's (16-bit)
  // Kept from round to round for their capacity: a round allocates nothing once it has seen its largest.
  SparseDelta own_;    // learner: its subtree's delta; Dispatcher: the collected one
  SparseDelta other_;  // learner: a child's delta, then the global one
  std::vector<std::uint8_t> msg_;
  std::vector<std::pair<float, std::uint32_t>> candidates_;  // learner: rows with a change to send, and its size
  double bytes_ = 0.0;
  double inbound_ = 0.0;
};

// The exchange a run uses: sparse for "sparse", and for "auto" when the model has at least 8M parameters and the
// Dispatcher and the learners are not all on one host (below that size, or within one host's shared memory, the
// dense exchange costs less than finding and packing the changed rows).
bool sparse_exchange(const core::Settings& s, std::size_t params, bool learners_on_one_host);

}  // namespace fedavg::training
