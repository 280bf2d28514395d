#include "training/dispatcher_run.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <set>

#include "comm/communicator.hpp"
#include "comm/messages.hpp"
#include "comm/wait.hpp"
#include "core/checkpoint.hpp"
#include "core/checksum.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "core/output_folder.hpp"
#include "core/paths.hpp"
#include "data/fingerprint.hpp"
#include "training/warm_start.hpp"

namespace fedavg::training {
namespace {

// Each corpus file as this run finds it, for the checkpoints and the resume check.
std::vector<core::CorpusSummary> summaries(const std::vector<std::string>& corpora) {
  std::vector<core::CorpusSummary> out;
  for (const auto& c : corpora) out.push_back(data::corpus_summary(c));
  return out;
}

}  // namespace

DispatcherRun::DispatcherRun(const Context& ctx, Strategy& strategy)
    : ctx_(ctx),
      cfg_(ctx.cfg),
      s_(ctx.cfg.settings),
      strategy_(strategy),
      checkpoint_path_((cfg_.out_dir / s_.data_name).string() + ".h5"),
      text_(ctx.py),
      // Validate the inputs before importing torch (seconds), so bad input fails fast.
      vocab_(text_.load_vocab(cfg_.vocab_path())),
      evaluation_(ctx, text_, vocab_, lib_),
      lib_(ctx.py),
      model_(setup_model(ctx, vocab_, lib_, weights_)),
      learners_(ctx.map.learners()),
      pipelines_(ctx),
      progress_(s_, learners_),
      learner_states_(static_cast<std::size_t>(learners_)),
      corpora_(summaries(cfg_.corpora)),
      resume_check_(resumed_run()),
      outbox_(ctx.world),
      checkpoint_writer_(
          s_.checkpoint_background == core::CheckpointBackground::Always ||
          (s_.checkpoint_background == core::CheckpointBackground::Auto && weights_.size() >= core::kLargeModel)),
      schedule_(s_.checkpoint_every, s_.checkpoint_seconds),
      // A round's training stays well inside the liveness limit that its slowest member's wait runs under.
      length_(ctx.plan.learner_bpe, ctx.plan.link_sized_rounds ? s_.exchange_share : 0.0, s_.liveness_seconds / 4) {
  for (int l = 0; l < learners_; ++l) learner_ranks_.push_back(ctx.map.learner_rank(l));
  const auto [model, edited_elsewhere] = lib_.model_origin({{"model", s_.model}}, core::default_python_dir().string());
  std::printf(
      "fedavg_mpi: %s: %d pipeline(s), %d learner(s), strategy %s, vocabulary %d, %zu test windows, "
      "%zu parameters, model %s on %s\n",
      s_.data_name.c_str(), ctx.map.pipelines(), learners_, core::strategy_name(s_.strategy), vocab_.size(),
      evaluation_.test_windows(), weights_.size(), model.c_str(), lib_.device().c_str());
  std::fflush(stdout);
  if (!edited_elsewhere.empty()) core::warn(ctx_.me, edited_elsewhere);
  warn_of_repeated_corpora();
}

void DispatcherRun::warn_of_repeated_corpora() const {
  std::map<std::filesystem::path, int> seen;
  for (const auto& c : cfg_.corpora) {
    std::error_code ec;
    const auto path = std::filesystem::weakly_canonical(c, ec);
    if (++seen[ec ? std::filesystem::path(c) : path] == 2)
      core::warn(ctx_.me, "corpus " + c + " is given more than once: each time is read in full, so its lines " +
                              "count as many times an epoch");
  }
}

void DispatcherRun::start() {
  t0_ = Clock::now();
  warn_if_exchange_dwarfs_training();
  if (!cfg_.resume) {
    start_fresh();
    return;
  }
  std::vector<std::pair<std::string, std::size_t>> expected;
  for (const auto& p : model_.shapes) expected.emplace_back(p.name, p.size());
  resume_from(core::read_checkpoint(checkpoint_path_, expected));
}

void DispatcherRun::start_fresh() {
  if (!cfg_.init_from.empty()) {
    const auto warm = warm_start(cfg_.init_from, vocab_.words, model_.shapes, weights_);
    lib_.load_weights();
    std::printf("fedavg_mpi: %s\n", warm.summary(cfg_.init_from).c_str());
    std::fflush(stdout);
  }
  pipelines_.start();
  first_loss_ = loss_ = evaluation_.test_loss();
  metrics_ = std::make_unique<core::MetricsLog>(metrics_path());
  const auto sc = evaluation_.scores(round_);
  evaluated_at_ = elapsed();
  note_restart();
  metrics_->row(metrics_row(0.0, sc));
  progress_.show(progress_round(std::nan(""), sc));
}

void DispatcherRun::resume_from(const core::Checkpoint& ck) {
  ctx_.hooks.reached(ck.info.round);  // a fault planned for the resumed round strikes while the checkpoint is read
  resume_check_.check(ck);
  std::size_t off = 0;
  for (const auto& a : ck.arrays) {
    std::copy(a.begin(), a.end(), weights_.begin() + static_cast<std::ptrdiff_t>(off));
    off += a.size();
  }
  round_ = last_checkpoint_ = ck.info.round;
  loss_ = evaluation_.test_loss();
  resume_check_.check_loss(loss_, ck.info.test_loss);
  train_loss_ = ck.info.train_loss;
  first_loss_ = ck.info.first_loss;
  windows_per_learner_ = ck.info.windows_per_learner;
  seconds_before_ = evaluated_at_ = ck.info.seconds;
  schedule_.written(ck.info.seconds);
  progress_.resumed(seconds_before_, windows_per_learner_);
  sync_bytes_ = ck.info.sync_bytes;
  resume_pipelines(ck);
  strategy_.state() = ck.strategy_state;
  resume_learners(ck);
  restarts_ = ck.restarts;
  note_restart();
  if (!std::filesystem::exists(metrics_path()))
    core::warn(ctx_.me, metrics_path().string() + " is missing: its rows before round " + std::to_string(round_) +
                            " are lost, and it starts again at the resumed round");
  metrics_ = std::make_unique<core::MetricsLog>(metrics_path(), round_);
  if (metrics_->last_round() < round_) {
    auto row = metrics_row(0.0, {});
    row.seconds = seconds_before_;
    metrics_->row(row);
  }
  std::printf(
      "fedavg_mpi: resuming from round %ld (test loss %.4f measured, as recorded; %.0f windows per learner, "
      "%.1f s)\n",
      round_, loss_, windows_per_learner_, seconds_before_);
  std::fflush(stdout);
}

void DispatcherRun::warn_if_exchange_dwarfs_training() const {
  // The dense exchange moves the weights to and from each learner every round; the sparse one and hogwild's
  // shared weights move only what changed.
  const auto params = static_cast<double>(weights_.size());
  if (!strategy_.moves_whole_weights(s_, weights_.size())) return;
  const double touched = static_cast<double>(ctx_.plan.windows_per_round(s_)) * s_.window_width() * s_.dim;
  if (2 * params <= kExchangeOverTraining * touched) return;
  core::warn(ctx_.me, "each round exchanges " + fmt("%.0f", 2 * params) + " floats of weights with each learner " +
                          "(twice the model's parameters), and its " + std::to_string(ctx_.plan.windows_per_round(s_)) +
                          " windows (bpe x bs) touch about " + fmt("%.0f", touched) +
                          ": the exchange will take most of every round; a larger bs or bpe trains more per exchange");
}

ResumeCheck::Run DispatcherRun::resumed_run() const {
  return {checkpoint_path_,
          s_.data_name,
          core::strategy_name(s_.strategy),
          cfg_.corpora,
          corpora_,
          ctx_.map.pipelines(),
          pipelines_.sharded(),
          cfg_.test_path().string(),
          vocab_.words.size(),
          core::checksum(vocab_.words)};
}

void DispatcherRun::resume_pipelines(const core::Checkpoint& ck) {
  pipelines_.restore(ck.positions, ck.progress, ck.shards);
  if (pipelines_.sharded()) {
    pipelines_.start();
    return;
  }
  for (int p = 0; p < ctx_.map.pipelines(); ++p)
    outbox_.send(ck.positions[static_cast<std::size_t>(p)].encode(), ctx_.map.tokenizer(p), comm::Tag::ResumeFrom);
}

void DispatcherRun::resume_learners(const core::Checkpoint& ck) {
  // Learner l goes on with learner l's state; with fewer learners the others' states are dropped, with more the
  // new ones start afresh (the weights are the global ones either way).
  const auto saved = static_cast<int>(ck.learner_states.size());
  if (saved != learners_)
    core::warn(ctx_.me, "the checkpoint holds the state of " + std::to_string(saved) + " learner(s), this run has " +
                            std::to_string(learners_) + ": the first " + std::to_string(std::min(saved, learners_)) +
                            " go on with theirs, " +
                            (saved > learners_ ? "the other " + std::to_string(saved - learners_) + "'s are dropped"
                                               : "the new ones start with a fresh optimizer"));
  for (int l = 0; l < learners_; ++l) {
    std::vector<std::uint8_t> state;
    if (l < saved) state = ck.learner_states[static_cast<std::size_t>(l)];
    learner_states_[static_cast<std::size_t>(l)] = state;
    outbox_.send(std::move(state), learner_ranks_[static_cast<std::size_t>(l)], comm::Tag::LearnerState);
  }
}

std::filesystem::path DispatcherRun::metrics_path() const { return cfg_.out_dir / (s_.data_name + "_metrics.csv"); }

core::MetricsRow DispatcherRun::metrics_row(double sync_seconds, const bridge::Scores::Result& sc) const {
  return {round_,           windows_per_learner_, evaluated_at_, loss_,      train_loss_,
          sync_seconds,     sync_bytes_,          sc.similarity, sc.analogy, static_cast<int>(restarts_.size()),
          through_windows_, idle_seconds_};
}

void DispatcherRun::note_restart() {
  if (cfg_.restarted.empty()) return;
  restarts_.push_back("round " + std::to_string(round_) + ": " + cfg_.restarted);
  std::printf("fedavg_mpi: restart %zu, from round %ld, after: %s\n", restarts_.size(), round_, cfg_.restarted.c_str());
  std::fflush(stdout);
}

bool DispatcherRun::should_stop() {
  outbox_.retire();
  pipelines_.drain();
  if (s_.target > 0 && loss_ <= s_.target) stopped_ = "target";
  else if (s_.max_rounds > 0 && round_ >= s_.max_rounds) stopped_ = "max_rounds";
  else if (s_.max_seconds > 0 && elapsed() >= s_.max_seconds) stopped_ = "max_seconds";
  else if (s_.max_epochs > 0 && pipelines_.min_epochs() >= s_.max_epochs) stopped_ = "max_epochs";
  else if (ctx_.signals.received()) stopped_ = core::StopSignal::name(ctx_.signals.received());
  if (stopped_ == "max_epochs") warn_overshoot();
  return !stopped_.empty();
}

void DispatcherRun::warn_overshoot() const {
  const double trained = pipelines_.min_epochs();
  if (trained <= 1.5 * s_.max_epochs) return;
  core::warn(ctx_.me, "trained " + fmt("%.1f", trained) + " passes over the corpus, past max_epochs " +
                          fmt("%g", s_.max_epochs) + ": one step (bs, " + std::to_string(s_.bs) +
                          " windows per learner) holds more than the passes asked for; lower --bs to stop nearer");
}

int DispatcherRun::readers(int p) const { return pipelines_.sharded() ? learners_ : ctx_.map.learners_of_pipeline(p); }

void DispatcherRun::await_small_passes() {
  const auto small_and_unknown = [&](int p) {
    std::error_code ec;
    const auto bytes = std::filesystem::file_size(cfg_.corpora[static_cast<std::size_t>(p)], ec);
    // A window takes at least 2 bytes of text (a letter and a separator).
    const double most = ec ? std::numeric_limits<double>::infinity() : static_cast<double>(bytes) / 2;
    const double first_round = static_cast<double>(ctx_.plan.windows_per_round(s_)) * readers(p) + s_.shuffle_windows;
    return most < first_round && std::isnan(pipelines_.windows_to(s_.max_epochs, p));
  };
  const auto give_up = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(s_.liveness_seconds / 4));
  comm::poll_until(
      [&] {
        pipelines_.drain();
        for (int p = 0; p < ctx_.map.pipelines(); ++p)
          if (small_and_unknown(p)) return Clock::now() >= give_up;  // then the first round is whole
        return true;
      },
      comm::Deadline::after(s_.liveness_seconds), "the windows of a pass over a small corpus");
}

