#include "training/strategies/fedavg.hpp"

namespace fedavg::training {

namespace {

std::size_t rows_of(const Layout& layout) {
  std::size_t n = 0;
  for (const Table& t : layout) n += t.rows;
  return n;
}

// Calls f(row, first float, cols) for every row of every table of `layout`, rows numbered across the tables.
template <typename F> void each_row(const Layout& layout, const F& f) {
  std::size_t row = 0;
  for (const Table& t : layout)
    for (std::size_t r = 0; r < t.rows; ++r, ++row) f(row, t.offset + r * t.cols, t.cols);
}

}  // namespace

// The same on both sides. A process's first round starts from the Dispatcher's weights. The sum up the learner
// tree is the new global weights: the Dispatcher keeps the copy it received, and learner 1, which computed it,
// passes it down its subtree at once, so the next round needs nothing from the Dispatcher.
void FedAvg::open_round(RoundSync& sync, core::Floats w, bool first) {
  if (first) sync.weights(w);
  // The round's start, which adding takes the changes from: only where several members add theirs.
  if (first && combine().adds() && sync.comm().size() > 2) start_.assign(w.begin(), w.end());
}

void FedAvg::close_round(RoundSync& sync, core::Floats w, float share) {
  // One learner's change added to the start is its weights: the average keeps its bits exactly.
  if (combine().adds() && sync.comm().size() > 2) {
    add_changes(sync, w, share);
    return;
  }
  // A sole member's weights are the new global weights, whatever its share: it sends them as they are.
  sync.average_into_root(w, sync.comm().size() == 2 ? 1.0f : share);
  sync.weights(w, true);
}

void FedAvg::add_changes(RoundSync& sync, core::Floats w, float share) {
  const int learners = sync.comm().size() - 1;
  touched_.assign(2 * rows_of(layout()), 0.0f);
  // Scaled by L n_i / N: with equal windows each learner's change counts whole, as Hogwild adds its steps.
  const float scale = share * static_cast<float>(learners);
  if (!sync.on_dispatcher()) own_changes(w, scale);
  sync.average_into_root(w, scale);
  sync.average_into_root(touched_, scale);
  if (sync.on_dispatcher() || sync.comm().rank() == 1) apply_changes(w);
  sync.weights(w, true);
  start_.assign(w.begin(), w.end());
}

void FedAvg::own_changes(core::Floats w, float scale) {
  const std::size_t rows = touched_.size() / 2;
  each_row(layout(), [&](std::size_t row, std::size_t at, std::size_t cols) {
    combine().own_change(w.data() + at, start_.data() + at, cols, scale, touched_[row], touched_[rows + row]);
  });
}

void FedAvg::apply_changes(core::Floats w) const {
  const std::size_t rows = touched_.size() / 2;
  each_row(layout(), [&](std::size_t row, std::size_t at, std::size_t cols) {
    combine().apply_sum(w.data() + at, start_.data() + at, cols, touched_[row], touched_[rows + row]);
  });
}

}  // namespace fedavg::training
