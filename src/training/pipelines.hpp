// The Dispatcher's view of its pipelines: where each Tokenizer is in its corpus file (Position reports, kept for
// checkpoints and resumes), how many windows a whole pass over each file makes (PassWindows from the Filters),
// and the windows trained from each, so it knows which pass over its corpus each pipeline is on (max_epochs).
// With shards it also runs the shard queue (data::ShardQueue): it hands each Tokenizer a shard for each one it
// reports read, without ever waiting for one; a shard counts as finished once its Filter reports its windows. An
// epoch is then global: every shard of every file once.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "comm/outbox.hpp"
#include "core/checkpoint.hpp"
#include "core/read_position.hpp"
#include "data/shard_queue.hpp"
#include "training/context.hpp"

namespace fedavg::training {

class Pipelines {
 public:
  // With shards, cuts the corpora (throws core::InputError naming a file that cannot be read).
  explicit Pipelines(const Context& ctx);

  bool sharded() const { return queue_.has_value(); }
  // With shards: sends every Tokenizer its first shards (after restore() when resuming). Nothing otherwise.
  void start();
  // Takes every report that has arrived and answers each ShardDone with the next shard. Returns the number of
  // Tokenizers' final reports seen so far (a negative pass count in a Position report marks one). Throws
  // core::Error if a whole epoch of shards gives no window at all.
  int drain();
  // Adds the windows trained from each pipeline.
  void add_trained(const std::vector<double>& windows);
  // Passes over pipeline p's corpus trained so far (with shards: epochs over all the corpora, the same for every
  // p); NaN until a whole pass's windows are known.
  double epochs(int p) const;
  // epochs(p) when known, else an estimate from the Tokenizer's read position less what the Batcher's shuffle pool
  // holds, or from the shards read; NaN if there is none.
  double epochs_estimate(int p) const;
  // The smallest epochs(p) over the pipelines (NaN if one is not known).
  double min_epochs() const;
  // The windows of a whole pass over pipeline p's corpus (with shards: of an epoch over all); NaN until known.
  double pass_windows(int p) const;
  // The windows still to train from pipeline p (with shards: from all of them) until `epochs` passes are done;
  // NaN while the windows of a whole pass are not known.
  double windows_to(double epochs, int p) const;

  const std::vector<core::ReadPosition>& positions() const { return positions_; }
  std::vector<core::PipelineProgress> progress() const;
  // With shards: every shard with the epochs it has been read in and its windows; empty otherwise.
  std::vector<core::ShardProgress> shard_progress() const;
  // Continues from a checkpoint: where each Tokenizer goes on (with shards: which shards each epoch still needs)
  // and what was trained. A Filter's first pass after a position inside the file is not a whole pass. Throws
  // core::Error if the checkpoint was written with shards and this run has none, or the other way round.
  void restore(const std::vector<core::ReadPosition>& positions, const std::vector<core::PipelineProgress>& progress,
               const std::vector<core::ShardProgress>& shards);
  // Waits until every Shard message sent has been delivered.
  void flush(const comm::Deadline& deadline) { outbox_.flush(deadline); }

 private:
  void grant(int p);
  void shard_windows(int p, std::int64_t windows);
  void take_pass_windows(int p, std::int64_t windows);
  // Counts a shard read in `epoch` (0-based); prints "epoch N read: S shards, W windows" once every shard has
  // been read in it.
  void tally(std::int64_t epoch, std::int64_t windows);

  const Context& ctx_;
  std::vector<core::ReadPosition> positions_;
  std::vector<double> trained_;       // windows trained from each pipeline, all runs of a resumed job
  std::vector<double> pass_windows_;  // windows in a whole pass; 0 until known
  std::vector<bool> partial_pass_;    // the Filter's next PassWindows report covers part of a pass
  std::vector<double> file_bytes_;    // corpus sizes, for the estimate (0 if unknown)
  int finals_ = 0;
  // With shards:
  std::optional<data::ShardQueue> queue_;
  std::vector<std::int64_t> shard_windows_;                        // per shard, -1 until its Filter reported it
  std::vector<std::deque<data::ShardQueue::Assignment>> granted_;  // per pipeline, in the order it reads them
  double epoch_windows_ = 0.0;  // windows of a whole epoch; 0 until every shard's are known
  struct Tally {
    std::int64_t shards = 0;
    std::int64_t windows = 0;
  };
  std::map<std::int64_t, Tally> tallies_;  // epochs being read: shards read in them, their windows
  comm::Outbox outbox_;
};

}  // namespace fedavg::training
