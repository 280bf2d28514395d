// The Dispatcher's side of the sparse exchange (sparse_exchange.hpp): it takes the owners' global change
// (Publisher::Owners), or collects the learners' summed delta and publishes the global change down the learner
// tree (Publisher::Dispatcher, after the strategy's outer step), and counts the bytes the exchange moves.
#pragma once

#include <vector>

#include "core/floats.hpp"
#include "core/settings.hpp"
#include "training/collectives/round_sync.hpp"
#include "training/exchange/sparse_delta.hpp"
#include "training/exchange/sparse_exchange.hpp"
#include "training/exchange/sparse_link.hpp"

namespace fedavg::training {

class SparseDispatcher {
 public:
  SparseDispatcher(RoundSync& sync, Layout layout, const core::Settings& s, Publisher publisher);

  Publisher publisher() const { return link_.publisher(); }
  const Layout& layout() const { return link_.layout(); }
  unsigned threads() const { return link_.threads(); }
  bool lossy() const { return link_.lossy(); }
  // Payload bytes moved so far: every learner's rows sent to their owners, and the global change once per
  // learner.
  double bytes() const { return link_.bytes(); }
  // Bytes the Dispatcher received so far.
  double inbound_bytes() const { return link_.inbound_bytes(); }

  // Publisher::Owners: adds the owners' global change to `w`. `kind` as the learners'.
  void receive_global(core::Floats w, RoundKind kind);
  // Publisher::Dispatcher: the learners' summed delta (each row divided by its weight for "touched"). Valid until
  // the next collect.
  SparseDelta& collect(RoundKind kind);
  // Publisher::Dispatcher: adds `delta` to `w` and sends it down the learner tree in the learners' values (a full
  // round: float32), rounded before it adds it, so every replica adds exactly the same; the rounding waits in the
  // Dispatcher's residual for the row's next change (or the next full round). Leaves in `delta` what it sent, but
  // for a full round, after which `delta` is gone (release_buffers).
  void publish(SparseDelta& delta, core::Floats w, RoundKind kind);

 private:
  // After a full round, which moves every changed row: gives back the memory of its buffers, which would
  // otherwise hold up to two copies of the weights for the rest of the run.
  void release_buffers();

  SparseLink link_;
  SparseDelta sum_;  // collect's, kept from round to round for its capacity
};

}  // namespace fedavg::training
