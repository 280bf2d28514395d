#include "roles/learner.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "bridge/library.hpp"
#include "bridge/text.hpp"
#include "comm/messages.hpp"
#include "comm/outbox.hpp"
#include "comm/shared_weights.hpp"
#include "core/error.hpp"
#include "core/fault.hpp"
#include "roles/model_setup.hpp"
#include "roles/round_sync.hpp"
#include "roles/strategy.hpp"

namespace fedavg::roles {
namespace {

// What both round loops share: the model, the windows from this learner's Batcher, and the sends in flight.
struct Worker {
  const Context& ctx;
  bridge::Library& lib;
  std::vector<float>& weights;
  comm::Outbox& outbox;
  int batcher;
  int dispatcher;
  bool slowed;  // one of the first slow_learners learners
  std::vector<std::int32_t> batch;  // its first `ready` batches of bs windows are not trained yet, in order
  const comm::SharedWeights* shared = nullptr;  // hogwild: the weights, and this learner's trained-windows counter
  int learner = 0;
  int ready = 0;  // batches in `batch`: a period's, plus what a cut period left (balance_rounds)

  // Makes sure a whole period's batches are ready: unless a cut period left that many, waits for the next
  // period's windows (requested one period ahead), appends them, and asks for the next period's at once.
  void next_batch() {
    const auto& s = ctx.cfg.settings;
    if (ready >= s.bpe) return;
    const auto& world = ctx.world;
    const auto batch_ints = static_cast<std::size_t>(s.bs * s.window_width());
    const auto period_ints = static_cast<std::size_t>(s.windows_per_round() * s.window_width());
    const std::size_t needed = static_cast<std::size_t>(ready) * batch_ints + period_ints;
    if (batch.size() < needed) batch.resize(needed);  // grows once, the first time a cut leaves batches over
    world.receive_into(world.await_message(batcher, comm::Tag::Batch, comm::Deadline::after(s.liveness_seconds),
                                           "a batch from Batcher rank " + std::to_string(batcher)),
                       batch.data() + static_cast<std::size_t>(ready) * batch_ints, period_ints);
    ready += s.bpe;
    outbox.retire();
    request_batch();
  }
  // balance_rounds: true once the Dispatcher has cut `round` short (older rounds' cuts are dropped).
  bool cut(long round) const {
    while (auto a = ctx.world.probe(dispatcher, comm::Tag::Cut)) {
      std::int64_t r = 0;
      ctx.world.receive_into(*a, &r, 1);
      if (r == round) return true;
    }
    return false;
  }
  void request_batch() {
    outbox.send(comm::WindowRequest{ctx.cfg.settings.windows_per_round()}.encode(), batcher, comm::Tag::Request);
  }

  // Runs the period's bpe steps, fewer if the Dispatcher cuts `round` short (balance_rounds; 0: never); returns
  // {windows trained, the sum over them of the training loss}. A slowed learner sleeps (slow_factor - 1) times
  // each step's duration after it, as if it ran on a slower machine.
  std::array<double, 2> train(long round = 0) {
    const auto& s = ctx.cfg.settings;
    const auto batch_ints = static_cast<std::size_t>(s.bs * s.window_width());
    double loss_sum = 0.0;
    int b = 0;
    for (; b < s.bpe; ++b) {
      if (round > 0 && b > 0 && cut(round)) break;
      const auto start = std::chrono::steady_clock::now();
      if (s.train) {
        loss_sum += lib.train_step(batch.data() + static_cast<std::size_t>(b) * batch_ints,
                                   static_cast<std::size_t>(s.bs), s.window_width());
        if (shared) shared->add_trained(learner, s.bs);
      }
      if (slowed) std::this_thread::sleep_for((std::chrono::steady_clock::now() - start) * (s.slow_factor - 1.0));
    }
    // What a cut left stays for the next period, first in line (nothing moves when the period was whole).
    std::copy(batch.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(b) * batch_ints),
              batch.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(ready) * batch_ints),
              batch.begin());
    ready -= b;
    return {static_cast<double>(b) * s.bs, loss_sum * s.bs};
  }
};

// fedavg, bsp, bmuf: rounds in lock step with the Dispatcher and the other learners.
void synchronous_rounds(Worker& w) {
  const auto& s = w.ctx.cfg.settings;
  RoundSync sync(w.ctx.learners, w.ctx.world, s.liveness_seconds, {});
  const auto strategy = Strategy::make(s);
  bool first = true;
  for (;;) {
    const comm::Control c = sync.control();
    if (c.command == comm::Control::Command::Stop) {
      w.outbox.send(w.lib.get_state(), w.dispatcher, comm::Tag::LearnerState);
      return;
    }
    core::inject_faults(w.ctx.cfg.faults, w.ctx.me, c.round);
    sync.report(comm::Tag::Ready, c.round);
    strategy->learner_begin(sync, w.weights, first);
    first = false;
    w.next_batch();
    const auto [trained, loss_sum] = w.train(s.balance_rounds ? c.round : 0);
    sync.report(comm::Tag::RoundDone, c.round);
    const RoundTotals total = sync.totals({trained, loss_sum});
    const auto share = static_cast<float>(trained / total[0]);
    for (auto& x : w.weights) x *= share;
    strategy->learner_end(sync, w.weights);
    if (c.round % s.checkpoint_every == 0) w.outbox.send(w.lib.get_state(), w.dispatcher, comm::Tag::LearnerState);
  }
}

// Waits for the Dispatcher's answer to a period (or, for hogwild, its go to start).
comm::ElasticReply await_reply(const Worker& w, const std::string& what) {
  comm::ElasticReply::Wire wire{};
  const auto& world = w.ctx.world;
  world.receive_into(world.await_message(w.dispatcher, comm::Tag::Elastic,
                                         comm::Deadline::after(w.ctx.cfg.settings.liveness_seconds), what),
                     wire.data(), wire.size());
  return comm::ElasticReply::decode(wire);
}

