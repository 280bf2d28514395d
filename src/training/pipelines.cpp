#include "training/pipelines.hpp"

#include <cmath>
#include <filesystem>

#include "comm/communicator.hpp"
#include "comm/tags.hpp"

namespace fedavg::training {

Pipelines::Pipelines(const Context& ctx)
    : ctx_(ctx),
      positions_(static_cast<std::size_t>(ctx.map.pipelines())),
      trained_(positions_.size(), 0.0),
      pass_windows_(positions_.size(), 0.0),
      partial_pass_(positions_.size(), false),
      file_bytes_(positions_.size(), 0.0) {
  for (std::size_t p = 0; p < file_bytes_.size(); ++p) {
    std::error_code ec;
    const auto n = std::filesystem::file_size(ctx.cfg.corpora[p], ec);
    if (!ec) file_bytes_[p] = static_cast<double>(n);
  }
}

int Pipelines::drain() {
  for (int p = 0; p < ctx_.map.pipelines(); ++p) {
    const auto i = static_cast<std::size_t>(p);
    while (auto a = ctx_.world.probe(ctx_.map.tokenizer(p), comm::Tag::Position)) {
      core::ReadPosition::Wire wire{};
      ctx_.world.receive_into(*a, wire.data(), wire.size());
      const auto pos = core::ReadPosition::decode(wire);
      if (pos.passes < 0) {
        ++finals_;
      } else {
        positions_[i] = pos;
      }
    }
    while (auto a = ctx_.world.probe(ctx_.map.filter(p), comm::Tag::PassWindows)) {
      std::int64_t windows = 0;
      ctx_.world.receive_into(*a, &windows, 1);
      if (partial_pass_[i]) {
        partial_pass_[i] = false;
      } else if (pass_windows_[i] == 0) {
        pass_windows_[i] = static_cast<double>(windows);
      }
    }
  }
  return finals_;
}

void Pipelines::add_trained(const std::vector<double>& windows) {
  for (std::size_t p = 0; p < trained_.size() && p < windows.size(); ++p) trained_[p] += windows[p];
}

double Pipelines::epochs(int p) const {
  const auto i = static_cast<std::size_t>(p);
  return pass_windows_[i] > 0 ? trained_[i] / pass_windows_[i] : std::nan("");
}

double Pipelines::epochs_estimate(int p) const {
  const double known = epochs(p);
  if (!std::isnan(known)) return known;
  const auto i = static_cast<std::size_t>(p);
  if (file_bytes_[i] <= 0) return std::nan("");
  return static_cast<double>(positions_[i].passes) + static_cast<double>(positions_[i].offset) / file_bytes_[i];
}

double Pipelines::min_epochs() const {
  double least = std::numeric_limits<double>::infinity();
  for (int p = 0; p < static_cast<int>(trained_.size()); ++p) {
    const double e = epochs(p);
    if (std::isnan(e)) return e;
    least = std::min(least, e);
  }
  return least;
}

std::vector<core::PipelineProgress> Pipelines::progress() const {
  std::vector<core::PipelineProgress> out;
  for (std::size_t p = 0; p < trained_.size(); ++p) out.push_back({trained_[p], pass_windows_[p]});
  return out;
}

void Pipelines::restore(const std::vector<core::ReadPosition>& positions,
                        const std::vector<core::PipelineProgress>& progress) {
  positions_ = positions;
  for (std::size_t p = 0; p < trained_.size(); ++p) {
    if (p < progress.size()) {
      trained_[p] = progress[p].trained;
      pass_windows_[p] = progress[p].pass_windows;
    }
    partial_pass_[p] = positions_[p].offset > 0;
  }
}

}  // namespace fedavg::training
