#include "roles/learner.hpp"

#include "bridge/library.hpp"
#include "bridge/text.hpp"
#include "comm/messages.hpp"
#include "comm/outbox.hpp"
#include "core/error.hpp"
#include "core/fault.hpp"
#include "roles/model_setup.hpp"
#include "roles/round_sync.hpp"
#include "roles/strategy.hpp"

namespace fedavg::roles {

void Learner::run() {
  const auto& s = ctx_.cfg.settings;
  const auto& world = ctx_.world;
  const int learner = ctx_.map.learner_index(ctx_.me.rank);
  const int batcher = ctx_.map.batcher(ctx_.map.pipeline_of_learner(learner));
  const int width = s.window_width();
  const std::int64_t per_round = s.windows_per_round();

  std::vector<float> weights;  // declared before the model that views it, so it outlives the model
  const core::Vocabulary vocab = bridge::Text(ctx_.py).load_vocab(ctx_.cfg.vocab_path());  // before torch loads
  bridge::Library lib(ctx_.py);
  setup_model(ctx_, vocab, lib, weights);

  RoundSync sync(ctx_.learners, world, s.liveness_seconds, {});
  const auto strategy = Strategy::make(s);
  bool first = true;
  comm::Outbox outbox(world);
  std::vector<std::int32_t> batch(static_cast<std::size_t>(per_round * width));
  outbox.send(comm::WindowRequest{per_round}.encode(), batcher, comm::Tag::Request);
  const int dispatcher = ctx_.map.dispatcher();
  if (ctx_.cfg.resume) {
    std::vector<std::uint8_t> state;
    world.receive(world.await_message(dispatcher, comm::Tag::LearnerState,
                                      comm::Deadline::after(s.liveness_seconds * comm::kIndirect),
                                      "the checkpointed state from the Dispatcher"),
                  state);
    lib.set_state(state);
  }

  for (;;) {
    const comm::Control c = sync.control();
    if (c.command == comm::Control::Command::Stop) {
      outbox.send(lib.get_state(), dispatcher, comm::Tag::LearnerState);
      break;
    }
    core::inject_faults(ctx_.cfg.faults, ctx_.me, c.round);
    sync.report(comm::Tag::Ready, c.round);
    strategy->learner_begin(sync, weights, first);
    first = false;

    // This round's windows (requested a round ahead), then ask for the next round's at once.
    world.receive_into(world.await_message(batcher, comm::Tag::Batch, comm::Deadline::after(s.liveness_seconds),
                                           "a batch from Batcher rank " + std::to_string(batcher)),
                       batch.data(), batch.size());
    outbox.retire();
    outbox.send(comm::WindowRequest{per_round}.encode(), batcher, comm::Tag::Request);

    double loss_sum = 0.0;
    for (int b = 0; s.train && b < s.bpe; ++b) {
      const auto* data = batch.data() + static_cast<std::size_t>(b) * static_cast<std::size_t>(s.bs * width);
      loss_sum += lib.train_step(data, static_cast<std::size_t>(s.bs), width);
    }
    sync.report(comm::Tag::RoundDone, c.round);
    const double trained = static_cast<double>(per_round);
    const RoundTotals total = sync.totals({trained, loss_sum * s.bs});
    const auto share = static_cast<float>(trained / total[0]);
    for (auto& x : weights) x *= share;
    strategy->learner_end(sync, weights);
    if (c.round % s.checkpoint_every == 0) outbox.send(lib.get_state(), dispatcher, comm::Tag::LearnerState);
  }
  const auto deadline = comm::Deadline::after(s.liveness_seconds);
  outbox.flush(deadline);
  comm::stop_upstream(world, batcher, "Batcher rank " + std::to_string(batcher), deadline);
}

}  // namespace fedavg::roles
