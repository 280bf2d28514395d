#include "training/pipelines.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>

#include "comm/communicator.hpp"
#include "comm/messages.hpp"
#include "comm/tags.hpp"
#include "core/error.hpp"
#include "data/shards.hpp"
#include "data/windower.hpp"

namespace fedavg::training {

Pipelines::Pipelines(const Context& ctx)
    : ctx_(ctx),
      positions_(static_cast<std::size_t>(ctx.map.pipelines())),
      trained_(positions_.size(), 0.0),
      pass_windows_(positions_.size(), 0.0),
      partial_pass_(positions_.size(), false),
      file_bytes_(positions_.size(), 0.0),
      granted_(positions_.size()),
      outbox_(ctx.world) {
  if (ctx.cfg.sharded()) {
    queue_.emplace(data::cut_shards(ctx.cfg.corpora, ctx.cfg.shard_bytes(), ctx.cfg.settings.max_line_bytes));
    shard_windows_.assign(queue_->shards().size(), -1);
    return;
  }
  for (std::size_t p = 0; p < file_bytes_.size(); ++p) {
    std::error_code ec;
    const auto n = std::filesystem::file_size(ctx.cfg.corpora[p], ec);
    if (!ec) file_bytes_[p] = static_cast<double>(n);
  }
}

void Pipelines::grant(int p) {
  const auto a = queue_->next(p);
  const auto& s = queue_->shards()[static_cast<std::size_t>(a.shard)];
  granted_[static_cast<std::size_t>(p)].push_back(a);
  outbox_.send(comm::ShardGrant{a.shard, s.file, s.begin, s.end, a.epoch, queue_->ahead()}.encode(),
               ctx_.map.tokenizer(p), comm::Tag::Shard);
}

void Pipelines::start() {
  if (!queue_) return;
  // Pipeline by pipeline, so the first shards spread over the pipelines.
  for (int round = 0; round < queue_->ahead(); ++round)
    for (int p = 0; p < ctx_.map.pipelines(); ++p) grant(p);
}

void Pipelines::shard_windows(int p, std::int64_t windows) {
  auto& queue = granted_[static_cast<std::size_t>(p)];
  if (queue.empty())
    throw core::Error("Filter rank " + std::to_string(ctx_.map.filter(p)) +
                      " reported the windows of a shard its Tokenizer was never given");
  const auto a = queue.front();
  queue.pop_front();
  queue_->finished(a);
  tally(a.epoch, windows);
  auto& w = shard_windows_[static_cast<std::size_t>(a.shard)];
  if (w >= 0) return;
  w = windows;
  if (std::find(shard_windows_.begin(), shard_windows_.end(), -1) != shard_windows_.end()) return;
  epoch_windows_ = static_cast<double>(std::accumulate(shard_windows_.begin(), shard_windows_.end(), std::int64_t{0}));
  if (epoch_windows_ == 0)
    throw core::Error("no window in a whole epoch over the corpora of " + data::window_conditions(ctx_.cfg.settings));
}

void Pipelines::tally(std::int64_t epoch, std::int64_t windows) {
  auto& t = tallies_[epoch];
  ++t.shards;
  t.windows += windows;
  if (t.shards < static_cast<std::int64_t>(queue_->shards().size())) return;
  std::printf("fedavg_mpi: epoch %lld read: %lld shards, %lld windows\n", static_cast<long long>(epoch + 1),
              static_cast<long long>(t.shards), static_cast<long long>(t.windows));
  std::fflush(stdout);
  tallies_.erase(epoch);
}

void Pipelines::take_pass_windows(int p, std::int64_t windows) {
  const auto i = static_cast<std::size_t>(p);
  if (queue_) {
    shard_windows(p, windows);
  } else if (partial_pass_[i]) {
    partial_pass_[i] = false;
  } else if (pass_windows_[i] == 0) {
    pass_windows_[i] = static_cast<double>(windows);
  }
}

int Pipelines::drain() {
  outbox_.retire();
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
    while (queue_) {
      auto a = ctx_.world.probe(ctx_.map.tokenizer(p), comm::Tag::ShardDone);
      if (!a) break;
      comm::ShardDone::Wire wire{};
      ctx_.world.receive_into(*a, wire.data(), wire.size());
      const auto done = comm::ShardDone::decode(wire);
      if (done.shard >= static_cast<std::int64_t>(queue_->shards().size()))
        throw core::Error("Tokenizer rank " + std::to_string(ctx_.map.tokenizer(p)) + " reported shard " +
                          std::to_string(done.shard) + ", but there are " + std::to_string(queue_->shards().size()));
      grant(p);  // the shard counts as finished once its Filter reports its windows
    }
    while (auto a = ctx_.world.probe(ctx_.map.filter(p), comm::Tag::PassWindows)) {
      std::int64_t windows = 0;
      ctx_.world.receive_into(*a, &windows, 1);
      take_pass_windows(p, windows);
    }
  }
  return finals_;
}

