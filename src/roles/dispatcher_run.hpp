// The Dispatcher's run: the global weights (easgd: the centre), the counters, the test loss, checkpoints, the
// metrics log and the stop rule, with the round loops that drive them (asynchronous: dispatcher_async.cpp).
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bridge/library.hpp"
#include "bridge/scores.hpp"
#include "bridge/text.hpp"
#include "comm/outbox.hpp"
#include "core/config.hpp"
#include "core/outputs.hpp"
#include "core/vocabulary.hpp"
#include "roles/model_setup.hpp"
#include "roles/positions.hpp"
#include "roles/role.hpp"
#include "roles/strategy.hpp"

namespace fedavg::roles {

// One run as the Dispatcher sees it. The round loops differ by strategy; the rest is shared.
class DispatcherRun {
 public:
  using Clock = std::chrono::steady_clock;

  explicit DispatcherRun(const Context& ctx);
  // Resumes from the checkpoint, or evaluates the initial weights; opens the metrics log.
  void start();
  // fedavg, bsp, bmuf: rounds in lock step with every learner.
  void synchronous_rounds();
  // easgd and hogwild: answers each learner's push (hogwild: report) at once; a round is `learners` of them
  // (dispatcher_async.cpp).
  void asynchronous_rounds();
  // Final checkpoint, embeddings, statistics; waits for the pipelines' final reports.
  void finish();

 private:
  double elapsed() const { return seconds_before_ + seconds_since(t0_); }
  static double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  }
  // Every learner has set up and joined the first exchange: the clock of training time, stopped since the
  // round-0 evaluation (or the resumed checkpoint), runs again from there, so seconds never go backwards.
  void training_begins() {
    t0_ = Clock::now() - std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(evaluated_at_ - seconds_before_));
  }
  // Decides whether to stop before the next round; remembers why.
  bool should_stop();
  // Books a finished round (the sums over its learners / pushes), evaluates, checkpoints if due, logs.
  void end_round(double windows, double loss_sum, double sync_seconds);
  // Throws, after logging the round, if the test loss is not finite or above max_loss_ratio x the first one.
  void check_divergence(double sync_seconds);
  // What to change after a divergence, for this strategy.
  std::string divergence_hint() const {
    if (s_.strategy == "bmuf") return "lower lr, block_lr or block_momentum";
    if (s_.strategy == "hogwild")
      return "lower lr: hogwild's " + std::to_string(learners_) + " learners apply it to the same weights at once";
    return "lower lr";
  }
  // {similarity, analogy} of the current embeddings if this round is scored (eval_every), else NaN.
  std::array<double, 2> scores();
  // Receives every learner's opaque state (sent after the round's averaging on checkpoint rounds).
  void collect_states();
  void checkpoint();

  const Context& ctx_;
  const core::Config& cfg_;
  const core::Settings& s_;
  const std::string checkpoint_path_;
  std::vector<float> weights_;  // declared before the model that views it, so it outlives the model
  bridge::Text text_;
  const core::Vocabulary vocab_;
  const std::vector<std::int32_t> test_;
  std::unique_ptr<bridge::Scores> scores_;  // null unless eval_every
  bridge::Library lib_;
  const ModelSetup model_;
  const int width_;
  const std::size_t test_windows_;
  const int learners_;
  std::vector<int> learner_ranks_;
  Positions positions_;
  std::unique_ptr<Strategy> strategy_;  // null for easgd and hogwild
  std::vector<std::vector<std::uint8_t>> learner_states_;
  comm::Outbox outbox_;
  std::unique_ptr<core::MetricsLog> metrics_;

  // Restarted when the Dispatcher's set-up is done, and paused from the round-0 evaluation until every
  // learner's is (training_begins): seconds count training only, not the learners' torch import and set-up.
  Clock::time_point t0_ = Clock::now();
  double seconds_before_ = 0.0;          // training time of the run this one resumes
  double evaluated_at_ = 0.0;            // training time when the current weights were last evaluated
  long round_ = 0;
  double loss_ = 0.0, first_loss_ = 0.0, train_loss_ = 0.0, windows_per_learner_ = 0.0;
  double sync_bytes_ = 0.0;  // bytes of weights exchanged, all runs of a resumed job together
  std::string stopped_;
  long last_checkpoint_ = -1;
};

}  // namespace fedavg::roles
