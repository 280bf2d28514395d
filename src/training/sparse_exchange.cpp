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
      touched_(s.sparse_weighting == core::SparseWeighting::Touched),
      own_(layout_.size()),
      other_(layout_.size()) {}

void SparseExchange::start_from(const std::vector<float>& w) {
  start_ = w;
  if (lossy() && residual_.empty()) residual_.assign(w.size(), 0.0f);
}

void SparseExchange::own_delta(std::vector<float>& w, double share, bool full) {
  own_.parts.resize(layout_.size());
  own_.clear();
  const auto scale = static_cast<float>(share);
  // With error feedback the residual becomes each row's whole unsent change (this round's plus what waited) in
  // the same pass that puts the row back to the round's start; the rows sent then leave in it only what their
  // rounding lost. Without (exact settings), every changed row is sent as it is.
  const bool ef = !residual_.empty();
  const bool choose = !full && fraction_ < 1.0;
  const ValueType sent_as = type(full);
  for (std::size_t t = 0; t < layout_.size(); ++t) {
    const Table& tab = layout_[t];
    const std::size_t cols = tab.cols;
    SparseDelta::Part& part = own_.parts[t];
    candidates_.clear();
    for (std::size_t r = 0; r < tab.rows; ++r) {
      const std::size_t at = tab.offset + r * cols;
      float* a = w.data() + at;
      const float* s = start_.data() + at;
      if (ef) {
        float* u = residual_.data() + at;
        int changed = 0;
        float norm = 0.0f;
#pragma omp simd reduction(| : changed) reduction(+ : norm)
        for (std::size_t c = 0; c < cols; ++c) {
          const float x = a[c] - s[c];
          changed |= x != 0.0f;
          u[c] += x;
          norm += u[c] * u[c];
        }
        if (changed) std::memcpy(a, s, cols * sizeof(float));
        if (changed || norm != 0.0f) candidates_.emplace_back(norm, static_cast<std::uint32_t>(r));
        continue;
      }
      if (std::memcmp(a, s, cols * sizeof(float)) == 0) continue;
      part.rows.push_back(static_cast<std::uint32_t>(r));
      part.values.resize(part.values.size() + cols);
      float* v = part.values.data() + part.values.size() - cols;
      for (std::size_t c = 0; c < cols; ++c) v[c] = (a[c] - s[c]) * scale;
      std::memcpy(a, s, cols * sizeof(float));
    }
    if (ef) {
      std::size_t keep = candidates_.size();
      if (choose)
        keep = std::min(keep, static_cast<std::size_t>(std::ceil(fraction_ * static_cast<double>(tab.rows))));
      if (keep < candidates_.size())
        std::nth_element(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(keep),
                         candidates_.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
      for (std::size_t k = 0; k < keep; ++k) part.rows.push_back(candidates_[k].second);
      std::sort(part.rows.begin(), part.rows.end());
      part.values.resize(part.rows.size() * cols);
      for (std::size_t k = 0; k < part.rows.size(); ++k) {
        float* u = residual_.data() + tab.offset + part.rows[k] * cols;
        float* v = part.values.data() + k * cols;
        for (std::size_t c = 0; c < cols; ++c) v[c] = u[c] * scale;
        round_values(v, cols, sent_as);  // what the parent decodes; the rest stays in the residual
        if (scale == 0.0f) continue;     // nothing of it was sent: it all waits
        if (sent_as == ValueType::Float32) {
          std::fill(u, u + cols, 0.0f);
        } else {
          for (std::size_t c = 0; c < cols; ++c) u[c] -= v[c] / scale;
        }
      }
    }
    if (touched_) part.weights.assign(part.rows.size(), scale);
  }
}

void SparseExchange::reduce_up(bool full) {
  const auto& comm = sync_.comm();
  const int me = comm.rank();
  const auto deadline = comm::Deadline::after(sync_.liveness() * comm::kIndirect);
  double subtree = 0.0;
  for (const int child : tree_children(me, comm.size())) {
    comm.receive(comm.await_message(child, comm::Tag::RowDelta, deadline, sync_.who(child), sync_.waits().collective()),
                 msg_);
    subtree += count_of(msg_);
    other_.decode_from(msg_, layout_, type(full), kCount);
    own_.add(other_, layout_);
  }
  own_.encode(msg_, layout_, type(full), kCount);
  subtree += static_cast<double>(msg_.size() - kCount);
  put_count(msg_, subtree);
  comm.isend(msg_.data(), msg_.size(), tree_parent(me), comm::Tag::RowDelta)
      .wait_until(deadline, sync_.waits().collective());
}

void SparseExchange::learner_round(std::vector<float>& w, double share, bool full) {
  own_delta(w, share, full);  // leaves `w` at the round's start
  reduce_up(full);
  sync_.down_tree(msg_, comm::Tag::RowGlobal, true);
  other_.decode_from(msg_, layout_, type(full));
  // The round's start plus the global delta: the new global weights, and the next round's start.
  for (std::size_t t = 0; t < layout_.size(); ++t) {
    const SparseDelta::Part& part = other_.parts[t];
    const std::size_t cols = layout_[t].cols;
    for (std::size_t k = 0; k < part.rows.size(); ++k) {
      const std::size_t at = layout_[t].offset + static_cast<std::size_t>(part.rows[k]) * cols;
      float* a = w.data() + at;
      float* s = start_.data() + at;
      const float* v = part.values.data() + k * cols;
      for (std::size_t c = 0; c < cols; ++c) s[c] = a[c] += v[c];
    }
  }
  sync_.complete_reports();
}

SparseDelta& SparseExchange::collect(bool full) {
  const auto& comm = sync_.comm();
  comm.receive(comm.await_message(1, comm::Tag::RowDelta, comm::Deadline::after(sync_.liveness()), sync_.who(1),
                                  sync_.waits().collective()),
               msg_);
  inbound_ += static_cast<double>(msg_.size());
  bytes_ += count_of(msg_);
  own_.decode_from(msg_, layout_, type(full), kCount);
  if (touched_) own_.normalise(layout_);
  return own_;
}

void SparseExchange::publish(SparseDelta& delta, std::vector<float>& w, bool full) {
  const ValueType t = type(full);
  if (type_ == ValueType::Float32) {
    delta.apply_to(w.data(), layout_);
  } else {
    // 16-bit values down too: the Dispatcher adds exactly what it sends, and keeps the rounding for later rows.
    if (residual_.empty()) residual_.assign(w.size(), 0.0f);
    if (full) delta.add(pending_residual(), layout_);
    for (std::size_t p = 0; p < layout_.size(); ++p) {
      auto& part = delta.parts[p];
      const std::size_t cols = layout_[p].cols;
      for (std::size_t k = 0; k < part.rows.size(); ++k) {
        const std::size_t at = layout_[p].offset + static_cast<std::size_t>(part.rows[k]) * cols;
        float* r = residual_.data() + at;
        float* x = w.data() + at;
        float* v = part.values.data() + k * cols;
        for (std::size_t c = 0; c < cols; ++c) v[c] = r[c] += v[c];  // what the row should move by
        round_values(v, cols, t);
        for (std::size_t c = 0; c < cols; ++c) {
          r[c] -= v[c];
          x[c] += v[c];
        }
      }
    }
  }
  delta.encode(msg_, layout_, t);
  sync_.down_tree(msg_, comm::Tag::RowGlobal, true);
  bytes_ += static_cast<double>(msg_.size()) * (sync_.comm().size() - 1);
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