std::int64_t DispatcherRun::round_steps() {
  const std::int64_t bpe = ctx_.plan.learner_bpe;
  std::int64_t want = bpe;
  if (length_.adapts()) want = s_.max_seconds > 0 ? length_.steps_within(s_.max_seconds - elapsed()) : length_.steps();
  round_steps_ = want == bpe ? 0 : want;
  if (s_.max_epochs <= 0) return round_steps_;
  if (!steps_planned_ && !pipelines_.sharded()) await_small_passes();
  steps_planned_ = true;
  std::int64_t steps = 0;
  for (int p = 0; p < (pipelines_.sharded() ? 1 : ctx_.map.pipelines()); ++p) {
    const double left = pipelines_.windows_to(s_.max_epochs, p);
    if (std::isnan(left)) return round_steps_;
    steps = std::max(steps, static_cast<std::int64_t>(std::ceil(left / (static_cast<double>(readers(p)) * s_.bs))));
  }
  if (steps < want) round_steps_ = std::max<std::int64_t>(steps, 1);
  return round_steps_;
}

std::int64_t DispatcherRun::steps_done() const {
  return std::llround(windows_per_learner_ / static_cast<double>(s_.bs));
}

std::int64_t DispatcherRun::planned_steps() const {
  const std::int64_t bpe = ctx_.plan.learner_bpe;
  std::int64_t by_rounds = static_cast<std::int64_t>(s_.max_rounds) * bpe;
  // The learners' step counts hold every batch trained so far: those of the rounds before a resume, and with overlap
  // those trained through the exchange. The plan counts them from the windows trained.
  if (length_.adapts() && s_.max_rounds > 0)
    by_rounds = steps_done() + std::max<std::int64_t>(s_.max_rounds - round_ + 1, 0) * length_.steps();
  if (s_.max_epochs <= 0) return by_rounds;
  std::int64_t by_epochs = 0;
  for (int p = 0; p < (pipelines_.sharded() ? 1 : ctx_.map.pipelines()); ++p) {
    const double pass = pipelines_.pass_windows(p);
    if (std::isnan(pass)) return 0;  // the model's own estimate, which takes max_rounds into account, stands
    by_epochs = std::max(by_epochs, static_cast<std::int64_t>(
                                        std::ceil(s_.max_epochs * pass / (static_cast<double>(readers(p)) * s_.bs))));
  }
  return by_rounds > 0 ? std::min(by_rounds, by_epochs) : by_epochs;
}

