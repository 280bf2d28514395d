// The dense exchange of a lock-step run: every member moves whole weight vectors, with the strategy's
// open_round and close_round every round (Lockstep).
#pragma once

#include <memory>
#include <vector>

#include "core/floats.hpp"
#include "training/strategies/round_exchange.hpp"

namespace fedavg::training {

class Lockstep;

class DenseRoundExchange : public RoundExchange {
 public:
  DenseRoundExchange(Lockstep& strategy, std::unique_ptr<RoundSync> sync)
      : RoundExchange(std::move(sync)), strategy_(strategy), members_(this->sync().comm().size() - 1) {}

  void open(core::Floats w, bool first) override;
  void close(core::Floats w, double share, RoundEnd end) override;
  bool flush(core::Floats) override { return false; }
  // One learner member (one host's leader) whose strategy only sends its weights writes none of them.
  bool adds_in_place() const override;

 private:
  Lockstep& strategy_;
  int members_;  // the learner members of the exchange
};

}  // namespace fedavg::training
