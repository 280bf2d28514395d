#include "training/sparse_exchange.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "comm/communicator.hpp"
#include "comm/error.hpp"
#include "comm/float16.hpp"
#include "training/learner_tree.hpp"

namespace fedavg::training {
namespace {

constexpr std::size_t kSparseFrom = std::size_t{8} << 20;  // parameters: 32 MB of weights

ValueType value_type(core::ExchangeType t) {
  switch (t) {
    case core::ExchangeType::Float16: return ValueType::Float16;
    case core::ExchangeType::BFloat16: return ValueType::BFloat16;
    case core::ExchangeType::Float32: break;
  }
  return ValueType::Float32;
}

// Each message up the tree starts with the bytes its subtree sent so far (a double), so the Dispatcher can count
// the payload of the whole reduction.
constexpr std::size_t kCount = sizeof(double);


void put_count(std::vector<std::uint8_t>& msg, double bytes) { std::memcpy(msg.data(), &bytes, kCount); }

double count_of(const std::vector<std::uint8_t>& msg) {
  double bytes = 0;
  if (msg.size() < kCount) throw comm::Error("sparse weights: a message of " + std::to_string(msg.size()) + " bytes");
  std::memcpy(&bytes, msg.data(), kCount);
  return bytes;
}

}  // namespace

bool sparse_exchange(const core::Settings& s, std::size_t params, bool learners_on_one_host) {
  switch (s.exchange) {
    case core::Exchange::Sparse: return true;
    case core::Exchange::Dense: return false;
    case core::Exchange::Auto: break;
  }
  return params >= kSparseFrom && !learners_on_one_host;
}

SparseExchange::SparseExchange(RoundSync& sync, Layout layout, const core::Settings& s)
    : sync_(sync),
      layout_(std::move(layout)),
      type_(value_type(s.sparse_values)),
      fraction_(s.sparse_rows),
      touched_(s.sparse_weighting == core::SparseWeighting::Touched) {}

void SparseExchange::start_from(const std::vector<float>& w) {
  start_ = w;
  if (lossy() && residual_.empty()) residual_.assign(w.size(), 0.0f);
}

SparseDelta SparseExchange::own_delta(const std::vector<float>& w, double share, bool full) {
  SparseDelta d(layout_.size());
  changed_.clear();
  const auto scale = static_cast<float>(share);
  // With error feedback the residual becomes each row's whole unsent change (this round's plus what waited) in
  // one pass; the rows sent then leave in it only what their rounding lost.
  const bool ef = !residual_.empty();
  const bool choose = !full && fraction_ < 1.0;
  for (std::size_t t = 0; t < layout_.size(); ++t) {
    const Table& tab = layout_[t];
    const std::size_t cols = tab.cols;
    std::vector<std::pair<float, std::uint32_t>> candidates;  // rows with a change to send, and its size
    for (std::size_t r = 0; r < tab.rows; ++r) {
      const std::size_t at = tab.offset + r * cols;
      const float* a = w.data() + at;
      const float* s = start_.data() + at;
      bool changed = false;
      float norm = 0.0f;
      if (ef) {
        float* u = residual_.data() + at;
        for (std::size_t c = 0; c < cols; ++c) {
          changed |= a[c] != s[c];
          u[c] += a[c] - s[c];
          norm += u[c] * u[c];
        }
        if (changed) changed_.insert(changed_.end(), {static_cast<std::uint32_t>(t), static_cast<std::uint32_t>(r)});
        if (changed || norm != 0.0f) candidates.emplace_back(norm, static_cast<std::uint32_t>(r));
        continue;
      }
      if (std::memcmp(a, s, cols * sizeof(float)) == 0) continue;
      changed_.insert(changed_.end(), {static_cast<std::uint32_t>(t), static_cast<std::uint32_t>(r)});
      if (choose)
        for (std::size_t c = 0; c < cols; ++c) norm += (a[c] - s[c]) * (a[c] - s[c]);
      candidates.emplace_back(norm, static_cast<std::uint32_t>(r));
    }
    std::size_t keep = candidates.size();
    if (choose) keep = std::min(keep, static_cast<std::size_t>(std::ceil(fraction_ * static_cast<double>(tab.rows))));
    if (keep < candidates.size())
      std::nth_element(candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(keep), candidates.end(),
                       [](const auto& x, const auto& y) { return x.first > y.first; });
    SparseDelta::Part& part = d.parts[t];
    for (std::size_t k = 0; k < keep; ++k) part.rows.push_back(candidates[k].second);
    std::sort(part.rows.begin(), part.rows.end());
    part.values.resize(part.rows.size() * cols);
    if (touched_) part.weights.assign(part.rows.size(), scale);
    const ValueType sent_as = type(full);
    for (std::size_t k = 0; k < part.rows.size(); ++k) {
      const std::size_t at = tab.offset + part.rows[k] * cols;
      float* v = part.values.data() + k * cols;
      if (!ef) {
        for (std::size_t c = 0; c < cols; ++c) v[c] = (w[at + c] - start_[at + c]) * scale;
        continue;
      }
      float* u = residual_.data() + at;
      for (std::size_t c = 0; c < cols; ++c) v[c] = u[c] * scale;
      round_values(v, cols, sent_as);  // what the parent decodes; the rest stays in the residual
      if (scale == 0.0f) continue;  // nothing of it was sent: it all waits
      for (std::size_t c = 0; c < cols; ++c) u[c] = sent_as == ValueType::Float32 ? 0.0f : u[c] - v[c] / scale;
    }
  }
  return d;
}

void SparseExchange::reduce_up(SparseDelta& d, bool full) {
  const auto& comm = sync_.comm();
  const int me = comm.rank();
  const auto deadline = comm::Deadline::after(sync_.liveness() * comm::kIndirect);
  double subtree = 0.0;
  for (const int child : tree_children(me, comm.size())) {
    std::vector<std::uint8_t> msg;
    comm.receive(comm.await_message(child, comm::Tag::RowDelta, deadline, sync_.who(child), sync_.waits().collective()),
                 msg);
    subtree += count_of(msg);
    d.add(SparseDelta::decode(msg, layout_, type(full), kCount), layout_);
  }
  auto msg = d.encode(layout_, type(full), kCount);
  subtree += static_cast<double>(msg.size() - kCount);
  put_count(msg, subtree);
  comm.isend(msg.data(), msg.size(), tree_parent(me), comm::Tag::RowDelta)
      .wait_until(deadline, sync_.waits().collective());
}

void SparseExchange::learner_round(std::vector<float>& w, double share, bool full) {
  SparseDelta d = own_delta(w, share, full);
  reduce_up(d, full);
  // Back to the round's start (the rows this learner changed), then the global delta: the new global weights.
  for (std::size_t k = 0; k + 1 < changed_.size(); k += 2) {
    const Table& tab = layout_[changed_[k]];
    const std::size_t at = tab.offset + static_cast<std::size_t>(changed_[k + 1]) * tab.cols;
    std::memcpy(w.data() + at, start_.data() + at, tab.cols * sizeof(float));
  }
  const auto& comm = sync_.comm();
  const auto deadline = comm::Deadline::after(sync_.liveness() * comm::kIndirect);
  std::int64_t size = 0;
  comm.ibcast(&size, 1, 0).wait_until(deadline, sync_.waits().collective());
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(size));
  comm.ibcast(bytes.data(), bytes.size(), 0).wait_until(deadline, sync_.waits().collective());
  const SparseDelta global = SparseDelta::decode(bytes, layout_, type(full));
  global.apply_to(w.data(), layout_);
  for (std::size_t t = 0; t < layout_.size(); ++t)
    for (const auto r : global.parts[t].rows) {
      const std::size_t at = layout_[t].offset + static_cast<std::size_t>(r) * layout_[t].cols;
      std::memcpy(start_.data() + at, w.data() + at, layout_[t].cols * sizeof(float));
    }
  sync_.complete_reports();
}

