#include "training/strategies/hogwild.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "training/dispatcher_run.hpp"
#include "training/learner_run.hpp"

namespace fedavg::training {

void Hogwild::dispatcher_start(DispatcherRun& run) {
  const Context& ctx = run.ctx();
  auto& w = run.weights();
  shared_ = std::make_unique<comm::SharedWeights>(
      ctx.learners, w.size(), comm::Deadline::after(run.settings().liveness_seconds * comm::kIndirect));
  std::copy(w.begin(), w.end(), shared_->data());
  shared_->sync();
  for (const int rank : run.learner_ranks())  // the go
    run.outbox().send(comm::Answer{comm::Control::Command::Train, run.round() + 1, false}.encode(), rank,
                      comm::Tag::Answer);
  run.training_begins();
}

void Hogwild::round_complete(DispatcherRun& run, comm::WindowTotals& trained, double& sync_seconds) {
  // The snapshot: the weights as the learners have left them so far (they go on training meanwhile), and the
  // windows they had trained by then (read after the copy, so none is counted that it may lack).
  const auto start = DispatcherRun::Clock::now();
  shared_->sync();
  std::copy(shared_->data(), shared_->data() + run.weights().size(), run.weights().begin());
  const auto now_trained = static_cast<double>(shared_->trained());
  // The reports' mean training loss and their split between pipelines, over the windows of the snapshot.
  const double scale = trained.windows > 0 ? (now_trained - trained_before_) / trained.windows : 0.0;
  trained.loss_sum *= scale;
  for (auto& w : trained.pipeline_windows) w *= scale;
  trained.windows = now_trained - trained_before_;
  trained_before_ = now_trained;
  sync_seconds += DispatcherRun::seconds_since(start);
}

void Hogwild::dispatcher_done(DispatcherRun& run) {
  shared_->release(comm::Deadline::after(run.settings().liveness_seconds));
}

int Hogwild::sharing(const Context& ctx) const {
  return !ctx.learners.valid() || ctx.learners.rank() <= 0 ? 1 : ctx.learners.size() - 1;
}

float* Hogwild::learner_weights(const Context& ctx, std::size_t params) {
  shared_ = std::make_unique<comm::SharedWeights>(
      ctx.learners, params, comm::Deadline::after(ctx.cfg.settings.liveness_seconds * comm::kIndirect));
  if (shared_->size() != params)
    throw core::Error("the shared weights hold " + std::to_string(shared_->size()) + " parameters, the model has " +
                      std::to_string(params));
  return shared_->data();
}

void Hogwild::learner_rounds(LearnerRun& run) {
  const int learner = run.index();
  auto answer = await_answer(run, "the Dispatcher's go (the shared weights are set)");
  shared_->sync();
  long round = answer ? answer->round : 0;  // the Dispatcher's round this period counts towards
  // A learner takes the answer to a report after its next period, so it never waits while the Dispatcher
  // evaluates; it stops one period after the answer that says Stop was sent.
  bool answer_due = false;
  while (answer) {
    run.ctx().hooks.reached(round);
    run.next_batch();
    const comm::WindowTotals period = run.train(0,
                                                [&](std::int64_t windows) { shared_->add_trained(learner, windows); });
    if (answer_due) {
      answer = await_answer(run, "the Dispatcher's answer to a report");
      if (!answer) break;
      round = answer->round;
      if (answer->send_state) run.send_state();
    }
    report(run, period);
    answer_due = true;
  }
  // The Dispatcher frees the shared weights once every learner has its Stop; a slow learner's is the last.
  shared_->release(comm::Deadline::after(run.settings().liveness_seconds * comm::kSlowPeer));
}

std::string Hogwild::divergence_hint(int learners) const {
  return "lower lr: hogwild's " + std::to_string(learners) + " learners apply it to the same weights at once";
}

}  // namespace fedavg::training
