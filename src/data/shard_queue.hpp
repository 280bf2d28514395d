// The Dispatcher's schedule of shards (ElasticDL style): hands out every shard once per epoch to whichever
// pipeline asks next, so a faster pipeline reads more shards. Each pipeline reads the files in step: it gets the
// next shard of the file it has read least of, for that file's size, so what it reads, buffers and trains comes
// from each file in proportion to the file's size, and so does the whole job's. The next epoch's shards are
// handed out once the current epoch's are all handed out. The owner says when a shard is finished for an epoch (the
// Dispatcher: once its Filter has made its windows). A checkpoint keeps, per shard, the epochs finished; a
// resumed queue hands out again every shard not finished (one being read starts over), so every epoch reads
// each shard once.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "data/shards.hpp"

namespace fedavg::data {

class ShardQueue {
 public:
  struct Assignment {
    std::int64_t shard = 0;  // index into shards()
    std::int64_t epoch = 0;  // 0-based
  };

  // `finished`: the epochs each shard has finished (empty: none). Throws core::Error if its size differs from
  // the shards'.
  explicit ShardQueue(std::vector<Shard> shards, std::vector<std::int64_t> finished = {});

  // The next shard for `reader` (a pipeline) to read. Never runs out: the epochs go on until the Dispatcher stops
  // the run.
  Assignment next(int reader);
  // A Tokenizer has read all of the shard for that epoch.
  void finished(const Assignment& a);

  // The shards each reader holds granted ahead of the one it reads: enough for about 1 MiB of text (a grant's
  // answer takes up to a poll of the Dispatcher, longer than a small shard's read), at least 2, at most 64.
  int ahead() const;

  const std::vector<Shard>& shards() const { return shards_; }
  const std::vector<std::int64_t>& finished_epochs() const { return finished_; }
  // Epochs read: every shard finished that many times, plus the share of bytes of the next epoch finished.
  double epochs_read() const;

 private:
  // Fills pending_ with the shards the epoch being handed out still needs.
  void start_epoch();

  std::vector<Shard> shards_;
  std::vector<std::int64_t> finished_;             // per shard: epochs finished
  std::vector<std::int64_t> handed_;               // per shard: the next epoch it is handed out for
  std::int64_t epoch_ = 0;                         // the epoch being handed out
  std::vector<double> file_bytes_;                 // per file: its bytes in shards
  std::vector<std::deque<std::size_t>> pending_;   // per file: its shards still to hand out this epoch, in order
  std::vector<std::vector<double>> reader_bytes_;  // per reader, per file: bytes handed out to it so far
  double total_bytes_ = 0.0;
};

}  // namespace fedavg::data