void DispatcherRun::round_took(double training_seconds, double round_seconds) {
  const std::int64_t steps = round_steps_ > 0 ? round_steps_ : ctx_.plan.learner_bpe;
  length_.took(steps, training_seconds, round_seconds);
}

void DispatcherRun::training_begins() {
  t0_ = Clock::now() -
        std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(evaluated_at_ - seconds_before_));
}

void DispatcherRun::end_round(const comm::WindowTotals& trained, double sync_seconds) {
  windows_per_learner_ += trained.windows / learners_;
  through_windows_ = trained.through / learners_;
  idle_seconds_ = trained.idle_seconds / learners_;
  train_loss_ = trained.mean_loss();
  pipelines_.add_trained(trained.pipeline_windows);
  loss_ = evaluation_.test_loss();
  check_divergence(sync_seconds);
  const bool due = checkpoint_due();
  if (due) checkpoint();
  schedule_.round_ended(sync_seconds, due);
  const auto sc = evaluation_.scores(round_);
  evaluated_at_ = elapsed();
  metrics_->row(metrics_row(sync_seconds, sc));
  pipelines_.drain();
  progress_.show(progress_round(trained.mean_lr(), sc, sync_seconds));
}

Progress::Round DispatcherRun::progress_round(double lr, const bridge::Scores::Result& sc, double sync_seconds) const {
  Progress::Round r{round_, evaluated_at_, windows_per_learner_, loss_,        train_loss_,      lr,
                    {},     true,          Evaluation::text(sc), sync_seconds, through_windows_, idle_seconds_};
  // With shards the epoch is global: one figure.
  for (int p = 0; p < (pipelines_.sharded() ? 1 : ctx_.map.pipelines()); ++p) {
    r.epochs.push_back(pipelines_.epochs_estimate(p));
    if (std::isnan(pipelines_.epochs(p))) r.epochs_exact = false;
  }
  return r;
}

