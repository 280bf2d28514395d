// What --resume checks before a run goes on from its checkpoint: that the checkpoint was written by a run of this
// name and strategy, from these corpora and this vocabulary, with a read position per pipeline, and that its weights
// still give the test loss it recorded. Every error names the checkpoint.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/checkpoint.hpp"
#include "core/corpus_summary.hpp"

namespace fedavg::training {

class ResumeCheck {
 public:
  // This run, as its checkpoints record it.
  struct Run {
    std::string checkpoint;                    // the checkpoint's path
    std::string data_name;                     // the run's name
    std::string strategy;                      // core::strategy_name of the run's strategy
    std::vector<std::string> corpus_files;     // as the config names them
    std::vector<core::CorpusSummary> corpora;  // each corpus file as this run found it
    int pipelines = 0;
    bool sharded = false;              // with shards the read positions are the shards', not one per pipeline
    std::string test_path;             // the test set the loss is measured on
    std::size_t vocabulary_words = 0;  // the run's vocabulary: its size and core::checksum
    std::uint64_t vocabulary_sum = 0;
  };

  explicit ResumeCheck(Run run) : run_(std::move(run)) {}

  // Throws unless `ck` was written by a run of this name and strategy (core::Error), from these corpora
  // (core::InputError; a checkpoint without summaries is not checked), with a position per pipeline (core::Error) and
  // this run's vocabulary (core::InputError).
  void check(const core::Checkpoint& ck) const;
  // Throws core::Error unless the test loss `measured` on the weights just loaded is the one their checkpoint
  // `recorded`, within kLossTolerance (relative): a checkpoint whose weights do not give its loss is refused.
  void check_loss(double measured, double recorded) const;

 private:
  // How far (relative) the test loss of resumed weights may be from the one their checkpoint recorded: the same
  // weights and test set give the same loss up to the order of the sums.
  static constexpr double kLossTolerance = 1e-5;

  // `saved`: the checkpoint's corpus summaries (none in older checkpoints).
  void check_corpora(const std::vector<core::CorpusSummary>& saved) const;

  const Run run_;
};

}  // namespace fedavg::training
