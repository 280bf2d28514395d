#include "roles/dispatcher.hpp"

#include <chrono>
#include <cstdio>
#include <iostream>
#include "core/fault.hpp"

#include "core/checkpoint.hpp"
#include "core/outputs.hpp"
#include "roles/model_setup.hpp"
#include "roles/round_sync.hpp"

namespace fedavg::roles {
namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

void Dispatcher::run() {
  const auto& cfg = ctx_.cfg;
  const auto& s = cfg.settings;
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };

  core::ensure_writable_dir(cfg.out_dir);
  const auto base = cfg.out_dir / s.data_name;
  std::vector<float> weights;  // declared before the model that views it, so it outlives the model
  bridge::Text text(ctx_.py);
  bridge::Library lib(ctx_.py);
  const ModelSetup model = setup_model(ctx_, text, lib, weights);
  const std::vector<std::int32_t> test = text.load_test(cfg.test_path(), s.window);
  const int width = s.window_width();
  const std::size_t test_windows = test.size() / static_cast<std::size_t>(width);

  const int learners = ctx_.map.learners();
  std::printf("fedavg_mpi: %s: %d pipeline(s), %d learner(s), vocabulary %d, %zu test windows, %zu parameters\n",
              s.data_name.c_str(), ctx_.map.pipelines(), learners, model.vocab.size(), test_windows, weights.size());
  std::fflush(stdout);

  core::MetricsLog metrics(cfg.out_dir / (s.data_name + "_metrics.csv"));
  auto checkpoint = [&](long round, double loss, double wpl) {
    std::vector<core::NamedArray> arrays;
    std::size_t off = 0;
    for (const auto& p : model.shapes) {
      arrays.push_back({p.name, p.shape, weights.data() + off});
      off += p.size();
    }
    core::write_checkpoint(base.string() + ".h5", arrays, {round, loss, wpl, s.seed, s.data_name});
  };

  const double first_loss = lib.test_loss(test.data(), test_windows, width);
  double loss = first_loss;
  double windows_per_learner = 0.0;
  long round = 0;
  metrics.row(0, 0.0, elapsed(), loss, 0.0);
  std::printf("round %5ld  windows/learner %12.0f  test loss %.4f  %8.1f s\n", round, 0.0, loss, elapsed());
  std::fflush(stdout);

  std::vector<int> learner_ranks;
  for (int l = 0; l < learners; ++l) learner_ranks.push_back(ctx_.map.learner_rank(l));
  RoundSync sync(ctx_.learners, ctx_.world, s.liveness_seconds, learner_ranks);
  std::string stopped;
  long last_checkpoint = -1;
  for (;;) {
    if (loss <= s.target) stopped = "target";
    else if (round >= s.max_rounds) stopped = "max_rounds";
    else if (elapsed() >= s.max_seconds) stopped = "max_seconds";
    if (!stopped.empty()) break;

    ++round;
    core::inject_faults(cfg.faults, ctx_.me, round);
    sync.control({comm::Control::Command::Train, round});
    sync.await_reports(comm::Tag::Ready, round, comm::kDirect);
    sync.weights(weights);
    std::fill(weights.begin(), weights.end(), 0.0f);
    sync.await_reports(comm::Tag::RoundDone, round, comm::kSlowPeer);
    const RoundTotals total = sync.totals({0.0, 0.0});
    sync.average_into_root(weights);

    windows_per_learner += total[0] / learners;
    const double train_loss = total[0] > 0 ? total[1] / total[0] : 0.0;
    loss = lib.test_loss(test.data(), test_windows, width);
    metrics.row(round, windows_per_learner, elapsed(), loss, train_loss);
    if (round % s.checkpoint_every == 0) {
      checkpoint(round, loss, windows_per_learner);
      last_checkpoint = round;
    }
    std::printf("round %5ld  windows/learner %12.0f  test loss %.4f  train loss %.4f  %8.1f s\n", round,
                windows_per_learner, loss, train_loss, elapsed());
    std::fflush(stdout);
  }
  sync.control({comm::Control::Command::Stop, round});

  if (last_checkpoint != round) checkpoint(round, loss, windows_per_learner);
  const core::Matrix emb = lib.embeddings();
  core::write_embeddings_text(cfg.out_dir / (s.data_name + "_embeddings.txt"), emb);
  core::write_word2vec(cfg.out_dir / (s.data_name + ".w2v.txt"), model.vocab.words, emb);

  const std::string stats = "final: rounds=" + std::to_string(round) + " seconds=" + fmt("%.2f", elapsed()) +
                            " windows_per_learner=" + fmt("%.0f", windows_per_learner) +
                            " first_loss=" + fmt("%.4f", first_loss) + " final_loss=" + fmt("%.4f", loss) +
                            " target=" + fmt("%g", s.target) + " stopped=" + stopped;
  core::write_file_atomic(cfg.out_dir / (s.data_name + "_stats.txt"), stats + "\n");
  std::printf("%s\n", stats.c_str());
  if (stopped != "target")
    std::printf("fedavg_mpi: stopped at the %s limit before reaching the target test loss %g\n", stopped.c_str(),
                s.target);
  std::printf("fedavg_mpi: outputs in %s\n", cfg.out_dir.string().c_str());
  std::fflush(stdout);
}

}  // namespace fedavg::roles
