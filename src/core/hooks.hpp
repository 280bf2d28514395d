// The test and study hooks of one rank: the faults planned for it with --inject-fault (throw, kill itself or
// hang at a given round; pipeline ranks count blocks instead) and the slow-learner option (slow_learners,
// slow_factor). Loops call it at fixed points; with no plan for the rank it does nothing.
#pragma once

#include <chrono>
#include <vector>

#include "core/config.hpp"
#include "core/fault.hpp"
#include "core/rank_info.hpp"
#include "core/rank_map.hpp"

namespace fedavg::core {

class Hooks {
 public:
  Hooks(const std::vector<Fault>& faults, const RankInfo& me, double slow_factor = 1.0);
  // The faults `cfg` plans for rank `me`, slowed down if it is one of the first slow_learners learners.
  Hooks(const Config& cfg, const RankMap& map, const RankInfo& me);

  // This rank has reached `round` (a pipeline rank: its block). Fires every fault planned for a round after the
  // one last reached, up to `round`, so a learner that sees only some rounds (easgd, hogwild) still meets the
  // ones in between; the first call fires `round` alone (a resumed run starts past the earlier rounds).
  void reached(long round);
  // A training step has taken `step`: a slowed learner sleeps (slow_factor - 1) times as long, as if it ran
  // on a slower machine.
  void step_took(std::chrono::steady_clock::duration step) const;
  // True if the rank must die while writing the checkpoint of `round` (after the temporary file, before the
  // rename).
  bool kill_in_checkpoint(long round) const;

 private:
  std::vector<Fault> mine_;
  RankInfo me_;
  double slow_factor_;
  long reached_ = -1;  // none yet
};

}  // namespace fedavg::core
