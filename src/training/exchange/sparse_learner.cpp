#include "training/exchange/sparse_learner.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "comm/communicator.hpp"
#include "core/error.hpp"
#include "training/exchange/row_merge.hpp"

namespace fedavg::training {

SparseLearner::SparseLearner(RoundSync& sync, Layout layout, const core::Settings& s, Publisher publisher,
                             CombineRule rule)
    : link_(sync, std::move(layout), s, publisher), rule_(rule) {}

void SparseLearner::start_from(core::Floats w) {
  start_.assign(w.begin(), w.end());
  waiting_.assign(layout().size(), {});
}

const std::vector<std::uint32_t>* SparseLearner::written_in(std::size_t t, const bridge::WrittenRows& written,
                                                            RoundKind kind) const {
  if (kind != RoundKind::Regular || written.empty() || !written[t]) return nullptr;
  const auto& rows = *written[t];
  check_written_rows(rows, t, layout()[t]);
  // Rows read one by one cost about four times as much each as rows read in a stream (a gap stops the memory's
  // read-ahead), so beyond a quarter of the table reading it whole costs less.
  if (static_cast<double>(rows.size()) > kReadWhole * static_cast<double>(layout()[t].rows)) return nullptr;
  return &rows;
}

void SparseLearner::scan(std::size_t t, core::Floats w, const std::vector<std::uint32_t>* rows, bool norms) {
  const Table& tab = layout()[t];
  const std::size_t n = rows ? rows->size() : tab.rows;
  scan_.resize(n);
  link_.workers().for_range(n, kRowGrain, [&](std::size_t begin, std::size_t end) {
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

void SparseLearner::take_scanned(std::size_t t, std::size_t i, std::uint32_t r) {
  if (scan_[i] < 0.0f) return;
  norms_[t][r] = scan_[i];
  candidates_.emplace_back(scan_[i], r);
}

void SparseLearner::measure(std::size_t t, core::Floats w, const std::vector<std::uint32_t>* written) {
  const Table& tab = layout()[t];
  norms_[t].resize(tab.rows);
  candidates_.clear();
  scan(t, w, written, true);
  if (!written) {
    for (std::size_t r = 0; r < tab.rows; ++r) take_scanned(t, r, static_cast<std::uint32_t>(r));
    return;
  }
  // The written rows and the waiting ones, both ascending, merged.
  const auto& waited = waiting_[t];
  merge_rows(
      *written, waited, [&](std::size_t i) { take_scanned(t, i, (*written)[i]); },
      [&](std::size_t j) { candidates_.emplace_back(norms_[t][waited[j]], waited[j]); },
      [&](std::size_t i, std::size_t) { take_scanned(t, i, (*written)[i]); });
}

void SparseLearner::emit(core::Floats w, std::size_t t, const std::vector<std::uint32_t>& rows, float scale,
                         ValueType as) {
  const auto owners = static_cast<std::uint32_t>(parts_.size());
  const Table& tab = layout()[t];
  const std::size_t cols = tab.cols;
  // Each row's place in its owner's part (the parts of table t are empty), then room for exactly those rows, so
  // that a large round holds what it sends, not up to twice as much.
  slot_.resize(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SparseDelta::Part& part = parts_[rows[i] % owners].parts[t];
    slot_[i] = part.rows.size();
    part.rows.push_back(rows[i]);
    if (rule_.weighs_rows()) part.weights.push_back(scale);
  }
  for (SparseDelta& p : parts_) p.parts[t].values.resize(p.parts[t].rows.size() * cols);
  // A row goes to its owner's part as its change times the share, rounded as the owner will decode it; what the
  // rounding lost stays in `w` above the start (none in float32: the row is put back to the start).
  link_.workers().for_range(rows.size(), kRowGrain, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const std::size_t at = tab.offset + static_cast<std::size_t>(rows[i]) * cols;
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

void SparseLearner::select(std::size_t keep, std::vector<std::uint32_t>& chosen, std::vector<std::uint32_t>& waiting) {
  if (keep >= candidates_.size()) {
    for (const auto& c : candidates_) chosen.push_back(c.second);
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
      chosen.push_back(row);
    } else {
      waiting.push_back(row);
    }
  }
}

void SparseLearner::every_change(std::size_t t, core::Floats w, const std::vector<std::uint32_t>* rows) {
  waiting_[t].clear();
  norms_[t].resize(layout()[t].rows);
  scan(t, w, rows, true);
  for (std::size_t i = 0; i < scan_.size(); ++i) {
    if (scan_[i] < 0.0f) continue;
    const auto r = rows ? (*rows)[i] : static_cast<std::uint32_t>(i);
    norms_[t][r] = scan_[i];  // should the round's share be 0, the row waits with its norm
    chosen_[t].push_back(r);
  }
}

void SparseLearner::largest_changes(std::size_t t, core::Floats w, const std::vector<std::uint32_t>* rows) {
  measure(t, w, rows);
  waiting_[t].clear();
  const auto rows_sent = std::ceil(link_.fraction() * static_cast<double>(layout()[t].rows));
  const auto keep = std::min(candidates_.size(), static_cast<std::size_t>(rows_sent));
  select(keep, chosen_[t], waiting_[t]);
}

void SparseLearner::clear_parts() {
  parts_.resize(static_cast<std::size_t>(link_.learners()));
  for (SparseDelta& p : parts_) {
    p.parts.resize(layout().size());
    p.clear();
  }
}

void SparseLearner::choose(core::Floats w, RoundKind kind, const bridge::WrittenRows& written) {
  if (!written.empty() && written.size() != layout().size())
    throw core::Error("engine.written_rows gave " + std::to_string(written.size()) + " parameters, the model has " +
                      std::to_string(layout().size()));
  waiting_.resize(layout().size());
  norms_.resize(layout().size());
  chosen_.resize(layout().size());
  const bool every = kind != RoundKind::Regular || link_.fraction() >= 1.0;
  for (std::size_t t = 0; t < layout().size(); ++t) {
    const std::vector<std::uint32_t>* rows = written_in(t, written, kind);
    chosen_[t].clear();
    if (every) {
      every_change(t, w, rows);
    } else {
      largest_changes(t, w, rows);
    }
  }
  chosen_kind_ = kind;
}

void SparseLearner::keep_back() {
  std::vector<std::uint32_t> both;
  for (std::size_t t = 0; t < chosen_.size(); ++t) {
    both.resize(waiting_[t].size() + chosen_[t].size());
    std::merge(waiting_[t].begin(), waiting_[t].end(), chosen_[t].begin(), chosen_[t].end(), both.begin());
    waiting_[t].swap(both);
    chosen_[t].clear();
  }
}

void SparseLearner::own_delta(core::Floats w, double share, RoundKind kind, const bridge::WrittenRows& written) {
  if (chosen_kind_ != kind) choose(w, kind, written);
  chosen_kind_.reset();
  clear_parts();
  const auto scale = static_cast<float>(share);
  if (scale == 0.0f) {  // it trained nothing this round: whatever it holds back waits
    keep_back();
    return;
  }
  for (std::size_t t = 0; t < layout().size(); ++t) {
    emit(w, t, chosen_[t], scale, link_.values(kind));
  }
}

void SparseLearner::scatter(RoundKind kind) {
  const auto& comm = link_.sync().comm();
  const int me = comm.rank();
  const bool full = kind == RoundKind::Full;
  const auto deadline = comm::Deadline::after(link_.sync().liveness() * comm::kIndirect);
  out_.resize(parts_.size());
  for (int j = 1; j <= link_.learners(); ++j) {
    if (j == me) continue;
    auto& out = out_[static_cast<std::size_t>(j - 1)];
    parts_[static_cast<std::size_t>(j - 1)].encode(out, layout(), link_.values(kind), 0, &link_.workers());
    if (full) link_.drop(parts_[static_cast<std::size_t>(j - 1)]);  // on its way, encoded
    sent_ += static_cast<double>(out.size());
    link_.sends().push_back(comm.isend(out.data(), out.size(), j, comm::Tag::RowDelta));
  }
  for (int j = 1; j <= link_.learners(); ++j) {
    if (j == me) continue;
    link_.receive(j, comm::Tag::RowDelta, deadline);
    mine().merge_encoded(link_.msg(), layout(), link_.values(kind), 0, link_.spare(), &link_.workers());
  }
  if (full) link_.release_buffers();
  if (rule_.weighs_rows()) mine().normalise(layout(), rule_, link_.learners(), &link_.workers());
}

void SparseLearner::publish_own(core::Floats w, RoundKind kind) {
  const auto& comm = link_.sync().comm();
  link_.round_with_residual(mine(), kind);
  // One message for every other member, sent before this learner adds it itself.
  const auto& out = counted(mine(), kind, link_.learners());
  if (kind == RoundKind::Full) link_.drop(mine());  // encoded
  for (const int j : link_.relay().targets(comm.rank()))
    link_.sends().push_back(comm.isend(out.data(), out.size(), j, comm::Tag::RowGlobal));
  SparseDelta::add_encoded(out, layout(), link_.values(kind), SparseLink::kCount, w.data(), start_.data(),
                           &link_.workers());
  link_.take_owners_sums(w.data(), start_.data(), kind, SparseLink::Receiver::Learner);
}

void SparseLearner::through_dispatcher(core::Floats w, RoundKind kind) {
  link_.round_with_residual(mine(), kind);  // the sum of several learners' rows: its rounding waits here
  const auto& out = counted(mine(), kind, 1);
  if (kind == RoundKind::Full) link_.drop(mine());  // encoded
  link_.sends().push_back(link_.sync().comm().isend(out.data(), out.size(), 0, comm::Tag::RowDelta));
  link_.sync().down_tree(link_.msg(), comm::Tag::RowGlobal, true);
  SparseDelta::add_encoded(link_.msg(), layout(), link_.values(kind), 0, w.data(), start_.data(), &link_.workers());
}

const std::vector<std::uint8_t>& SparseLearner::counted(const SparseDelta& sum, RoundKind kind, int copies) {
  auto& out = out_[static_cast<std::size_t>(link_.sync().comm().rank() - 1)];
  sum.encode(out, layout(), link_.values(kind), SparseLink::kCount, &link_.workers());
  sent_ += static_cast<double>(out.size() - SparseLink::kCount) * copies;
  SparseLink::put_count(out, sent_);
  return out;
}

void SparseLearner::learner_round(core::Floats w, double share, RoundKind kind, const bridge::WrittenRows& written) {
  own_delta(w, share, kind, written);
  scatter(kind);
  if (link_.publisher() == Publisher::Owners) {
    publish_own(w, kind);
  } else {
    through_dispatcher(w, kind);
  }
  link_.wait_sends();
  sent_ = 0.0;
  if (kind == RoundKind::Full) release_buffers();
}

void SparseLearner::release_buffers() {
  std::vector<SparseDelta>().swap(parts_);
  std::vector<std::vector<std::uint8_t>>().swap(out_);
  std::vector<std::pair<float, std::uint32_t>>().swap(candidates_);
  link_.release_buffers();
}

}  // namespace fedavg::training