SparseDelta SparseExchange::collect(bool full) {
  const auto& comm = sync_.comm();
  std::vector<std::uint8_t> msg;
  comm.receive(comm.await_message(1, comm::Tag::RowDelta, comm::Deadline::after(sync_.liveness()), sync_.who(1),
                                  sync_.waits().collective()),
               msg);
  inbound_ += static_cast<double>(msg.size());
  bytes_ += count_of(msg);
  SparseDelta d = SparseDelta::decode(msg, layout_, type(full), kCount);
  if (touched_) d.normalise(layout_);
  return d;
}

void SparseExchange::publish(const SparseDelta& average, std::vector<float>& w, bool full) {
  SparseDelta delta = average;
  const ValueType t = type(full);
  if (type_ != ValueType::Float32) {
    // 16-bit values down too: the Dispatcher adds exactly what it sends, and keeps the rounding for later rows.
    if (residual_.empty()) residual_.assign(w.size(), 0.0f);
    if (full) delta.add(pending_residual(), layout_);
    for (std::size_t p = 0; p < layout_.size(); ++p) {
      auto& part = delta.parts[p];
      const std::size_t cols = layout_[p].cols;
      for (std::size_t k = 0; k < part.rows.size(); ++k) {
        float* r = residual_.data() + layout_[p].offset + static_cast<std::size_t>(part.rows[k]) * cols;
        float* v = part.values.data() + k * cols;
        for (std::size_t c = 0; c < cols; ++c) {
          r[c] += v[c];  // what the row should move by
          v[c] = r[c];
        }
        round_values(v, cols, t);
        for (std::size_t c = 0; c < cols; ++c) r[c] -= v[c];
      }
    }
  }
  delta.apply_to(w.data(), layout_);
  auto bytes = delta.encode(layout_, t);
  const auto& comm = sync_.comm();
  const auto deadline = comm::Deadline::after(sync_.liveness() * comm::kIndirect);
  std::int64_t size = static_cast<std::int64_t>(bytes.size());
  comm.ibcast(&size, 1, 0).wait_until(deadline, sync_.waits().collective());
  comm.ibcast(bytes.data(), bytes.size(), 0).wait_until(deadline, sync_.waits().collective());
  bytes_ += static_cast<double>(bytes.size()) * (comm.size() - 1);
}

SparseDelta SparseExchange::pending_residual() const {
  SparseDelta d(layout_.size());
  for (std::size_t p = 0; p < layout_.size(); ++p) {
    const Table& tab = layout_[p];
    for (std::size_t r = 0; r < tab.rows; ++r) {
      const float* x = residual_.data() + tab.offset + r * tab.cols;
      if (std::all_of(x, x + tab.cols, [](float v) { return v == 0.0f; })) continue;
      d.parts[p].rows.push_back(static_cast<std::uint32_t>(r));
      d.parts[p].values.insert(d.parts[p].values.end(), tab.cols, 0.0f);  // the residual is added by the caller
    }
  }
  return d;
}

}  // namespace fedavg::training
