#include "roles/dispatcher.hpp"

#include <chrono>
#include <cstdio>

#include "bridge/text.hpp"
#include "comm/communicator.hpp"
#include "comm/outbox.hpp"
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

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
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

}  // namespace

void Dispatcher::run() {
  const auto& cfg = ctx_.cfg;
  const auto& s = cfg.settings;
  const auto& world = ctx_.world;
  auto t0 = std::chrono::steady_clock::now();  // restarted once set-up is done: seconds count training only
  double seconds_before = 0.0;  // training time of the run this one resumes
  auto elapsed = [&] {
    return seconds_before + std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };

  core::ensure_writable_dir(cfg.out_dir);
  const auto base = cfg.out_dir / s.data_name;
  const auto checkpoint_path = base.string() + ".h5";
  std::vector<float> weights;  // declared before the model that views it, so it outlives the model
  // Validate the inputs before importing torch (seconds), so bad input fails fast.
  bridge::Text text(ctx_.py);
  const core::Vocabulary vocab = text.load_vocab(cfg.vocab_path());
  const std::vector<std::int32_t> test = text.load_test(cfg.test_path(), s.window);
  bridge::Library lib(ctx_.py);
  const ModelSetup model = setup_model(ctx_, vocab, lib, weights);
  const int width = s.window_width();
  const std::size_t test_windows = test.size() / static_cast<std::size_t>(width);
  const int learners = ctx_.map.learners();
  std::vector<int> learner_ranks;
  for (int l = 0; l < learners; ++l) learner_ranks.push_back(ctx_.map.learner_rank(l));

  std::printf("fedavg_mpi: %s: %d pipeline(s), %d learner(s), vocabulary %d, %zu test windows, %zu parameters\n",
              s.data_name.c_str(), ctx_.map.pipelines(), learners, vocab.size(), test_windows, weights.size());
  std::fflush(stdout);

  Positions positions(ctx_);
  const auto strategy = Strategy::make(s);
  std::vector<std::vector<std::uint8_t>> learner_states(static_cast<std::size_t>(learners));
  comm::Outbox outbox(world);
  long round = 0;
  double loss = 0.0, first_loss = 0.0, train_loss = 0.0, windows_per_learner = 0.0;

  // Receives every learner's opaque state (sent after the round's averaging on checkpoint rounds).
  auto collect_states = [&] {
    for (std::size_t l = 0; l < learner_ranks.size(); ++l) {
      world.receive(world.await_message(learner_ranks[l], comm::Tag::LearnerState,
                                        comm::Deadline::after(s.liveness_seconds),
                                        "the state of learner rank " + std::to_string(learner_ranks[l])),
                    learner_states[l]);
    }
  };
  auto checkpoint = [&] {
    std::vector<core::NamedArray> arrays;
    std::size_t off = 0;
    for (const auto& p : model.shapes) {
      arrays.push_back({p.name, p.shape, weights.data() + off});
      off += p.size();
    }
    positions.drain();
    core::write_checkpoint(checkpoint_path, arrays,
                           {round, loss, train_loss, first_loss, windows_per_learner, elapsed(), s.seed, s.data_name},
                           learner_states, positions.latest(), strategy->state(),
                           core::kill_in_checkpoint_planned(cfg.faults, ctx_.me, round));
  };

  std::unique_ptr<core::MetricsLog> metrics;
  t0 = std::chrono::steady_clock::now();
  if (cfg.resume) {
    std::vector<std::pair<std::string, std::size_t>> expected;
    for (const auto& p : model.shapes) expected.emplace_back(p.name, p.size());
    core::Checkpoint ck = core::read_checkpoint(checkpoint_path, expected);
    if (ck.info.data_name != s.data_name)
      throw core::Error(checkpoint_path + ": written by run \"" + ck.info.data_name + "\", not \"" + s.data_name + "\"");
    if (static_cast<int>(ck.positions.size()) != ctx_.map.pipelines())
      throw core::Error(checkpoint_path + ": written with " + std::to_string(ck.positions.size()) +
                        " corpus file(s), this run has " + std::to_string(ctx_.map.pipelines()));
    std::size_t off = 0;
    for (const auto& a : ck.arrays) {
      std::copy(a.begin(), a.end(), weights.begin() + static_cast<std::ptrdiff_t>(off));
      off += a.size();
    }
    round = ck.info.round;
    loss = ck.info.test_loss;
    train_loss = ck.info.train_loss;
    first_loss = ck.info.first_loss;
    windows_per_learner = ck.info.windows_per_learner;
    seconds_before = ck.info.seconds;
    positions.set(ck.positions);
    strategy->state() = ck.strategy_state;
    for (int p = 0; p < ctx_.map.pipelines(); ++p)
      outbox.send(std::vector<std::int64_t>(ck.positions[static_cast<std::size_t>(p)].begin(),
                                            ck.positions[static_cast<std::size_t>(p)].end()),
                  ctx_.map.tokenizer(p), comm::Tag::ResumeFrom);
    if (static_cast<int>(ck.learner_states.size()) != learners)
      core::warn(ctx_.me, "the checkpoint holds the state of " + std::to_string(ck.learner_states.size()) +
                              " learner(s), this run has " + std::to_string(learners) +
                              ": learners start with a fresh optimizer");
    for (int l = 0; l < learners; ++l) {
      std::vector<std::uint8_t> state;
      if (static_cast<int>(ck.learner_states.size()) == learners) state = ck.learner_states[static_cast<std::size_t>(l)];
      learner_states[static_cast<std::size_t>(l)] = state;
      outbox.send(std::move(state), learner_ranks[static_cast<std::size_t>(l)], comm::Tag::LearnerState);
    }
    metrics = std::make_unique<core::MetricsLog>(cfg.out_dir / (s.data_name + "_metrics.csv"), round);
    if (metrics->last_round() < round) metrics->row(round, windows_per_learner, seconds_before, loss, train_loss);
    std::printf("fedavg_mpi: resuming from round %ld (test loss %.4f, %.0f windows per learner, %.1f s)\n", round, loss,
                windows_per_learner, seconds_before);
  } else {
    first_loss = loss = lib.test_loss(test.data(), test_windows, width);
    metrics = std::make_unique<core::MetricsLog>(cfg.out_dir / (s.data_name + "_metrics.csv"));
    metrics->row(0, 0.0, elapsed(), loss, 0.0);
    std::printf("round %5ld  windows/learner %12.0f  test loss %.4f  %8.1f s\n", round, 0.0, loss, elapsed());
  }
  std::fflush(stdout);

  RoundSync sync(ctx_.learners, world, s.liveness_seconds, learner_ranks);
  bool first = true;
  std::string stopped;
  long last_checkpoint = cfg.resume ? round : -1;
  for (;;) {
    outbox.retire();
    positions.drain();
    if (loss <= s.target) stopped = "target";
    else if (round >= s.max_rounds) stopped = "max_rounds";
    else if (elapsed() >= s.max_seconds) stopped = "max_seconds";
    else if (ctx_.signals.received()) stopped = core::StopSignal::name(ctx_.signals.received());
    if (!stopped.empty()) break;

    ++round;
    core::inject_faults(cfg.faults, ctx_.me, round);
    sync.control({comm::Control::Command::Train, round});
    sync.await_reports(comm::Tag::Ready, round, comm::kDirect);
    // Every learner is in the collectives once Ready/RoundDone arrived: these spans are pure weight exchange.
    auto sync_start = std::chrono::steady_clock::now();
    strategy->dispatcher_begin(sync, weights, first);
    double sync_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - sync_start).count();
    first = false;
    sync.await_reports(comm::Tag::RoundDone, round, comm::kSlowPeer);
    sync_start = std::chrono::steady_clock::now();
    const RoundTotals total = sync.totals({0.0, 0.0});
    strategy->dispatcher_end(sync, weights);
    sync_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - sync_start).count();

    windows_per_learner += total[0] / learners;
    train_loss = total[0] > 0 ? total[1] / total[0] : 0.0;
    loss = lib.test_loss(test.data(), test_windows, width);
    if (round % s.checkpoint_every == 0) {
      collect_states();
      checkpoint();
      last_checkpoint = round;
    }
    metrics->row(round, windows_per_learner, elapsed(), loss, train_loss, sync_seconds);
    std::printf("round %5ld  windows/learner %12.0f  test loss %.4f  train loss %.4f  %8.1f s\n", round,
                windows_per_learner, loss, train_loss, elapsed());
    std::fflush(stdout);
  }
  sync.control({comm::Control::Command::Stop, round});
  collect_states();  // every learner sends its state on Stop
  if (last_checkpoint != round) checkpoint();
  const core::Matrix emb = lib.embeddings();
  core::write_embeddings_text(cfg.out_dir / (s.data_name + "_embeddings.txt"), emb);
  core::write_word2vec(cfg.out_dir / (s.data_name + ".w2v.txt"), vocab.words, emb);

  const std::string stats = "final: rounds=" + std::to_string(round) + " seconds=" + fmt("%.2f", elapsed()) +
                            " windows_per_learner=" + fmt("%.0f", windows_per_learner) +
                            " first_loss=" + fmt("%.4f", first_loss) + " final_loss=" + fmt("%.4f", loss) +
                            " target=" + fmt("%g", s.target) + " stopped=" + stopped;
  core::write_file_atomic(cfg.out_dir / (s.data_name + "_stats.txt"), stats + "\n");
  std::printf("%s\n", stats.c_str());
  if (ctx_.signals.received() && stopped == core::StopSignal::name(ctx_.signals.received()))
    std::printf("fedavg_mpi: stopped by %s after round %ld; checkpoint and outputs are written (--resume continues)\n",
                stopped.c_str(), round);
  else if (stopped != "target")
    std::printf("fedavg_mpi: stopped at the %s limit before reaching the target test loss %g\n", stopped.c_str(),
                s.target);
  std::printf("fedavg_mpi: outputs in %s\n", cfg.out_dir.string().c_str());
  std::fflush(stdout);

  // Every Tokenizer sends a final position report once the pipelines have shut down.
  comm::poll_until([&] { return positions.drain() == ctx_.map.pipelines(); },
                   comm::Deadline::after(s.liveness_seconds * comm::kIndirect), "the Tokenizers' final reports");
  outbox.flush(comm::Deadline::after(s.liveness_seconds));
}

}  // namespace fedavg::roles
