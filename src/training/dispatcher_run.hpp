// The Dispatcher's run, whatever the strategy: the global weights (easgd: the centre), the counters, checkpoints,
// the metrics log, the stop rule and the outputs; it evaluates the weights with an Evaluation and checks a resumed
// checkpoint with a ResumeCheck. The strategy's dispatcher_rounds drives it round by round.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bridge/library.hpp"
#include "bridge/scores.hpp"
#include "bridge/text.hpp"
#include "comm/messages.hpp"
#include "comm/outbox.hpp"
#include "core/checkpoint_writer.hpp"
#include "core/config.hpp"
#include "core/outputs.hpp"
#include "core/vocabulary.hpp"
#include "training/checkpoint_schedule.hpp"
#include "training/context.hpp"
#include "training/evaluation.hpp"
#include "training/model_setup.hpp"
#include "training/pipelines.hpp"
#include "training/progress.hpp"
#include "training/resume_check.hpp"
#include "training/round_length.hpp"
#include "training/strategy.hpp"

namespace fedavg::training {

class DispatcherRun {
 public:
  using Clock = std::chrono::steady_clock;

  // Validates the inputs, builds the global model and opens nothing yet. `strategy` outlives the run.
  DispatcherRun(const Context& ctx, Strategy& strategy);
  // Resumes from the checkpoint, or evaluates the initial weights; opens the metrics log.
  void start();
  // Final checkpoint, embeddings, statistics; waits for the pipelines' final reports.
  void finish();
  // Takes the pipelines' reports and answers their shard requests (never waits): the Dispatcher's work between
  // the polls of its waits.
  void serve_pipelines() { pipelines_.drain(); }

  // For the strategy's rounds.
  const Context& ctx() const { return ctx_; }
  const core::Settings& settings() const { return s_; }
  std::vector<float>& weights() { return weights_; }
  // The model's parameters, in the order of the flat weights.
  const std::vector<bridge::ParamShape>& shapes() const { return model_.shapes; }
  const std::vector<int>& learner_ranks() const { return learner_ranks_; }
  // An empty WindowTotals with a slot per pipeline (the Dispatcher's share of RoundSync::totals).
  comm::WindowTotals no_windows() const {
    return {0.0, 0.0, 0.0, 0.0, std::vector<double>(static_cast<std::size_t>(ctx_.map.pipelines()), 0.0)};
  }
  int learners() const { return learners_; }
  long round() const { return round_; }
  // Starts the next round; returns its number.
  long next_round() { return ++round_; }
  comm::Outbox& outbox() { return outbox_; }
  // Decides whether to stop before the next round (target, limits, a signal); remembers why.
  // Says so when max_epochs stopped the run far past its passes (a corpus smaller than one step).
  void warn_overshoot() const;
  bool should_stop();
  // The batches each learner trains in the next round of a lock-step strategy (Control's steps): with
  // link-sized rounds as many as RoundLength says (fewer where max_seconds ends the run sooner), fewer when that
  // is enough to reach max_epochs, so the run stops within a batch per learner of it; 0: bpe.
  std::int64_t round_steps();
  // A learner's steps over the whole run (Control's plan, for the model's schedule): bpe x max_rounds (with
  // link-sized rounds: the steps so far, then the current round length for the rounds left), or the steps of
  // max_epochs passes once a whole pass's windows are known, the fewer; 0 while not known.
  std::int64_t planned_steps() const;
  // A learner's steps so far over the whole run: the windows per learner trained over bs (Control's done).
  std::int64_t steps_done() const;
  // The current round trained for `training_seconds` (from the exchange's opening to the last RoundDone) of the
  // `round_seconds` from its Control to the end of end_round: sizes the next round (link-sized rounds).
  void round_took(double training_seconds, double round_seconds);
  // Every learner has set up and joined the first exchange: the clock of training time, stopped since the
  // round-0 evaluation (or the resumed checkpoint), runs again from there, so seconds never go backwards.
  void training_begins();
  // True if round `round` (the current one or the next) ends with a checkpoint (CheckpointSchedule).
  bool checkpoint_due(long round) { return schedule_.due(round, round_, elapsed()); }
  bool checkpoint_due() { return checkpoint_due(round_); }
  // Books the current round: what the learners trained in it (windows, loss, learning rate, windows per
  // pipeline) and how long its weight exchange took; evaluates, checkpoints if due, logs and prints the progress
  // line.
  void end_round(const comm::WindowTotals& trained, double sync_seconds);
  // The sparse exchange's final flush changed the weights after the last round's evaluation, moving `bytes`
  // (`inbound` of them into the Dispatcher): evaluates them again, and finish() writes the checkpoint again.
  void flushed(double bytes, double inbound);
  // The exchange makes a round that ends with a checkpoint cost more than others (CheckpointSchedule).
  void checkpoint_rounds_cost_more() { schedule_.space_by_exchange(true); }
  // Weights exchanged, in bytes, added to sync_bytes.
  void add_sync_bytes(double bytes) { sync_bytes_ += bytes; }
  // Weights received by the Dispatcher, in bytes, added to inbound_bytes.
  void add_inbound_bytes(double bytes) { inbound_bytes_ += bytes; }
  // Receives every learner's opaque state (LearnerState), one message from each.
  void collect_states();
  // Learner l's latest state, for the checkpoint.
  std::vector<std::uint8_t>& learner_state(std::size_t l) { return learner_states_[l]; }