void DispatcherRun::check_divergence(double sync_seconds) {
  const bool too_high = s_.max_loss_ratio > 0 && first_loss_ > 0 && loss_ > s_.max_loss_ratio * first_loss_;
  if (std::isfinite(loss_) && !too_high) return;
  // The round's row goes to the metrics for the diagnosis; its weights do not go to the checkpoint.
  auto row = metrics_row(sync_seconds, {});
  row.seconds = elapsed();
  metrics_->row(row);
  char what[160];
  std::snprintf(what, sizeof what,
                "test loss %g after round %ld, above max_loss_ratio %g times the untrained model's %g", loss_, round_,
                s_.max_loss_ratio, first_loss_);
  throw core::Error(
      std::string(std::isfinite(loss_) ? what : "test loss is not finite after round " + std::to_string(round_)) +
      ": the weights diverged (" + strategy_.divergence_hint(learners_) + "); " +
      (last_checkpoint_ >= 0 ? "the checkpoint of round " + std::to_string(last_checkpoint_) + " is kept"
                             : std::string("no checkpoint was written")));
}

void DispatcherRun::collect_states() {
  for (std::size_t l = 0; l < learner_ranks_.size(); ++l) {
    ctx_.world.receive(ctx_.world.await_message(learner_ranks_[l], comm::Tag::LearnerState,
                                                comm::Deadline::after(s_.liveness_seconds),
                                                "the state of learner rank " + std::to_string(learner_ranks_[l])),
                       learner_states_[l]);
  }
}

