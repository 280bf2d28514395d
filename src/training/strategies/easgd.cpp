#include "training/strategies/easgd.hpp"

#include "comm/communicator.hpp"
#include "training/collectives/round_sync.hpp"
#include "training/dispatcher_run.hpp"
#include "training/learner_run.hpp"

namespace fedavg::training {

void Easgd::dispatcher_start(DispatcherRun& run) {
  const Context& ctx = run.ctx();
  alpha_ = static_cast<float>(configured_alpha_ > 0 ? configured_alpha_ : 0.9 / run.learners());
  pushed_.resize(run.weights().size());
  RoundSync start(ctx.learners, ctx.waits, run.settings().liveness_seconds, run.learner_ranks(), ctx.topology.hosts());
  start.weights(run.weights());  // every learner starts from the centre
  run.training_begins();
  run.add_sync_bytes(start.weight_bytes());
}

void Easgd::take_report(DispatcherRun& run, int rank) {
  const auto& world = run.ctx().world;
  world.receive_into(world.await_message(rank, comm::Tag::Push, comm::Deadline::after(run.settings().liveness_seconds),
                                         "the weights pushed by learner rank " + std::to_string(rank)),
                     pushed_.data(), pushed_.size());
  run.add_sync_bytes(static_cast<double>(pushed_.size() * sizeof(float)));
}

void Easgd::apply_report(DispatcherRun& run, int rank) {
  // The elastic step: d = alpha (x_i - centre); the centre moves by +d, the learner by -d.
  auto& centre = run.weights();
  for (std::size_t i = 0; i < centre.size(); ++i) {
    const float d = alpha_ * (pushed_[i] - centre[i]);
    centre[i] += d;
    pushed_[i] = d;
  }
  run.outbox().send(std::vector<float>(pushed_), rank, comm::Tag::ElasticStep);
  run.add_sync_bytes(static_cast<double>(pushed_.size() * sizeof(float)));
}

void Easgd::learner_rounds(LearnerRun& run) {
  const Context& ctx = run.ctx();
  const auto& world = ctx.world;
  const double liveness = run.settings().liveness_seconds;
  {
    RoundSync start(ctx.learners, ctx.waits, liveness, {}, ctx.topology.hosts());
    start.weights(run.weights());  // the centre to start from
  }
  std::vector<float> step(run.weights().size());
  long round = 1;  // the Dispatcher's round this period counts towards, from its answers
  for (;;) {
    ctx.hooks.reached(round);
    run.next_batch();
    report(run, run.train());
    run.outbox().send(std::vector<float>(run.weights()), run.dispatcher(), comm::Tag::Push);
    const auto answer = await_answer(run, "the Dispatcher's answer to a push");
    if (!answer) return;
    round = answer->round;
    world.receive_into(world.await_message(run.dispatcher(), comm::Tag::ElasticStep, comm::Deadline::after(liveness),
                                           "the Dispatcher's elastic step"),
                       step.data(), step.size());
    for (std::size_t i = 0; i < step.size(); ++i) run.weights()[i] -= step[i];
    if (answer->send_state) run.send_state();
  }
}

}  // namespace fedavg::training
