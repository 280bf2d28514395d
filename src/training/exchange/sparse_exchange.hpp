// The sparse weight exchange of a lock-step round (exchange "sparse", docs/strategies.md#sparse-exchange): each
// learner sends only the rows it changed since the round's global weights, scaled by its share of the round's
// windows (for the "touched" weighting also each row's weight), each row to the learner that owns it
// (row_owners.hpp), so the summing is spread over the learners and nothing funnels through one rank. Without an
// outer step every owner turns the sum of its rows into their global change and sends it to every other member,
// the Dispatcher included, straight to the members of its host and through one relay on each other host
// (host_relay.hpp); with one (bmuf, diloco) the owners send their sums to the Dispatcher, which steps and
// sends the global change down the learner tree. Every member adds the same global change to the same global
// weights, so all hold the same bits. Lossy settings (a fraction of the rows, 16-bit values) leave what a learner
// did not send in its own weights, on top of the global ones, where it keeps training and joins a later delta
// (error feedback); what a publisher's rounding lost waits in its residual. A full round sends everything. A
// learner reads only the rows its model's steps wrote (engine.written_rows), and remembers the size of what it
// kept back. The two sides are SparseLearner (sparse_learner.hpp) and SparseDispatcher (sparse_dispatcher.hpp),
// and what both use is SparseLink (sparse_link.hpp); this file holds the words they share and when a run uses it.
#pragma once

#include <cstddef>

#include "core/settings.hpp"

namespace fedavg::training {

// Who turns the summed delta into the global change: each owner for its rows (no outer step), or the Dispatcher
// (a strategy with an outer step, which runs there).
enum class Publisher { Owners, Dispatcher };

// A round's kind. Regular: the lossy settings hold (a fraction of the rows, 16-bit values). Whole: every change
// kept back, in the values' own type, so that only what their rounding lost waits (a round that ends in a
// checkpoint). Full: every change, and every publisher's residual, in float32 (full_sync_every, and the final
// flush).
enum class RoundKind { Regular, Whole, Full };

// The exchange a run uses: sparse for "sparse", and for "auto" when the model has at least core::kLargeModel
// parameters and the Dispatcher and the learners are not all on one host (below that size, or within one host's
// shared memory, the dense exchange costs less than finding and packing the changed rows).
bool sparse_exchange(const core::Settings& s, std::size_t params, bool learners_on_one_host);

}  // namespace fedavg::training
