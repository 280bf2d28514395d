#include "training/sparse_exchange.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "comm/communicator.hpp"
#include "comm/error.hpp"
#include "core/error.hpp"

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

// Each message a learner sends the Dispatcher starts with the payload bytes that learner sent in the round (a
// double), so the Dispatcher can count the payload of the whole exchange.
constexpr std::size_t kCount = sizeof(double);

void put_count(std::vector<std::uint8_t>& msg, double bytes) { std::memcpy(msg.data(), &bytes, kCount); }

double count_of(const std::vector<std::uint8_t>& msg) {
  double bytes = 0;
  if (msg.size() < kCount) throw comm::Error("sparse weights: a message of " + std::to_string(msg.size()) + " bytes");
  std::memcpy(&bytes, msg.data(), kCount);
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

bool sparse_exchange(const core::Settings& s, std::size_t params, bool learners_on_one_host) {
  switch (s.exchange) {
    case core::Exchange::Sparse: return true;
    case core::Exchange::Dense: return false;
    case core::Exchange::Auto: break;
  }
  return params >= kSparseFrom && !learners_on_one_host;
}

SparseExchange::SparseExchange(RoundSync& sync, Layout layout, const core::Settings& s, Publisher publisher)
    : sync_(sync),
      layout_(std::move(layout)),
      type_(value_type(s.sparse_values)),
      fraction_(s.sparse_rows),
      touched_(s.sparse_weighting == core::SparseWeighting::Touched),
      publisher_(publisher),
      block_(publisher == Publisher::Owners && !sync.on_dispatcher()
                 ? RowOwners(layout_, learners(), sync.comm().rank() - 1)
                 : RowOwners(layout_, 1, 0)),
      relay_(sync.hosts(), sync.comm().size()),
      spare_(layout_.size()),
      workers_(exchange_threads(s, sync)) {}

void SparseExchange::start_from(const std::vector<float>& w) {
  start_ = w;
  waiting_.assign(layout_.size(), {});
}

const std::vector<std::uint32_t>* SparseExchange::written_in(std::size_t t, const bridge::WrittenRows& written,
                                                             bool full) const {
  if (full || written.empty() || !written[t]) return nullptr;
  const auto& rows = *written[t];
  if (!rows.empty() && rows.back() >= layout_[t].rows)
    throw core::Error("engine.written_rows: row " + std::to_string(rows.back()) + " of parameter " +
                      std::to_string(t) + ", which has " + std::to_string(layout_[t].rows) + " rows");
  return &rows;
}

void SparseExchange::scan(std::size_t t, const std::vector<float>& w, const std::vector<std::uint32_t>* rows,
                          bool norms) {
  const Table& tab = layout_[t];
  const std::size_t n = rows ? rows->size() : tab.rows;
  scan_.resize(n);
  workers_.for_range(n, kRowGrain, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const std::size_t r = rows ? (*rows)[i] : i;
      const float* a = w.data() + tab.offset + r * tab.cols;
      const float* s = start_.data() + tab.offset + r * tab.cols;
      if (!norms) {
        scan_[i] = std::memcmp(a, s, tab.cols * sizeof(float)) != 0 ? 0.0f : -1.0f;
        continue;
      }
      int changed = 0;
      float norm = 0.0f;
#pragma omp simd reduction(| : changed) reduction(+ : norm)
      for (std::size_t c = 0; c < tab.cols; ++c) {
        const float x = a[c] - s[c];
        changed |= x != 0.0f;
        norm += x * x;
      }
      scan_[i] = changed ? norm : -1.0f;
    }
  });
}

void SparseExchange::measure(std::size_t t, const std::vector<float>& w, const std::vector<std::uint32_t>* written) {
  const Table& tab = layout_[t];
  std::vector<float>& norms = norms_[t];
  norms.resize(tab.rows);
  candidates_.clear();
  scan(t, w, written, true);
  const auto read = [&](std::size_t i, std::uint32_t r) {
    if (scan_[i] < 0.0f) return;
    norms[r] = scan_[i];
    candidates_.emplace_back(scan_[i], r);
  };
  if (!written) {
    for (std::size_t r = 0; r < tab.rows; ++r) read(r, static_cast<std::uint32_t>(r));
    return;
  }
  // The written rows and the waiting ones, both ascending, merged.
  const auto& waited = waiting_[t];
  std::size_t i = 0, j = 0;
  while (i < written->size() || j < waited.size()) {
    if (j == waited.size() || (i < written->size() && (*written)[i] <= waited[j])) {
      if (j < waited.size() && waited[j] == (*written)[i]) ++j;
      read(i, (*written)[i]);
      ++i;
    } else {
      candidates_.emplace_back(norms[waited[j]], waited[j]);
      ++j;
    }
  }
}

