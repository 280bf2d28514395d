// The batches of a host's lock-step rounds where its learners train on through their leader's exchange
// (RunPlan::overlap, docs/strategies.md#training-on-through-the-exchange-overlap). A round's batches (its steps per
// learner, times the host's learners) are the host's, not each learner's: every learner claims them one by one
// (HostShare::claim), and those it trains through the exchange and the wait for the next Control it claims from the
// next round's. A host's change per exchange is thus as large as without overlap (added changes are stable only
// over short rounds), and the leader, which exchanges meanwhile, trains fewer of them.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>

#include "comm/messages.hpp"
#include "training/exchange/host_share.hpp"
#include "training/learner_run.hpp"

namespace fedavg::training {

class HostBatches {
 public:
  // `share`: the host's shared weights; `bpe`: a round's batches per learner where Control gives none;
  // `after_step` as LearnerRun::train's.
  HostBatches(LearnerRun& run, const HostShare& share, std::int64_t bpe,
              std::function<void(std::int64_t)> after_step = {})
      : run_(run), share_(share), after_step_(std::move(after_step)), bpe_(bpe) {}

  // Trains one batch of the next round's, if the host has one left: what a learner does while it waits.
  bool train_on();
  // Trains this learner's part of the round of `steps` batches per learner (0: bpe), `cut_round` as
  // LearnerRun::train says. Returns its windows, with those trained on since the last round (counted as
  // trained through). `done`: Control's, the run's steps per learner so far; the first round's is where the
  // schedule of this process starts. `plan`: Control's, a learner's steps over the whole run (0: not known); what
  // the host trains on through an exchange (train_on) stays within it, so that a run does not outrun its last
  // round. A round's own batches, which Control asked for, are always claimed.
  comm::WindowTotals round(std::int64_t steps, long cut_round, std::int64_t done, std::int64_t plan);

 private:
  LearnerRun& run_;
  const HostShare& share_;
  std::function<void(std::int64_t)> after_step_;
  // Claims one of the host's batches below `limit`; if it got one, puts the model's schedule at the host's steps
  // per learner before it (engine.at_step), so that every learner of the host steps at the host's rate whatever its
  // own share of the batches.
  bool claim(std::int64_t limit);

  std::int64_t bpe_;
  std::int64_t start_ = -1;      // the run's steps per learner when this process began training (-1: not yet)
  std::int64_t plan_ = 0;        // a learner's steps over the whole run (0: not known)
  std::int64_t claimable_ = 0;   // the host's batches through the current round, over the process
  std::int64_t next_round_ = 0;  // the host's batches of the next round, as of the current one's
  comm::WindowTotals through_;   // trained on since the last round
};

}  // namespace fedavg::training
