// A learner's run, whatever the strategy: its model and weights, the windows from its Batcher (requested a
// round ahead), the training of one period of `bpe` steps, and its opaque state for checkpoints. The
// strategy's learner_rounds drives it round by round.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "bridge/library.hpp"
#include "comm/messages.hpp"
#include "comm/outbox.hpp"
#include "core/vocabulary.hpp"
#include "training/context.hpp"
#include "training/strategy.hpp"

namespace fedavg::training {

class LearnerRun {
 public:
  // Builds the model (over memory `strategy` provides, or a buffer of its own), asks its Batcher for the first
  // windows and, with --resume, takes its checkpointed state from the Dispatcher. `strategy` outlives the run.
  LearnerRun(const Context& ctx, Strategy& strategy);
  // Completes every send and ends the stream from its Batcher (the shutdown handshake); drops a Cut left over.
  void finish();

  const Context& ctx() const { return ctx_; }
  const core::Settings& settings() const { return s_; }
  int index() const { return learner_; }
  int dispatcher() const { return ctx_.map.dispatcher(); }
  // This learner's own weights (empty when the strategy provides the memory).
  std::vector<float>& weights() { return weights_; }
  // The model's parameters, in the order of the flat weights.
  const std::vector<bridge::ParamShape>& shapes() const { return shapes_; }
  // Every learner's world rank, in learner order.
  std::vector<int> learner_ranks() const;
  comm::Outbox& outbox() { return outbox_; }

  // Makes sure a whole period's batches are ready: unless a cut period left that many, waits for the next
  // period's windows and asks for the following period's at once.
  void next_batch();
  // Runs the period's bpe steps, fewer if the Dispatcher cuts `round` short (balance_rounds; 0: never cut).
  // `after_step(windows)` runs after each step. Returns what was trained, with the model's learning rate.
  // `steps`: the batches to train (0: bpe); more than a period's (link-sized rounds) waits for the next periods'.
  // `claim`, where given, is asked before each step and ends the round where it says false (the host's learners
  // share the round's batches: HostShare::claim). Its idle_seconds are those since the previous call returned (0
  // for the first): the time this learner spent on anything but training, the exchange and its waits included.
  comm::WindowTotals train(long round = 0, const std::function<void(std::int64_t)>& after_step = {},
                           std::int64_t steps = 0, const std::function<bool()>& claim = {});
  // The Dispatcher's plan of this learner's steps over the whole run (Control's plan): tells the model once it is
  // known or changes (engine.plan_steps). 0: not known, nothing to do.
  void plan(std::int64_t steps);
  // The host's steps per learner so far (HostBatches): the model's schedule goes on from there (engine.at_step).
  void at_step(std::int64_t steps);
  // The rows the model's steps wrote since the last call, per parameter (what the sparse exchange reads).
  bridge::WrittenRows written_rows() { return lib_.written_rows(); }
  // Sends the model's state (optimizer, RNG) to the Dispatcher, for its checkpoint.
  void send_state();

 private:
  // balance_rounds: true once the Dispatcher has cut `round` short (older rounds' cuts are dropped).
  bool cut(long round) const;
  void request_batch();
  // Drops the first `n` batches of batch_, which were trained; those after them move to its front.
  void drop_trained(int n);

  const Context& ctx_;
  const core::Settings& s_;
  const int learner_;
  const int batcher_;
  std::vector<float> weights_;    // declared before the model that views it, so it outlives the model
  const core::Vocabulary vocab_;  // read before torch is imported, so a bad vocab.txt fails fast
  bridge::Library lib_;
  std::vector<bridge::ParamShape> shapes_;
  comm::Outbox outbox_;
  std::vector<std::int32_t> batch_;  // its first `ready_` batches of bs windows are not trained yet, in order
  int ready_ = 0;                    // batches in batch_: a period's, plus what a cut period left (balance_rounds)
  std::int64_t planned_ = 0;         // the last plan given to the model (0: none)
  std::optional<std::chrono::steady_clock::time_point> trained_until_;  // when train() last returned
};

}  // namespace fedavg::training