void SparseExchange::emit(std::vector<float>& w, std::size_t t, const std::vector<std::uint32_t>& rows, float scale,
                          ValueType as) {
  const auto owners = static_cast<std::uint32_t>(parts_.size());
  const std::size_t cols = layout_[t].cols;
  // Each row's place in its owner's part (the parts of table t are empty), then room for exactly those rows, so
  // that a large round holds what it sends, not up to twice as much.
  slot_.resize(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SparseDelta::Part& part = parts_[rows[i] % owners].parts[t];
    slot_[i] = part.rows.size();
    part.rows.push_back(rows[i]);
    if (touched_) part.weights.push_back(scale);
  }
  for (SparseDelta& p : parts_) p.parts[t].values.resize(p.parts[t].rows.size() * cols);
  // A row goes to its owner's part as its change times the share, rounded as the owner will decode it; what the
  // rounding lost stays in `w` above the start (none in float32: the row is put back to the start).
  workers_.for_range(rows.size(), kRowGrain, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const std::size_t at = layout_[t].offset + static_cast<std::size_t>(rows[i]) * cols;
      float* a = w.data() + at;
      const float* s = start_.data() + at;
      float* v = parts_[rows[i] % owners].parts[t].values.data() + slot_[i] * cols;
      for (std::size_t c = 0; c < cols; ++c) v[c] = (a[c] - s[c]) * scale;
      round_values(v, cols, as);
      if (as == ValueType::Float32) {
        std::memcpy(a, s, cols * sizeof(float));
      } else {
        for (std::size_t c = 0; c < cols; ++c) a[c] = s[c] + ((a[c] - s[c]) - v[c] / scale);
      }
    }
  });
}

void SparseExchange::select(std::size_t keep, std::vector<std::uint32_t>& waiting) {
  if (keep >= candidates_.size()) {
    for (const auto& c : candidates_) chosen_.push_back(c.second);
    return;
  }
  // The keep-th largest norm; of the rows with exactly that norm, the first ones in row order are taken.
  std::size_t ties = 0;
  float least = std::numeric_limits<float>::infinity();
  if (keep > 0) {
    sizes_.resize(candidates_.size());
    for (std::size_t i = 0; i < candidates_.size(); ++i) sizes_[i] = candidates_[i].first;
    const auto kth = sizes_.begin() + static_cast<std::ptrdiff_t>(keep - 1);
    std::nth_element(sizes_.begin(), kth, sizes_.end(), std::greater<>());
    least = *kth;
    ties = 1 + static_cast<std::size_t>(std::count(sizes_.begin(), kth, least));
  }
  // candidates_ ascend by row, and so do both lists.
  for (const auto& [norm, row] : candidates_) {
    if (norm > least || (norm == least && ties > 0)) {
      if (norm == least) --ties;
      chosen_.push_back(row);
    } else {
      waiting.push_back(row);
    }
  }
}

void SparseExchange::own_delta(std::vector<float>& w, double share, bool full, const bridge::WrittenRows& written) {
  if (!written.empty() && written.size() != layout_.size())
    throw core::Error("engine.written_rows gave " + std::to_string(written.size()) + " parameters, the model has " +
                      std::to_string(layout_.size()));
  const auto owners = static_cast<std::uint32_t>(learners());
  waiting_.resize(layout_.size());
  norms_.resize(layout_.size());
  parts_.resize(owners);
  for (SparseDelta& p : parts_) {
    p.parts.resize(layout_.size());
    p.clear();
  }
  const auto scale = static_cast<float>(share);
  if (scale == 0.0f) return;  // it trained nothing this round: whatever it holds back waits
  const ValueType sent_as = type(full);
  const bool choose = !full && fraction_ < 1.0;
  for (std::size_t t = 0; t < layout_.size(); ++t) {
    const Table& tab = layout_[t];
    const std::vector<std::uint32_t>* rows = written_in(t, written, full);
    chosen_.clear();
    if (!choose) {  // every changed row (nothing waits)
      waiting_[t].clear();
      scan(t, w, rows, false);
      for (std::size_t i = 0; i < scan_.size(); ++i)
        if (scan_[i] >= 0.0f) chosen_.push_back(rows ? (*rows)[i] : static_cast<std::uint32_t>(i));
      emit(w, t, chosen_, scale, sent_as);
      continue;
    }
    // The largest changes (with what waited from earlier rounds), by L2 norm.
    measure(t, w, rows);
    waiting_[t].clear();
    const auto keep = std::min(candidates_.size(),
                               static_cast<std::size_t>(std::ceil(fraction_ * static_cast<double>(tab.rows))));
    select(keep, waiting_[t]);
    emit(w, t, chosen_, scale, sent_as);
  }
}

