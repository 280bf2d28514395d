#include "training/exchange/sparse_link.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "comm/communicator.hpp"
#include "comm/error.hpp"

namespace fedavg::training {
namespace {

ValueType value_type(core::ExchangeType t) {
  switch (t) {
    case core::ExchangeType::Float16: return ValueType::Float16;
    case core::ExchangeType::BFloat16: return ValueType::BFloat16;
    case core::ExchangeType::Int8: return ValueType::Int8;
    case core::ExchangeType::Float32: break;
  }
  return ValueType::Float32;
}

double count_of(const std::vector<std::uint8_t>& msg) {
  double bytes = 0;
  if (msg.size() < SparseLink::kCount)
    throw comm::Error("sparse weights: a message of " + std::to_string(msg.size()) + " bytes");
  std::memcpy(&bytes, msg.data(), SparseLink::kCount);
  return bytes;
}

// exchange_threads, or (0) this member's share of its host's cores: the members of the exchange on its host
// (learners and the Dispatcher, `hosts` by rank; empty: all on one) do their row work at the same time.
unsigned exchange_threads(const core::Settings& s, const RoundSync& sync) {
  if (s.exchange_threads > 0) return static_cast<unsigned>(s.exchange_threads);
  const auto& hosts = sync.hosts();
  const int me = sync.comm().rank();
  const auto sharers = hosts.empty() ? sync.comm().size()
                                     : std::count(hosts.begin(), hosts.end(), hosts[static_cast<std::size_t>(me)]);
  return core::share_of_cores(static_cast<unsigned>(sharers));
}

}  // namespace

void SparseLink::put_count(std::vector<std::uint8_t>& msg, double bytes) { std::memcpy(msg.data(), &bytes, kCount); }

SparseLink::SparseLink(RoundSync& sync, Layout layout, const core::Settings& s, Publisher publisher)
    : sync_(sync),
      layout_(std::move(layout)),
      type_(value_type(s.sparse_values)),
      fraction_(s.sparse_rows),
      publisher_(publisher),
      block_(sync.on_dispatcher() ? RowOwners(layout_, 1, 0) : RowOwners(layout_, learners(), sync.comm().rank() - 1)),
      relay_(sync.hosts(), sync.comm().size()),
      spare_(layout_.size()),
      workers_(exchange_threads(s, sync)) {}

void SparseLink::receive(int from, comm::Tag tag, const comm::Deadline& deadline) {
  sync_.comm().receive(sync_.comm().await_message(from, tag, deadline, sync_.who(from), sync_.waits().collective()),
                       msg_);
}

void SparseLink::receive_counted(int from, comm::Tag tag, const comm::Deadline& deadline) {
  receive(from, tag, deadline);
  inbound_ += static_cast<double>(msg_.size());
  bytes_ += count_of(msg_);
}

void SparseLink::receive_sum(int from, comm::Tag tag, const comm::Deadline& deadline, Receiver receiver) {
  if (receiver == Receiver::Dispatcher) {
    receive_counted(from, tag, deadline);
  } else {
    receive(from, tag, deadline);
  }
}

void SparseLink::take_owners_sums(float* w, float* also, RoundKind kind, Receiver receiver) {
  const auto& comm = sync_.comm();
  const int me = comm.rank();
  const double hops = receiver == Receiver::Dispatcher ? 1.0 : comm::kIndirect;
  const auto deadline = comm::Deadline::after(sync_.liveness() * hops);
  const ValueType type = values(kind);
  const std::vector<int> pass = relay_.passes_to(me);
  std::size_t passing = 0;
  for (const int j : relay_.direct_from(me)) {
    receive_sum(j, comm::Tag::RowGlobal, deadline, receiver);
    if (pass.empty() || relay_.same_host(j, me)) {
      SparseDelta::add_encoded(msg_, layout_, type, kCount, w, also, &workers_);
      continue;
    }
    // Another host's sum: kept until its sends to this host's members are done.
    if (passed_.size() <= passing) passed_.resize(passing + 1);
    std::vector<std::uint8_t>& keep = passed_[passing++];
    keep.swap(msg_);
    for (const int k : pass) sends_.push_back(comm.isend(keep.data(), keep.size(), k, comm::Tag::RowRelay));
    SparseDelta::add_encoded(keep, layout_, type, kCount, w, also, &workers_);
  }
  for (int k = 0, relayed = relay_.relayed_to(me); k < relayed; ++k) {
    receive_sum(relay_.relay(me), comm::Tag::RowRelay, deadline, receiver);
    SparseDelta::add_encoded(msg_, layout_, type, kCount, w, also, &workers_);
  }
}

void SparseLink::wait_sends() {
  const auto deadline = comm::Deadline::after(sync_.liveness() * comm::kIndirect);
  for (auto& r : sends_) r.wait_until(deadline, sync_.waits().collective());
  sends_.clear();
}

void SparseLink::release_buffers() {
  std::vector<std::vector<std::uint8_t>>().swap(passed_);
  drop(spare_);
  std::vector<std::uint8_t>().swap(msg_);
}

void SparseLink::add_residual_rows(SparseDelta& delta) const {
  SparseDelta pending(layout_.size());
  for (std::size_t p = 0; p < layout_.size(); ++p) {
    const Table& tab = layout_[p];
    for (auto r = static_cast<std::uint32_t>(block_.first_row()); r < tab.rows;
         r += static_cast<std::uint32_t>(block_.owners())) {
      const float* x = residual_.data() + block_.in_block(p, r);
      if (std::all_of(x, x + tab.cols, [](float v) { return v == 0.0f; })) continue;
      pending.parts[p].rows.push_back(r);
      pending.parts[p].values.insert(pending.parts[p].values.end(), tab.cols, 0.0f);
    }
  }
  delta.add(pending, layout_);
}

void SparseLink::round_with_residual(SparseDelta& delta, RoundKind kind) {
  if (type_ == ValueType::Float32) return;  // float32 values both ways: nothing is lost
  if (residual_.empty()) residual_.assign(block_.block_size(), 0.0f);
  if (kind == RoundKind::Full) add_residual_rows(delta);  // with zero values: the residual is added below
  const ValueType t = values(kind);
  for (std::size_t p = 0; p < layout_.size(); ++p) {
    auto& part = delta.parts[p];
    const std::size_t cols = layout_[p].cols;
    workers_.for_range(part.rows.size(), kRowGrain, [&](std::size_t begin, std::size_t end) {
      for (std::size_t k = begin; k < end; ++k) {
        float* r = residual_.data() + block_.in_block(p, part.rows[k]);
        float* v = part.values.data() + k * cols;
        for (std::size_t c = 0; c < cols; ++c) v[c] = r[c] += v[c];  // what the row should move by
        round_values(v, cols, t);
        for (std::size_t c = 0; c < cols; ++c) r[c] -= v[c];
      }
    });
  }
}

}  // namespace fedavg::training
