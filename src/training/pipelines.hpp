// The Dispatcher's view of its pipelines: where each Tokenizer is in its corpus file (Position reports, kept for
// checkpoints and resumes), how many windows a whole pass over each file makes (PassWindows from the Filters),
// and the windows trained from each, so it knows which pass over its corpus each pipeline is on (max_epochs).
#pragma once

#include <cstdint>
#include <vector>

#include "core/checkpoint.hpp"
#include "core/read_position.hpp"
#include "training/context.hpp"

namespace fedavg::training {

class Pipelines {
 public:
  explicit Pipelines(const Context& ctx);

  // Takes every report that has arrived. Returns the number of Tokenizers' final reports seen so far (a
  // negative pass count in a Position report marks one).
  int drain();
  // Adds the windows trained from each pipeline.
  void add_trained(const std::vector<double>& windows);
  // Passes over pipeline p's corpus trained so far; NaN until a whole pass's windows are known.
  double epochs(int p) const;
  // epochs(p) when known, else an estimate from the Tokenizer's read position (ahead of training by what the
  // pipeline buffers); NaN if there is none.
  double epochs_estimate(int p) const;
  // The smallest epochs(p) over the pipelines (NaN if one is not known).
  double min_epochs() const;

  const std::vector<core::ReadPosition>& positions() const { return positions_; }
  std::vector<core::PipelineProgress> progress() const;
  // Continues from a checkpoint: where each Tokenizer goes on and what was trained. A Filter's first pass
  // after a position inside the file is not a whole pass.
  void restore(const std::vector<core::ReadPosition>& positions, const std::vector<core::PipelineProgress>& progress);

 private:
  const Context& ctx_;
  std::vector<core::ReadPosition> positions_;
  std::vector<double> trained_;            // windows trained from each pipeline, all runs of a resumed job
  std::vector<double> pass_windows_;       // windows in a whole pass; 0 until known
  std::vector<bool> partial_pass_;         // the Filter's next PassWindows report covers part of a pass
  std::vector<double> file_bytes_;         // corpus sizes, for the estimate (0 if unknown)
  int finals_ = 0;
};

}  // namespace fedavg::training
