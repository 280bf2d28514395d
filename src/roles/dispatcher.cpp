#include "roles/dispatcher.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>

#include "bridge/scores.hpp"
#include "bridge/text.hpp"
#include "comm/communicator.hpp"
#include "comm/messages.hpp"
#include "comm/outbox.hpp"
#include "comm/shared_weights.hpp"
#include "core/checkpoint.hpp"
#include "core/error.hpp"
#include "core/fault.hpp"
#include "core/log.hpp"
#include "core/outputs.hpp"
#include "roles/model_setup.hpp"
#include "roles/round_sync.hpp"
#include "roles/strategy.hpp"

namespace fedavg::roles {
namespace {

using Clock = std::chrono::steady_clock;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// "  similarity 0.123  analogies 0.045" for the progress line (the parts that were scored), or "".
std::string scores_text(const std::array<double, 2>& sc) {
  std::string out;
  if (!std::isnan(sc[0])) out += "  similarity " + fmt("%.3f", sc[0]);
  if (!std::isnan(sc[1])) out += "  analogies " + fmt("%.3f", sc[1]);
  return out;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The in-run scorer when eval_every is set: the config folder must then hold similarity.tsv, analogies.txt or
// both (checked before torch is imported).
std::unique_ptr<bridge::Scores> make_scores(const Context& ctx, const core::Vocabulary& vocab) {
  const auto& cfg = ctx.cfg;
  if (cfg.settings.eval_every == 0) return nullptr;
  auto present = [](const std::filesystem::path& p) {
    return std::filesystem::exists(p) ? p : std::filesystem::path();
  };
  const auto similarity = present(cfg.similarity_path()), analogies = present(cfg.analogies_path());
  if (similarity.empty() && analogies.empty())
    throw core::InputError(cfg.cfg_path().string() + ": \"eval_every\" needs similarity.tsv or analogies.txt in " +
                           cfg.config_dir.string());
  return std::make_unique<bridge::Scores>(ctx.py, vocab.words, similarity, analogies);
}

// Read positions reported by the Tokenizers (Tag::Position), latest per pipeline; a negative pass count
// marks a Tokenizer's final report.
class Positions {
 public:
  Positions(const Context& ctx) : ctx_(ctx), latest_(static_cast<std::size_t>(ctx.map.pipelines()), {0, 0}) {}

  // Takes every report that has arrived. Returns the number of final reports seen so far.
  int drain() {
    for (int p = 0; p < ctx_.map.pipelines(); ++p) {
      while (auto a = ctx_.world.probe(ctx_.map.tokenizer(p), comm::Tag::Position)) {
        core::ReadPosition pos{};
        ctx_.world.receive_into(*a, pos.data(), pos.size());
        if (pos[1] < 0) {
          ++finals_;
        } else {
          latest_[static_cast<std::size_t>(p)] = pos;
        }
      }
    }
    return finals_;
  }
  const std::vector<core::ReadPosition>& latest() const { return latest_; }
  void set(std::vector<core::ReadPosition> p) { latest_ = std::move(p); }

 private:
  const Context& ctx_;
  std::vector<core::ReadPosition> latest_;
  int finals_ = 0;
};

// One run as the Dispatcher sees it: the global weights (easgd: the centre), the counters, the test loss,
// checkpoints, the metrics log and the stop rule. The round loops differ by strategy; the rest is shared.
class Run {
 public:
  explicit Run(const Context& ctx);
  // Resumes from the checkpoint, or evaluates the initial weights; opens the metrics log.
  void start();
  // fedavg, bsp, bmuf: rounds in lock step with every learner.
  void synchronous_rounds();
  // easgd and hogwild: answers each learner's push (hogwild: report) at once; a round is `learners` of them.
  void asynchronous_rounds();
  // Final checkpoint, embeddings, statistics; waits for the pipelines' final reports.
  void finish();

 private:
  double elapsed() const { return seconds_before_ + seconds_since(t0_); }
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

Run::Run(const Context& ctx)
    : ctx_(ctx),
      cfg_(ctx.cfg),
      s_(ctx.cfg.settings),
      checkpoint_path_((cfg_.out_dir / s_.data_name).string() + ".h5"),
      text_(ctx.py),
      // Validate the inputs before importing torch (seconds), so bad input fails fast.
      vocab_(text_.load_vocab(cfg_.vocab_path())),
      test_(text_.load_test(cfg_.test_path(), s_.window)),
      scores_(make_scores(ctx, vocab_)),
      lib_(ctx.py),
      model_(setup_model(ctx, vocab_, lib_, weights_)),
      width_(s_.window_width()),
      test_windows_(test_.size() / static_cast<std::size_t>(width_)),
      learners_(ctx.map.learners()),
      positions_(ctx),
      strategy_(is_asynchronous(s_) ? nullptr : Strategy::make(s_)),
      learner_states_(static_cast<std::size_t>(learners_)),
      outbox_(ctx.world) {
  for (int l = 0; l < learners_; ++l) learner_ranks_.push_back(ctx.map.learner_rank(l));
  std::printf("fedavg_mpi: %s: %d pipeline(s), %d learner(s), strategy %s, vocabulary %d, %zu test windows, "
              "%zu parameters\n",
              s_.data_name.c_str(), ctx.map.pipelines(), learners_, s_.strategy.c_str(), vocab_.size(), test_windows_,
              weights_.size());
  std::fflush(stdout);
}

void Run::start() {
  const auto metrics_path = cfg_.out_dir / (s_.data_name + "_metrics.csv");
  t0_ = Clock::now();
  if (!cfg_.resume) {
    first_loss_ = loss_ = lib_.test_loss(test_.data(), test_windows_, width_);
    metrics_ = std::make_unique<core::MetricsLog>(metrics_path);
    const auto sc = scores();
    evaluated_at_ = elapsed();
    metrics_->row(0, 0.0, evaluated_at_, loss_, 0.0, 0.0, 0.0, sc[0], sc[1]);
    std::printf("round %5ld  windows/learner %12.0f  test loss %.4f  %8.1f s%s\n", round_, 0.0, loss_, evaluated_at_,
                scores_text(sc).c_str());
    std::fflush(stdout);
    return;
  }
  std::vector<std::pair<std::string, std::size_t>> expected;
  for (const auto& p : model_.shapes) expected.emplace_back(p.name, p.size());
  core::Checkpoint ck = core::read_checkpoint(checkpoint_path_, expected);
  if (ck.info.data_name != s_.data_name)
    throw core::Error(checkpoint_path_ + ": written by run \"" + ck.info.data_name + "\", not \"" + s_.data_name +
                      "\"");
  if (ck.info.strategy != s_.strategy)
    throw core::Error(checkpoint_path_ + ": written with strategy " + ck.info.strategy + ", cfg.json says " +
                      s_.strategy);
  if (static_cast<int>(ck.positions.size()) != ctx_.map.pipelines())
    throw core::Error(checkpoint_path_ + ": written with " + std::to_string(ck.positions.size()) +
                      " corpus file(s), this run has " + std::to_string(ctx_.map.pipelines()));
  std::size_t off = 0;
  for (const auto& a : ck.arrays) {
    std::copy(a.begin(), a.end(), weights_.begin() + static_cast<std::ptrdiff_t>(off));
    off += a.size();
  }
  round_ = last_checkpoint_ = ck.info.round;
  loss_ = ck.info.test_loss;
  train_loss_ = ck.info.train_loss;
  first_loss_ = ck.info.first_loss;
  windows_per_learner_ = ck.info.windows_per_learner;
  seconds_before_ = evaluated_at_ = ck.info.seconds;
  sync_bytes_ = ck.info.sync_bytes;
  positions_.set(ck.positions);
  if (strategy_) strategy_->state() = ck.strategy_state;
  for (int p = 0; p < ctx_.map.pipelines(); ++p)
    outbox_.send(std::vector<std::int64_t>(ck.positions[static_cast<std::size_t>(p)].begin(),
                                           ck.positions[static_cast<std::size_t>(p)].end()),
                 ctx_.map.tokenizer(p), comm::Tag::ResumeFrom);
  const bool same_learners = static_cast<int>(ck.learner_states.size()) == learners_;
  if (!same_learners)
    core::warn(ctx_.me, "the checkpoint holds the state of " + std::to_string(ck.learner_states.size()) +
                            " learner(s), this run has " + std::to_string(learners_) +
                            ": learners start with a fresh optimizer");
  for (int l = 0; l < learners_; ++l) {
    std::vector<std::uint8_t> state;
    if (same_learners) state = ck.learner_states[static_cast<std::size_t>(l)];
    learner_states_[static_cast<std::size_t>(l)] = state;
    outbox_.send(std::move(state), learner_ranks_[static_cast<std::size_t>(l)], comm::Tag::LearnerState);
  }
  metrics_ = std::make_unique<core::MetricsLog>(metrics_path, round_);
  if (metrics_->last_round() < round_)
    metrics_->row(round_, windows_per_learner_, seconds_before_, loss_, train_loss_, 0.0, sync_bytes_);
  std::printf("fedavg_mpi: resuming from round %ld (test loss %.4f, %.0f windows per learner, %.1f s)\n", round_,
              loss_, windows_per_learner_, seconds_before_);
  std::fflush(stdout);
}

bool Run::should_stop() {
  outbox_.retire();
  positions_.drain();
  if (loss_ <= s_.target) stopped_ = "target";
  else if (round_ >= s_.max_rounds) stopped_ = "max_rounds";
  else if (elapsed() >= s_.max_seconds) stopped_ = "max_seconds";
  else if (ctx_.signals.received()) stopped_ = core::StopSignal::name(ctx_.signals.received());
  return !stopped_.empty();
}

void Run::end_round(double windows, double loss_sum, double sync_seconds) {
  windows_per_learner_ += windows / learners_;
  train_loss_ = windows > 0 ? loss_sum / windows : 0.0;
  loss_ = lib_.test_loss(test_.data(), test_windows_, width_);
  check_divergence(sync_seconds);
  if (round_ % s_.checkpoint_every == 0) {
    if (strategy_) collect_states();  // easgd and hogwild learners sent theirs during the round
    checkpoint();
  }
  const auto sc = scores();
  evaluated_at_ = elapsed();
  metrics_->row(round_, windows_per_learner_, evaluated_at_, loss_, train_loss_, sync_seconds, sync_bytes_, sc[0],
                sc[1]);
  std::printf("round %5ld  windows/learner %12.0f  test loss %.4f  train loss %.4f  %8.1f s%s\n", round_,
              windows_per_learner_, loss_, train_loss_, evaluated_at_, scores_text(sc).c_str());
  std::fflush(stdout);
}

void Run::check_divergence(double sync_seconds) {
  const bool too_high = s_.max_loss_ratio > 0 && first_loss_ > 0 && loss_ > s_.max_loss_ratio * first_loss_;
  if (std::isfinite(loss_) && !too_high) return;
  // The round's row goes to the metrics for the diagnosis; its weights do not go to the checkpoint.
  metrics_->row(round_, windows_per_learner_, elapsed(), loss_, train_loss_, sync_seconds, sync_bytes_, std::nan(""),
                std::nan(""));
  char what[160];
  std::snprintf(what, sizeof what, "test loss %g after round %ld, above max_loss_ratio %g times the untrained model's %g",
                loss_, round_, s_.max_loss_ratio, first_loss_);
  throw core::Error(std::string(std::isfinite(loss_) ? what : "test loss is not finite after round " +
                                                                  std::to_string(round_)) +
                    ": the weights diverged (" + divergence_hint() + "); " +
                    (last_checkpoint_ >= 0 ? "the checkpoint of round " + std::to_string(last_checkpoint_) + " is kept"
                                           : std::string("no checkpoint was written")));
}

std::array<double, 2> Run::scores() {
  if (!scores_ || round_ % s_.eval_every != 0) return {std::nan(""), std::nan("")};
  return scores_->score(lib_.embeddings());
}

void Run::collect_states() {
  for (std::size_t l = 0; l < learner_ranks_.size(); ++l) {
    ctx_.world.receive(ctx_.world.await_message(learner_ranks_[l], comm::Tag::LearnerState,
                                                comm::Deadline::after(s_.liveness_seconds),
                                                "the state of learner rank " + std::to_string(learner_ranks_[l])),
                       learner_states_[l]);
  }
}

void Run::checkpoint() {
  std::vector<core::NamedArray> arrays;
  std::size_t off = 0;
  for (const auto& p : model_.shapes) {
    arrays.push_back({p.name, p.shape, weights_.data() + off});
    off += p.size();
  }
  positions_.drain();
  static const std::vector<float> no_state;
  core::write_checkpoint(checkpoint_path_, arrays,
                         {round_, loss_, train_loss_, first_loss_, windows_per_learner_, elapsed(), sync_bytes_,
                          s_.seed, s_.data_name, s_.strategy},
                         learner_states_, positions_.latest(), strategy_ ? strategy_->state() : no_state,
                         core::kill_in_checkpoint_planned(cfg_.faults, ctx_.me, round_));
  last_checkpoint_ = round_;
}

void Run::synchronous_rounds() {
  RoundSync sync(ctx_.learners, ctx_.world, s_.liveness_seconds, learner_ranks_);
  const double bytes_before = sync_bytes_;
  bool first = true;
  while (!should_stop()) {
    ++round_;
    core::inject_faults(cfg_.faults, ctx_.me, round_);
    sync.control({comm::Control::Command::Train, round_});
    sync.await_reports(comm::Tag::Ready, round_, comm::kDirect);
    if (first) training_begins();
    // Every learner is in the collectives once Ready/RoundDone arrived: these spans are pure weight exchange.
    auto sync_start = Clock::now();
    strategy_->dispatcher_begin(sync, weights_, first);
    double sync_seconds = seconds_since(sync_start);
    first = false;
    // balance_rounds: the first learner done ends the round; the others stop after their current step.
    std::function<void(const std::set<int>&)> cut;
    if (s_.balance_rounds)
      cut = [&](const std::set<int>& busy) {
        for (const int rank : busy) outbox_.send(std::vector<std::int64_t>{round_}, rank, comm::Tag::Cut);
      };
    sync.await_reports(comm::Tag::RoundDone, round_, comm::kSlowPeer, cut);
    sync_start = Clock::now();
    const RoundTotals total = sync.totals({0.0, 0.0});
    strategy_->dispatcher_end(sync, weights_);
    sync_seconds += seconds_since(sync_start);
    sync_bytes_ = bytes_before + sync.weight_bytes();
    end_round(total[0], total[1], sync_seconds);
  }
  sync.control({comm::Control::Command::Stop, round_});
  collect_states();  // every learner sends its state on Stop
}

void Run::asynchronous_rounds() {
  const auto& world = ctx_.world;
  const bool elastic = is_elastic(s_);
  const float alpha = static_cast<float>(s_.elastic_alpha > 0 ? s_.elastic_alpha : 0.9 / learners_);
  const auto params = weights_.size();
  const double push_bytes = static_cast<double>(params * sizeof(float));
  // hogwild: the weights the learners train in place; weights_ is the snapshot taken at the end of each round
  // (evaluated, checkpointed, and the outputs).
  std::unique_ptr<comm::SharedWeights> shared;
  double trained_before = 0.0;  // hogwild: windows the learners had trained at the last snapshot
  if (elastic) {
    RoundSync start(ctx_.learners, world, s_.liveness_seconds, learner_ranks_);
    start.weights(weights_);  // every learner starts from the centre
    training_begins();
    sync_bytes_ += start.weight_bytes();
  } else {
    shared = std::make_unique<comm::SharedWeights>(ctx_.learners, params,
                                                   comm::Deadline::after(s_.liveness_seconds * comm::kIndirect));
    std::copy(weights_.begin(), weights_.end(), shared->data());
    shared->sync();
    for (const int rank : learner_ranks_)
      outbox_.send(comm::ElasticReply{comm::Control::Command::Train, round_ + 1, false}.encode(), rank,
                   comm::Tag::Elastic);
    training_begins();
  }
  std::vector<int> owed(static_cast<std::size_t>(learners_), 0);  // LearnerState messages still to come
  std::vector<Clock::time_point> last_push(static_cast<std::size_t>(learners_), Clock::now());
  auto index_of = [&](int rank) { return static_cast<std::size_t>(ctx_.map.learner_index(rank)); };
  // Takes the states that have arrived; true if there was one.
  auto take_states = [&] {
    bool any = false;
    for (std::size_t l = 0; l < learner_ranks_.size(); ++l) {
      while (owed[l] > 0) {
        auto a = world.probe(learner_ranks_[l], comm::Tag::LearnerState);
        if (!a) break;
        world.receive(*a, learner_states_[l]);
        --owed[l];
        any = true;
      }
    }
    return any;
  };

  bool stopping = should_stop();
  if (!stopping) core::inject_faults(cfg_.faults, ctx_.me, round_ + 1);
  int running = learners_, pushes = 0;
  std::vector<bool> stopped(static_cast<std::size_t>(learners_), false);
  double windows = 0.0, loss_sum = 0.0, sync_seconds = 0.0;
  std::vector<float> pushed(elastic ? params : 0);  // easgd: a learner's weights, then its elastic step
  // Other learners' pushes keep the loop busy, so each learner's silence is watched on its own.
  auto check_liveness = [&] {
    const double limit = s_.liveness_seconds * comm::kSlowPeer;
    for (std::size_t l = 0; l < last_push.size(); ++l)
      if (!stopped[l] && seconds_since(last_push[l]) >= limit)
        comm::liveness_timeout(std::string(elastic ? "a push" : "a report") + " from learner rank " +
                                   std::to_string(learner_ranks_[l]),
                               limit);
  };
  comm::Backoff backoff;
  while (running > 0) {
    check_liveness();
    const bool got_state = take_states();
    const auto a = world.probe(comm::kAnySource, comm::Tag::PushInfo);
    if (!a) {
      if (got_state) {
        backoff.reset();
      } else {
        backoff.sleep();
      }
      continue;
    }
    backoff.reset();
    const int rank = a->source;
    const std::size_t l = index_of(rank);
    std::array<double, 2> info{};
    world.receive_into(*a, info.data(), info.size());
    if (elastic) {
      world.receive_into(world.await_message(rank, comm::Tag::Push, comm::Deadline::after(s_.liveness_seconds),
                                             "the weights pushed by learner rank " + std::to_string(rank)),
                         pushed.data(), params);
      sync_bytes_ += push_bytes;
    }
    last_push[l] = Clock::now();
    if (stopping) {  // the round is over: the push is not applied, so the outputs are the evaluated centre
      outbox_.send(comm::ElasticReply{comm::Control::Command::Stop, round_, false}.encode(), rank, comm::Tag::Elastic);
      ++owed[l];  // a stopped learner sends its state
      stopped[l] = true;
      --running;
      continue;
    }
    const auto start = Clock::now();
    if (elastic) {
      // The elastic step: d = alpha (x_i - centre); the centre moves by +d, the learner by -d.
      for (std::size_t i = 0; i < params; ++i) {
        const float d = alpha * (pushed[i] - weights_[i]);
        weights_[i] += d;
        pushed[i] = d;
      }
    }
    const bool send_state = (round_ + 1) % s_.checkpoint_every == 0;
    outbox_.send(comm::ElasticReply{comm::Control::Command::Train, round_ + 1, send_state}.encode(), rank,
                 comm::Tag::Elastic);
    if (elastic) {
      outbox_.send(std::vector<float>(pushed), rank, comm::Tag::ElasticStep);
      sync_bytes_ += push_bytes;
    }
    if (send_state) ++owed[l];
    sync_seconds += seconds_since(start);
    windows += info[0];
    loss_sum += info[1];
    if (++pushes < learners_) continue;

    ++round_;
    take_states();
    if (!elastic) {
      // The snapshot: the weights as the learners have left them so far (they go on training meanwhile), and
      // the windows they had trained by then (read after the copy, so none is counted that it may lack).
      const auto snap = Clock::now();
      shared->sync();
      std::copy(shared->data(), shared->data() + params, weights_.begin());
      const auto trained = static_cast<double>(shared->trained());
      if (windows > 0) loss_sum *= (trained - trained_before) / windows;  // the reports' mean training loss
      windows = trained - trained_before;
      trained_before = trained;
      sync_seconds += seconds_since(snap);
    }
    end_round(windows, loss_sum, sync_seconds);
    pushes = 0;
    windows = loss_sum = sync_seconds = 0.0;
    stopping = should_stop();
    if (!stopping) core::inject_faults(cfg_.faults, ctx_.me, round_ + 1);
  }
  // Every learner has its Stop: take the states still on their way.
  comm::poll_until(
      [&] {
        take_states();
        for (int o : owed)
          if (o > 0) return false;
        return true;
      },
      comm::Deadline::after(s_.liveness_seconds), "the learners' final states");
  if (shared) shared->release(comm::Deadline::after(s_.liveness_seconds));
}

void Run::finish() {
  if (last_checkpoint_ != round_) checkpoint();
  const core::Matrix emb = lib_.embeddings();
  core::write_embeddings_text(cfg_.out_dir / (s_.data_name + "_embeddings.txt"), emb);
  core::write_word2vec(cfg_.out_dir / (s_.data_name + ".w2v.txt"), vocab_.words, emb);

  // seconds: training time when the final weights were evaluated (easgd then still waits for each learner's
  // next push to stop it; a straggler's last period is not training time of the outputs).
  const std::string stats = "final: rounds=" + std::to_string(round_) + " seconds=" + fmt("%.2f", evaluated_at_) +
                            " windows_per_learner=" + fmt("%.0f", windows_per_learner_) +
                            " first_loss=" + fmt("%.4f", first_loss_) + " final_loss=" + fmt("%.4f", loss_) +
                            " target=" + fmt("%g", s_.target) + " stopped=" + stopped_ + " strategy=" + s_.strategy +
                            " learners=" + std::to_string(learners_) +
                            " pipelines=" + std::to_string(ctx_.map.pipelines()) +
                            " sync_bytes=" + fmt("%.0f", sync_bytes_);
  core::write_file_atomic(cfg_.out_dir / (s_.data_name + "_stats.txt"), stats + "\n");
  std::printf("%s\n", stats.c_str());
  if (ctx_.signals.received() && stopped_ == core::StopSignal::name(ctx_.signals.received()))
    std::printf("fedavg_mpi: stopped by %s after round %ld; checkpoint and outputs are written (--resume continues)\n",
                stopped_.c_str(), round_);
  else if (stopped_ != "target")
    std::printf("fedavg_mpi: stopped at the %s limit before reaching the target test loss %g\n", stopped_.c_str(),
                s_.target);
  std::printf("fedavg_mpi: outputs in %s\n", cfg_.out_dir.string().c_str());
  std::fflush(stdout);

  // Every Tokenizer sends a final position report once the pipelines have shut down.
  comm::poll_until([&] { return positions_.drain() == ctx_.map.pipelines(); },
                   comm::Deadline::after(s_.liveness_seconds * comm::kIndirect), "the Tokenizers' final reports");
  outbox_.flush(comm::Deadline::after(s_.liveness_seconds));
}

}  // namespace

void Dispatcher::run() {
  core::ensure_writable_dir(ctx_.cfg.out_dir);
  Run run(ctx_);
  run.start();
  if (is_asynchronous(ctx_.cfg.settings)) {
    run.asynchronous_rounds();
  } else {
    run.synchronous_rounds();
  }
  run.finish();
}

}  // namespace fedavg::roles