void SparseExchange::scatter(bool full) {
  const auto& comm = sync_.comm();
  const int me = comm.rank();
  const auto deadline = comm::Deadline::after(sync_.liveness() * comm::kIndirect);
  out_.resize(parts_.size());
  for (int j = 1; j <= learners(); ++j) {
    if (j == me) continue;
    auto& out = out_[static_cast<std::size_t>(j - 1)];
    parts_[static_cast<std::size_t>(j - 1)].encode(out, layout_, type(full), 0, &workers_);
    if (full) drop(parts_[static_cast<std::size_t>(j - 1)]);  // on its way, encoded
    sent_ += static_cast<double>(out.size());
    sends_.push_back(comm.isend(out.data(), out.size(), j, comm::Tag::RowDelta));
  }
  SparseDelta& mine = parts_[static_cast<std::size_t>(me - 1)];
  for (int j = 1; j <= learners(); ++j) {
    if (j == me) continue;
    receive(j, comm::Tag::RowDelta, deadline);
    mine.merge_encoded(msg_, layout_, type(full), 0, spare_, &workers_);
  }
  if (full) {
    drop(spare_);
    std::vector<std::uint8_t>().swap(msg_);
  }
  if (touched_) mine.normalise(layout_, &workers_);
}

void SparseExchange::publish_own(std::vector<float>& w, bool full) {
  const auto& comm = sync_.comm();
  const int me = comm.rank();
  SparseDelta& mine = parts_[static_cast<std::size_t>(me - 1)];
  round_with_residual(mine, type(full), full);
  // One message for every other member, sent before this learner adds it itself.
  const auto& out = counted(mine, full, learners());
  if (full) drop(mine);  // encoded
  for (const int j : relay_.targets(me)) sends_.push_back(comm.isend(out.data(), out.size(), j, comm::Tag::RowGlobal));
  SparseDelta::add_encoded(out, layout_, type(full), kCount, w.data(), start_.data(), &workers_);
  take_owners_sums(w.data(), start_.data(), full, false);
}

void SparseExchange::take_owners_sums(float* w, float* also, bool full, bool counted) {
  const auto& comm = sync_.comm();
  const int me = comm.rank();
  const auto deadline = comm::Deadline::after(sync_.liveness() * (counted ? 1.0 : comm::kIndirect));
  const auto take = [&](int from, comm::Tag tag) {
    if (counted) {
      receive_counted(from, tag, deadline);
    } else {
      receive(from, tag, deadline);
    }
  };
  const std::vector<int> pass = relay_.passes_to(me);
  std::size_t passing = 0;
  for (const int j : relay_.direct_from(me)) {
    take(j, comm::Tag::RowGlobal);
    if (pass.empty() || relay_.same_host(j, me)) {
      SparseDelta::add_encoded(msg_, layout_, type(full), kCount, w, also, &workers_);
      continue;
    }
    // Another host's sum: kept until its sends to this host's members are done.
    if (passed_.size() <= passing) passed_.resize(passing + 1);
    std::vector<std::uint8_t>& keep = passed_[passing++];
    keep.swap(msg_);
    for (const int k : pass) sends_.push_back(comm.isend(keep.data(), keep.size(), k, comm::Tag::RowRelay));
    SparseDelta::add_encoded(keep, layout_, type(full), kCount, w, also, &workers_);
  }
  for (int k = 0, relayed = relay_.relayed_to(me); k < relayed; ++k) {
    take(relay_.relay(me), comm::Tag::RowRelay);
    SparseDelta::add_encoded(msg_, layout_, type(full), kCount, w, also, &workers_);
  }
}

