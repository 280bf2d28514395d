#include "data/shard_queue.hpp"

#include <algorithm>
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
  for (const auto& s : shards_) total_bytes_ += static_cast<double>(s.end - s.begin);
}

ShardQueue::Assignment ShardQueue::next() {
  for (;;) {
    for (; cursor_ < shards_.size(); ++cursor_) {
      if (handed_[cursor_] <= epoch_) {
        const Assignment a{static_cast<std::int64_t>(cursor_), epoch_};
        handed_[cursor_] = epoch_ + 1;
        ++cursor_;
        return a;
      }
    }
    ++epoch_;  // every shard is handed out for this epoch: the next one's queue starts
    cursor_ = 0;
  }
}

void ShardQueue::finished(const Assignment& a) {
  auto& f = finished_.at(static_cast<std::size_t>(a.shard));
  f = std::max(f, a.epoch + 1);
}

double ShardQueue::epochs_read() const {
  const std::int64_t whole = *std::min_element(finished_.begin(), finished_.end());
  double ahead = 0.0;
  for (std::size_t s = 0; s < shards_.size(); ++s)
    if (finished_[s] > whole) ahead += static_cast<double>(shards_[s].end - shards_[s].begin);
  return static_cast<double>(whole) + ahead / total_bytes_;
}

}  // namespace fedavg::data
