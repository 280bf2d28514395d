// The Dispatcher's view of where each pipeline's Tokenizer is in its corpus file (Tag::Position reports),
// kept for checkpoints and resumes.
#pragma once

#include <vector>

#include "core/read_position.hpp"
#include "training/context.hpp"

namespace fedavg::training {

// Read positions reported by the Tokenizers (Tag::Position), latest per pipeline; a negative pass count
// marks a Tokenizer's final report.
class Positions {
 public:
  explicit Positions(const Context& ctx) : ctx_(ctx), latest_(static_cast<std::size_t>(ctx.map.pipelines())) {}

  // Takes every report that has arrived. Returns the number of final reports seen so far.
  int drain();
  const std::vector<core::ReadPosition>& latest() const { return latest_; }
  void set(std::vector<core::ReadPosition> p) { latest_ = std::move(p); }

 private:
  const Context& ctx_;
  std::vector<core::ReadPosition> latest_;
  int finals_ = 0;
};

}  // namespace fedavg::training