void DispatcherRun::checkpoint() {
  std::vector<core::NamedArray> arrays;
  std::size_t off = 0;
  for (const auto& p : model_.shapes) {
    arrays.push_back({p.name, p.shape, weights_.data() + off});
    off += p.size();
  }
  pipelines_.drain();
  const core::CheckpointInfo info{round_,    loss_,       train_loss_, first_loss_,  windows_per_learner_,
                                  elapsed(), sync_bytes_, s_.seed,     s_.data_name, core::strategy_name(s_.strategy)};
  const auto progress = pipelines_.progress();
  const auto shards = pipelines_.shard_progress();
  checkpoint_writer_.write(checkpoint_path_,
                           {arrays, info, learner_states_, pipelines_.positions(), strategy_.state(), vocab_.words,
                            progress, restarts_, shards, corpora_},
                           ctx_.hooks.kill_in_checkpoint(round_), [dir = cfg_.out_dir] {
                             core::OutputFolder::commit(dir);
                           });  // what --overwrite replaced may go now
  last_checkpoint_ = round_;
  schedule_.written(info.seconds);
}

void DispatcherRun::flushed(double bytes, double inbound) {
  sync_bytes_ += bytes;
  inbound_bytes_ += inbound;
  flush_inbound_bytes_ = inbound;
  loss_ = evaluation_.test_loss();
  last_checkpoint_ = -1;
}