const std::vector<std::uint8_t>& SparseExchange::counted(const SparseDelta& sum, bool full, int copies) {
  auto& out = out_[static_cast<std::size_t>(sync_.comm().rank() - 1)];
  sum.encode(out, layout_, type(full), kCount, &workers_);
  sent_ += static_cast<double>(out.size() - kCount) * copies;
  put_count(out, sent_);
  return out;
}

void SparseExchange::receive(int from, comm::Tag tag, const comm::Deadline& deadline) {
  sync_.comm().receive(
      sync_.comm().await_message(from, tag, deadline, sync_.who(from), sync_.waits().collective()), msg_);
}

void SparseExchange::receive_counted(int from, comm::Tag tag, const comm::Deadline& deadline) {
  receive(from, tag, deadline);
  inbound_ += static_cast<double>(msg_.size());
  bytes_ += count_of(msg_);
}

void SparseExchange::learner_round(std::vector<float>& w, double share, bool full,
                                   const bridge::WrittenRows& written) {
  own_delta(w, share, full, written);
  scatter(full);
  if (publisher_ == Publisher::Owners) {
    publish_own(w, full);
  } else {
    // The sum of its rows to the Dispatcher, which steps and sends the global change down the learner tree.
    SparseDelta& mine = parts_[static_cast<std::size_t>(sync_.comm().rank() - 1)];
    const auto& out = counted(mine, full, 1);
    if (full) drop(mine);  // encoded
    sends_.push_back(sync_.comm().isend(out.data(), out.size(), 0, comm::Tag::RowDelta));
    sync_.down_tree(msg_, comm::Tag::RowGlobal, true);
    SparseDelta::add_encoded(msg_, layout_, type(full), 0, w.data(), start_.data(), &workers_);
  }
  const auto deadline = comm::Deadline::after(sync_.liveness() * comm::kIndirect);
  for (auto& r : sends_) r.wait_until(deadline, sync_.waits().collective());
  sends_.clear();
  sent_ = 0.0;
  sync_.complete_reports();
  if (full) release_buffers();
}

void SparseExchange::receive_global(std::vector<float>& w, bool full) {
  take_owners_sums(w.data(), nullptr, full, true);
  if (full) release_buffers();
}

void SparseExchange::drop(SparseDelta& d) const { d = SparseDelta(layout_.size()); }

void SparseExchange::release_buffers() {
  std::vector<SparseDelta>().swap(parts_);
  std::vector<std::vector<std::uint8_t>>().swap(out_);
  std::vector<std::vector<std::uint8_t>>().swap(passed_);
  drop(spare_);
  std::vector<std::uint8_t>().swap(msg_);
  std::vector<std::pair<float, std::uint32_t>>().swap(candidates_);
}

SparseDelta& SparseExchange::collect(bool full) {
  const auto deadline = comm::Deadline::after(sync_.liveness());
  parts_.resize(1);
  SparseDelta& sum = parts_[0];
  sum.parts.resize(layout_.size());
  sum.clear();
  for (int j = 1; j <= learners(); ++j) {
    receive_counted(j, comm::Tag::RowDelta, deadline);
    sum.merge_encoded(msg_, layout_, type(full), kCount, spare_, &workers_);  // the owners' rows are disjoint
  }
  return sum;
}

void SparseExchange::publish(SparseDelta& delta, std::vector<float>& w, bool full) {
  const ValueType t = type(full);
  round_with_residual(delta, t, full);
  delta.apply_to(w.data(), layout_);
  delta.encode(msg_, layout_, t, 0, &workers_);
  sync_.down_tree(msg_, comm::Tag::RowGlobal, true);
  bytes_ += static_cast<double>(msg_.size()) * learners();
  if (full) release_buffers();  // `delta` (parts_[0]) with them
}

void SparseExchange::round_with_residual(SparseDelta& delta, ValueType t, bool full) {
  if (type_ == ValueType::Float32) return;  // float32 values both ways: nothing is lost
  if (residual_.empty()) residual_.assign(block_.block_size(), 0.0f);
  if (full) {  // every row the residual holds joins, with zero values (the residual is added below)
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