  static double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

 private:
  static constexpr double kExchangeOverTraining = 4.0;

  // start() of a new run: starts the pipelines and evaluates the initial weights (round 0).
  void start_fresh();
  // start() with --resume: continues from checkpoint `ck`: its weights, counters, read positions, strategy and
  // learner states.
  void resume_from(const core::Checkpoint& ck);
  // This run, as its checkpoints record it, for the ResumeCheck.
  ResumeCheck::Run resumed_run() const;
  // Warns when a round's dense exchange moves more than kExchangeOverTraining times the floats its steps touch
  // (bpe x bs windows of 2 * window + 1 rows of dim), as with bs 1.
  void warn_if_exchange_dwarfs_training() const;
  // --resume: the pipelines go on from the checkpoint's read positions (or shards); learner l from learner l's state.
  void resume_pipelines(const core::Checkpoint& ck);
  void resume_learners(const core::Checkpoint& ck);
  std::filesystem::path metrics_path() const;
  double elapsed() const { return seconds_before_ + seconds_since(t0_); }
  // Throws, after logging the round, if the test loss is not finite or above max_loss_ratio x the first one.
  void check_divergence(double sync_seconds);
  // The current round's metrics row.
  core::MetricsRow metrics_row(double sync_seconds, const bridge::Scores::Result& sc) const;
  // This run was started again after a failure (--restarted): the reason joins the run's restarts.
  void note_restart();
  // A corpus given twice is read twice an epoch: a warning, since it may be meant as a weight.
  void warn_of_repeated_corpora() const;
  // The progress line's figures for the current round, whose weight exchange took sync_seconds.
  Progress::Round progress_round(double lr, const bridge::Scores::Result& sc, double sync_seconds = 0.0) const;
  void checkpoint();
  // Before the first round of a max_epochs run: waits a little for the windows of a whole pass over each corpus
  // small enough that its pipeline reads a whole pass before it can serve that round, so it can be cut to fit.
  void await_small_passes();
  // The learners that read pipeline p (with shards: every learner).
  int readers(int p) const;

  const Context& ctx_;
  const core::Config& cfg_;
  const core::Settings& s_;
  Strategy& strategy_;
  const std::string checkpoint_path_;
  std::vector<float> weights_;  // declared before the model that views it, so it outlives the model
  bridge::Text text_;
  const core::Vocabulary vocab_;
  Evaluation evaluation_;  // loads the test set before lib_ imports torch, and evaluates with lib_
  bridge::Library lib_;
  const ModelSetup model_;
  const int learners_;
  std::vector<int> learner_ranks_;
  Pipelines pipelines_;
  Progress progress_;
  std::vector<std::vector<std::uint8_t>> learner_states_;
  const std::vector<core::CorpusSummary> corpora_;  // each corpus file as this run found it, for the checkpoints
  const ResumeCheck resume_check_;
  comm::Outbox outbox_;
  std::unique_ptr<core::MetricsLog> metrics_;
  core::CheckpointWriter checkpoint_writer_;  // after what it writes from: it waits for its write when destroyed

  // Restarted when the Dispatcher's set-up is done, and paused from the round-0 evaluation until every
  // learner's is (training_begins): seconds count training only, not the learners' torch import and set-up.
  Clock::time_point t0_ = Clock::now();
  double seconds_before_ = 0.0;  // training time of the run this one resumes
  double evaluated_at_ = 0.0;    // training time when the current weights were last evaluated
  long round_ = 0;
  double loss_ = 0.0, first_loss_ = 0.0, windows_per_learner_ = 0.0;
  double through_windows_ = 0.0;      // of the last round's windows per learner, those trained through an exchange
  double idle_seconds_ = 0.0;         // the last round's seconds not training, the learners' mean
  double train_loss_ = std::nan("");  // none before the first round
  double sync_bytes_ = 0.0;           // bytes of weights exchanged, all runs of a resumed job together
  double inbound_bytes_ = 0.0;        // of which the Dispatcher received, this run
  double flush_inbound_bytes_ = 0.0;  // of which in the final flush
  std::string stopped_;
  std::vector<std::string> restarts_;  // "round R: why the run before failed", all runs of a job
  long last_checkpoint_ = -1;
  CheckpointSchedule schedule_;
  bool steps_planned_ = false;    // round_steps() has been asked once (after await_small_passes)
  RoundLength length_;            // the next round's batches per learner
  std::int64_t round_steps_ = 0;  // the current round's, as round_steps() gave them (0: bpe)
};

}  // namespace fedavg::training