void DispatcherRun::finish() {
  progress_.flush();
  if (last_checkpoint_ != round_) checkpoint();
  checkpoint_writer_.finish();  // the outputs need the memory of its copy more
  const core::Matrix emb = evaluation_.embeddings();
  core::write_text_embeddings(cfg_.out_dir / (s_.data_name + "_embeddings.txt"),
                              cfg_.out_dir / (s_.data_name + ".w2v.txt"), vocab_.words, emb);
  core::write_word2vec_binary(cfg_.out_dir / (s_.data_name + ".w2v.bin"), vocab_.words, emb);

  // seconds: training time when the final weights were evaluated (easgd then still waits for each learner's
  // next push to stop it; a straggler's last period is not training time of the outputs).
  // epochs: passes over each pipeline's corpus trained ("nan" where a whole pass was never seen).
  std::string epochs;
  for (int p = 0; p < (pipelines_.sharded() ? 1 : ctx_.map.pipelines()); ++p)
    epochs += (p ? "," : "") + fmt("%.3f", pipelines_.epochs(p));
  const std::string stats = "final: rounds=" + std::to_string(round_) + " seconds=" + fmt("%.2f", evaluated_at_) +
                            " windows_per_learner=" + fmt("%.0f", windows_per_learner_) +
                            " first_loss=" + fmt("%.4f", first_loss_) + " final_loss=" + fmt("%.4f", loss_) +
                            " target=" + fmt("%g", s_.target) + " stopped=" + stopped_ +
                            " strategy=" + core::strategy_name(s_.strategy) + " learners=" + std::to_string(learners_) +
                            " pipelines=" + std::to_string(ctx_.map.pipelines()) + " epochs=" + epochs +
                            " sync_bytes=" + fmt("%.0f", sync_bytes_) +
                            " inbound_bytes=" + fmt("%.0f", inbound_bytes_) +
                            " flush_inbound_bytes=" + fmt("%.0f", flush_inbound_bytes_) +
                            " restarts=" + std::to_string(restarts_.size());
  // One line per restart after the statistics: where the run was taken up again, and why it had failed.
  std::string restarts;
  for (std::size_t k = 0; k < restarts_.size(); ++k)
    restarts += "restart " + std::to_string(k + 1) + ": " + restarts_[k] + "\n";
  core::write_file_atomic(cfg_.out_dir / (s_.data_name + "_stats.txt"), stats + "\n" + restarts);
  std::printf("%s\n", stats.c_str());
  if (ctx_.signals.received() && stopped_ == core::StopSignal::name(ctx_.signals.received()))
    std::printf("fedavg_mpi: stopped by %s after round %ld; checkpoint and outputs are written (--resume continues)\n",
                stopped_.c_str(), round_);
  else if (stopped_ != "target" && s_.target > 0)
    std::printf("fedavg_mpi: stopped at the %s limit before reaching the target test loss %g\n", stopped_.c_str(),
                s_.target);
  std::printf("fedavg_mpi: outputs in %s\n", cfg_.out_dir.string().c_str());
  std::fflush(stdout);

  // Every Tokenizer sends a final position report once the pipelines have shut down.
  comm::poll_until([&] { return pipelines_.drain() == ctx_.map.pipelines(); },
                   comm::Deadline::after(s_.liveness_seconds * comm::kIndirect), "the Tokenizers' final reports");
  outbox_.flush(comm::Deadline::after(s_.liveness_seconds));
  pipelines_.flush(comm::Deadline::after(s_.liveness_seconds));
}

}  // namespace fedavg::training
