#include "training/exchange/sparse_dispatcher.hpp"

#include "comm/communicator.hpp"

namespace fedavg::training {

SparseDispatcher::SparseDispatcher(RoundSync& sync, Layout layout, const core::Settings& s, Publisher publisher)
    : link_(sync, std::move(layout), s, publisher) {}

void SparseDispatcher::receive_global(core::Floats w, RoundKind kind) {
  link_.take_owners_sums(w.data(), nullptr, kind, SparseLink::Receiver::Dispatcher);
  if (kind == RoundKind::Full) release_buffers();
}

SparseDelta& SparseDispatcher::collect(RoundKind kind) {
  const auto deadline = comm::Deadline::after(link_.sync().liveness());
  sum_.parts.resize(link_.layout().size());
  sum_.clear();
  for (int j = 1; j <= link_.learners(); ++j) {
    link_.receive_counted(j, comm::Tag::RowDelta, deadline);
    // The owners' rows are disjoint.
    sum_.merge_encoded(link_.msg(), link_.layout(), link_.values(kind), SparseLink::kCount, link_.spare(),
                       &link_.workers());
  }
  return sum_;
}

void SparseDispatcher::publish(SparseDelta& delta, core::Floats w, RoundKind kind) {
  link_.round_with_residual(delta, kind);
  delta.apply_to(w.data(), link_.layout());
  std::vector<std::uint8_t>& msg = link_.msg();
  delta.encode(msg, link_.layout(), link_.values(kind), 0, &link_.workers());
  link_.sync().down_tree(msg, comm::Tag::RowGlobal, true);
  link_.count_bytes(static_cast<double>(msg.size()) * link_.learners());
  if (kind == RoundKind::Full) release_buffers();  // `delta` (sum_) with them
}

void SparseDispatcher::release_buffers() {
  link_.drop(sum_);
  link_.release_buffers();
}

}  // namespace fedavg::training