void Pipelines::add_trained(const std::vector<double>& windows) {
  for (std::size_t p = 0; p < trained_.size() && p < windows.size(); ++p) trained_[p] += windows[p];
}

double Pipelines::epochs(int p) const {
  if (queue_)
    return epoch_windows_ > 0 ? std::accumulate(trained_.begin(), trained_.end(), 0.0) / epoch_windows_ : std::nan("");
  const auto i = static_cast<std::size_t>(p);
  return pass_windows_[i] > 0 ? trained_[i] / pass_windows_[i] : std::nan("");
}

double Pipelines::epochs_estimate(int p) const {
  const double known = epochs(p);
  if (!std::isnan(known)) return known;
  if (queue_) return queue_->epochs_read();
  const auto i = static_cast<std::size_t>(p);
  if (file_bytes_[i] <= 0) return std::nan("");
  const double read = static_cast<double>(positions_[i].passes) +
                      static_cast<double>(positions_[i].offset) / file_bytes_[i];
  // The Tokenizer reads ahead of training by about the Batcher's shuffle pool: the windows read so far are those
  // trained and those the pool holds, and a pass holds (trained + pool) / read of them.
  const double pool = static_cast<double>(ctx_.cfg.settings.shuffle_windows);
  if (read <= 0 || trained_[i] <= 0) return read;
  return read * trained_[i] / (trained_[i] + pool);
}

double Pipelines::min_epochs() const { return core::epochs_trained(progress(), sharded()); }

double Pipelines::pass_windows(int p) const {
  const double w = queue_ ? epoch_windows_ : pass_windows_[static_cast<std::size_t>(p)];
  return w > 0 ? w : std::nan("");
}

double Pipelines::windows_to(double epochs, int p) const {
  const double trained = queue_ ? std::accumulate(trained_.begin(), trained_.end(), 0.0)
                                : trained_[static_cast<std::size_t>(p)];
  return epochs * pass_windows(p) - trained;
}

std::vector<core::PipelineProgress> Pipelines::progress() const {
  std::vector<core::PipelineProgress> out;
  for (std::size_t p = 0; p < trained_.size(); ++p)
    out.push_back({trained_[p], queue_ ? epoch_windows_ : pass_windows_[p]});
  return out;
}

std::vector<core::ShardProgress> Pipelines::shard_progress() const {
  std::vector<core::ShardProgress> out;
  if (!queue_) return out;
  for (std::size_t s = 0; s < queue_->shards().size(); ++s) {
    const auto& shard = queue_->shards()[s];
    out.push_back({shard.file, shard.begin, shard.end, queue_->finished_epochs()[s], shard_windows_[s]});
  }
  return out;
}

void Pipelines::restore(const std::vector<core::ReadPosition>& positions,
                        const std::vector<core::PipelineProgress>& progress,
                        const std::vector<core::ShardProgress>& shards) {
  if (queue_.has_value() != !shards.empty())
    throw core::Error(queue_
                          ? "the checkpoint was written with one pipeline per corpus file and this run cuts the "
                            "corpora into shards; resume with the same pipelines, shard_mb 0 and pipeline_per_file true"
                          : "the checkpoint was written with shards and this run reads one corpus file per "
                            "pipeline; resume with pipeline_per_file false, or a shard_mb above 0");
  if (queue_) {
    // The checkpoint's shards, whatever shard_mb says now: their progress refers to them.
    std::vector<data::Shard> cut;
    std::vector<std::int64_t> finished;
    for (const auto& s : shards) {
      if (s.file < 0 || s.file >= static_cast<std::int64_t>(ctx_.cfg.corpora.size()))
        throw core::Error("the checkpoint's shards name corpus file " + std::to_string(s.file) + ", this run has " +
                          std::to_string(ctx_.cfg.corpora.size()) + "; was the corpus list changed?");
      cut.push_back({s.file, s.begin, s.end});
      finished.push_back(s.finished);
    }
    queue_.emplace(std::move(cut), std::move(finished));
    shard_windows_.clear();
    for (const auto& s : shards) shard_windows_.push_back(s.windows);
    // The epochs in progress: what the earlier run read of them.
    const auto& done = queue_->finished_epochs();
    const std::int64_t first = *std::min_element(done.begin(), done.end());
    tallies_.clear();
    for (std::size_t k = 0; k < shards.size(); ++k)
      for (std::int64_t e = first; e < done[k]; ++e) {
        ++tallies_[e].shards;
        tallies_[e].windows += std::max<std::int64_t>(shards[k].windows, 0);
      }
    epoch_windows_ = 0;
    if (std::find(shard_windows_.begin(), shard_windows_.end(), -1) == shard_windows_.end())
      epoch_windows_ = static_cast<double>(
          std::accumulate(shard_windows_.begin(), shard_windows_.end(), std::int64_t{0}));
    // The windows trained count as a whole: the checkpoint may have had another number of pipelines.
    std::fill(trained_.begin(), trained_.end(), 0.0);
    for (const auto& pr : progress) trained_[0] += pr.trained;
    return;
  }
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