// easgd and hogwild: periods of bpe steps at this learner's own pace, with no barrier with the other learners
// (docs/strategies.md). After each period an easgd learner pushes its weights to the Dispatcher (the centre)
// and moves them by the elastic step it answers with. A hogwild learner trains the weights it shares with
// everyone in place, so it only reports the period's windows and loss, and goes on at once: it takes the
// answer (Train or Stop) after its next period, so it never waits for the Dispatcher while that evaluates.
void asynchronous_periods(Worker& w) {
  const auto& s = w.ctx.cfg.settings;
  const auto& world = w.ctx.world;
  const bool elastic = w.shared == nullptr;
  std::vector<float> step;
  // The Dispatcher's round this period counts towards, from its answers. A slow learner may not see every
  // round, so --inject-fault fires for each round passed since the last period.
  long round = 1, faults_through = 0;
  if (elastic) {
    RoundSync start(w.ctx.learners, world, s.liveness_seconds, {});
    start.weights(w.weights);  // the centre to start from
    step.resize(w.weights.size());
  } else {
    round = await_reply(w, "the Dispatcher's go (the shared weights are set)").round;
    w.shared->sync();
  }
  // Takes the Dispatcher's answer to a period; false on Stop (the state is then sent).
  auto answer = [&](const std::string& what) {
    const comm::ElasticReply reply = await_reply(w, what);
    if (reply.command == comm::Control::Command::Stop) {
      w.outbox.send(w.lib.get_state(), w.dispatcher, comm::Tag::LearnerState);
      return false;
    }
    round = reply.round;
    if (elastic) {
      world.receive_into(world.await_message(w.dispatcher, comm::Tag::ElasticStep,
                                             comm::Deadline::after(s.liveness_seconds),
                                             "the Dispatcher's elastic step"),
                         step.data(), step.size());
      for (std::size_t i = 0; i < step.size(); ++i) w.weights[i] -= step[i];
    }
    if (reply.send_state) w.outbox.send(w.lib.get_state(), w.dispatcher, comm::Tag::LearnerState);
    return true;
  };
  bool answer_due = false;  // hogwild: the answer to the last report, taken after this period
  for (;;) {
    for (; faults_through < round; ++faults_through)
      core::inject_faults(w.ctx.cfg.faults, w.ctx.me, faults_through + 1);
    w.next_batch();
    const double loss_sum = w.train()[1];
    if (answer_due && !answer("the Dispatcher's answer to a report")) return;
    w.outbox.send(std::vector<double>{static_cast<double>(s.windows_per_round()), loss_sum}, w.dispatcher,
                  comm::Tag::PushInfo);
    if (!elastic) {
      answer_due = true;
      continue;
    }
    w.outbox.send(std::vector<float>(w.weights), w.dispatcher, comm::Tag::Push);
    if (!answer("the Dispatcher's answer to a push")) return;
  }
}

}  // namespace

void Learner::run() {
  const auto& s = ctx_.cfg.settings;
  const auto& world = ctx_.world;
  const int learner = ctx_.map.learner_index(ctx_.me.rank);
  const int batcher = ctx_.map.batcher(ctx_.map.pipeline_of_learner(learner));

  // The weights, declared before the model that views them, so they outlive it: this learner's own, or for
  // hogwild the ones it shares with the Dispatcher and the other learners (set by the Dispatcher before the go).
  std::vector<float> weights;
  std::unique_ptr<comm::SharedWeights> shared;
  const core::Vocabulary vocab = bridge::Text(ctx_.py).load_vocab(ctx_.cfg.vocab_path());  // before torch loads
  bridge::Library lib(ctx_.py);
  if (is_hogwild(s)) {
    const ModelSetup m = describe_model(ctx_, vocab, lib);
    shared = std::make_unique<comm::SharedWeights>(ctx_.learners, m.size(),
                                                   comm::Deadline::after(s.liveness_seconds * comm::kIndirect));
    if (shared->size() != m.size())
      throw core::Error("the shared weights hold " + std::to_string(shared->size()) + " parameters, the model has " +
                        std::to_string(m.size()));
    lib.create(m.cfg, shared->data(), shared->size(), false);
  } else {
    setup_model(ctx_, vocab, lib, weights);
  }

  comm::Outbox outbox(world);
  Worker w{ctx_,   lib,   weights, outbox, batcher, ctx_.map.dispatcher(), learner < s.slow_learners,
           std::vector<std::int32_t>(static_cast<std::size_t>(s.windows_per_round() * s.window_width())),
           shared.get(), learner};
  w.request_batch();
  if (ctx_.cfg.resume) {
    std::vector<std::uint8_t> state;
    world.receive(world.await_message(w.dispatcher, comm::Tag::LearnerState,
                                      comm::Deadline::after(s.liveness_seconds * comm::kIndirect),
                                      "the checkpointed state from the Dispatcher"),
                  state);
    lib.set_state(state);
  }

  if (is_asynchronous(s)) {
    asynchronous_periods(w);
  } else {
    synchronous_rounds(w);
  }
  // The Dispatcher frees the shared weights once every learner has its Stop; a slow learner's is the last.
  if (shared) shared->release(comm::Deadline::after(s.liveness_seconds * comm::kSlowPeer));
  const auto deadline = comm::Deadline::after(s.liveness_seconds);
  outbox.flush(deadline);
  comm::stop_upstream(world, batcher, "Batcher rank " + std::to_string(batcher), deadline);
}

}  // namespace fedavg::roles
