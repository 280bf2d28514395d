#include "data/shard_queue.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.hpp"

namespace fedavg::data {

ShardQueue::ShardQueue(std::vector<Shard> shards, std::vector<std::int64_t> finished)
    : shards_(std::move(shards)), finished_(std::move(finished)) {
  if (shards_.empty()) throw core::Error("no shards to read");
  if (finished_.empty()) finished_.assign(shards_.size(), 0);
  if (finished_.size() != shards_.size())
    throw core::Error("shard progress for " + std::to_string(finished_.size()) + " shards, but there are " +
                      std::to_string(shards_.size()));
  handed_ = finished_;  // what was handed out but not finished is handed out again
  epoch_ = *std::min_element(handed_.begin(), handed_.end());
  for (const auto& s : shards_) {
    const auto f = static_cast<std::size_t>(s.file);
    if (file_bytes_.size() <= f) file_bytes_.resize(f + 1, 0.0);
    file_bytes_[f] += static_cast<double>(s.end - s.begin);
    total_bytes_ += static_cast<double>(s.end - s.begin);
  }
  start_epoch();
}

void ShardQueue::start_epoch() {
  pending_.assign(file_bytes_.size(), {});
  for (std::size_t k = 0; k < shards_.size(); ++k)
    if (handed_[k] <= epoch_) pending_[static_cast<std::size_t>(shards_[k].file)].push_back(k);
}

ShardQueue::Assignment ShardQueue::next(int reader) {
  const auto r = static_cast<std::size_t>(std::max(reader, 0));
  if (reader_bytes_.size() <= r) reader_bytes_.resize(r + 1, std::vector<double>(file_bytes_.size(), 0.0));
  auto& read = reader_bytes_[r];
  for (;;) {
    // The file whose next shard's middle lies least far into it, counting what this reader has read of it.
    std::size_t best = pending_.size();
    double best_at = 0.0;
    for (std::size_t f = 0; f < pending_.size(); ++f) {
      if (pending_[f].empty()) continue;
      const auto& s = shards_[pending_[f].front()];
      const double at = (read[f] + 0.5 * static_cast<double>(s.end - s.begin)) / file_bytes_[f];
      if (best == pending_.size() || at < best_at) best = f, best_at = at;
    }
    if (best < pending_.size()) {
      const std::size_t k = pending_[best].front();
      pending_[best].pop_front();
      handed_[k] = epoch_ + 1;
      read[best] += static_cast<double>(shards_[k].end - shards_[k].begin);
      return {static_cast<std::int64_t>(k), epoch_};
    }
    ++epoch_;  // every shard is handed out for this epoch: the next one's starts
    start_epoch();
  }
}

void ShardQueue::finished(const Assignment& a) {
  auto& f = finished_.at(static_cast<std::size_t>(a.shard));
  f = std::max(f, a.epoch + 1);
}

int ShardQueue::ahead() const {
  const double mean_bytes = total_bytes_ / static_cast<double>(shards_.size());
  return static_cast<int>(std::clamp(std::ceil(1048576.0 / std::max(mean_bytes, 1.0)), 2.0, 64.0));
}

double ShardQueue::epochs_read() const {
  const std::int64_t whole = *std::min_element(finished_.begin(), finished_.end());
  double ahead = 0.0;
  for (std::size_t s = 0; s < shards_.size(); ++s)
    if (finished_[s] > whole) ahead += static_cast<double>(shards_[s].end - shards_[s].begin);
  return static_cast<double>(whole) + ahead / total_bytes_;
}

}  // namespace fedavg::data
