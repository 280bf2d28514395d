#include "training/learner_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "bridge/text.hpp"
#include "comm/communicator.hpp"
#include "core/error.hpp"
#include "training/model_setup.hpp"

namespace fedavg::training {

LearnerRun::LearnerRun(const Context& ctx, Strategy& strategy)
    : ctx_(ctx),
      s_(ctx.cfg.settings),
      learner_(ctx.map.learner_index(ctx.me.rank)),
      batcher_(ctx.map.batcher(ctx.map.pipeline_of_learner(learner_))),
      vocab_(bridge::Text(ctx.py).load_vocab(ctx.cfg.vocab_path())),
      lib_(ctx.py),
      outbox_(ctx.world),
      batch_(static_cast<std::size_t>(ctx_.plan.windows_per_round(s_) * s_.window_width())) {
  const ModelSetup m = describe_model(ctx, vocab_, lib_, strategy.sharing(ctx));
  shapes_ = m.shapes;
  if (float* memory = strategy.learner_weights(ctx, m.size())) {
    // The strategy's memory holds the weights already.
    refused_as_input(ctx.cfg, [&] { lib_.create(m.cfg, memory, m.size(), false); });
  } else {
    weights_.assign(m.size(), 0.0f);
    refused_as_input(ctx.cfg, [&] { lib_.create(m.cfg, weights_.data(), weights_.size(), true); });
  }
  request_batch();
  if (ctx.cfg.resume) {
    std::vector<std::uint8_t> state;
    ctx.world.receive(ctx.world.await_message(dispatcher(), comm::Tag::LearnerState,
                                              comm::Deadline::after(s_.liveness_seconds * comm::kIndirect),
                                              "the checkpointed state from the Dispatcher"),
                      state);
    try {
      lib_.set_state(state);
    } catch (const core::InputError& e) {  // found by this rank alone: reported at once, as a corpus error is
      throw core::CorpusError((ctx.cfg.out_dir / (s_.data_name + ".h5")).string() + ": dataset learner_state/" +
                              std::to_string(learner_) + ": " + e.what());
    }
  }
}

std::vector<int> LearnerRun::learner_ranks() const {
  std::vector<int> ranks;
  for (int l = 0; l < ctx_.map.learners(); ++l) ranks.push_back(ctx_.map.learner_rank(l));
  return ranks;
}

void LearnerRun::finish() {
  // balance_rounds: a Cut that reached this learner after its last round's steps is read here, not left over at
  // the end (MPI would warn of an unmatched message).
  if (s_.balance_rounds) cut(-1);
  const auto deadline = comm::Deadline::after(s_.liveness_seconds);
  outbox_.flush(deadline);
  comm::stop_upstream(ctx_.world, batcher_, "Batcher rank " + std::to_string(batcher_), deadline);
}

void LearnerRun::next_batch() {
  if (ready_ >= ctx_.plan.learner_bpe) return;
  const auto batch_ints = static_cast<std::size_t>(s_.bs * s_.window_width());
  const auto period_ints = static_cast<std::size_t>(ctx_.plan.windows_per_round(s_) * s_.window_width());
  const std::size_t needed = static_cast<std::size_t>(ready_) * batch_ints + period_ints;
  if (batch_.size() < needed) batch_.resize(needed);  // grows once, the first time a cut leaves batches over
  ctx_.world.receive_into(ctx_.world.await_message(batcher_, comm::Tag::Batch,
                                                   comm::Deadline::after(s_.liveness_seconds * comm::kBatch),
                                                   "a batch from Batcher rank " + std::to_string(batcher_)),
                          batch_.data() + static_cast<std::size_t>(ready_) * batch_ints, period_ints);
  ready_ += ctx_.plan.learner_bpe;
  outbox_.retire();
  request_batch();
}

bool LearnerRun::cut(long round) const {
  while (auto a = ctx_.world.probe(dispatcher(), comm::Tag::Cut)) {
    std::int64_t r = 0;
    ctx_.world.receive_into(*a, &r, 1);
    if (r == round) return true;
  }
  return false;
}

void LearnerRun::request_batch() {
  outbox_.send(comm::WindowRequest{ctx_.plan.windows_per_round(s_)}.encode(), batcher_, comm::Tag::Request);
}

comm::WindowTotals LearnerRun::train(long round, const std::function<void(std::int64_t)>& after_step,
                                     std::int64_t steps, const std::function<bool()>& claim) {
  const auto called = std::chrono::steady_clock::now();
  const double idle = trained_until_ ? std::chrono::duration<double>(called - *trained_until_).count() : 0.0;
  const auto batch_ints = static_cast<std::size_t>(s_.bs * s_.window_width());
  double loss_sum = 0.0;
  std::int64_t b = 0;  // batches trained this round
  int at = 0;          // of which from batch_ since it was last refilled
  const std::int64_t last = steps > 0 ? steps : ctx_.plan.learner_bpe;
  // Between periods the buffer holds the weights, for the strategy's exchange; a model on a GPU trains its copy.
  lib_.load_weights();
  for (; b < last; ++b) {
    if (round > 0 && b > 0 && cut(round)) break;
    if (claim && !claim()) break;
    if (at == ready_) {  // a round longer than a period (link-sized rounds): the next period's batches
      drop_trained(at);
      at = 0;
      next_batch();
    }
    const auto start = std::chrono::steady_clock::now();
    if (s_.train) {
      loss_sum += lib_.train_step(batch_.data() + static_cast<std::size_t>(at) * batch_ints,
                                  static_cast<std::size_t>(s_.bs), s_.window_width());
      if (after_step) after_step(s_.bs);
    }
    ++at;
    ctx_.hooks.step_took(std::chrono::steady_clock::now() - start);
  }
  lib_.store_weights();
  drop_trained(at);
  comm::WindowTotals trained{static_cast<double>(b) * s_.bs, loss_sum * s_.bs, 0.0, 0.0,
                             std::vector<double>(static_cast<std::size_t>(ctx_.map.pipelines()), 0.0)};
  trained.idle_seconds = idle;
  trained.pipeline_windows[static_cast<std::size_t>(ctx_.map.pipeline_of_learner(learner_))] = trained.windows;
  const double lr = lib_.current_lr();
  if (!std::isnan(lr)) {
    trained.lr_sum = lr;
    trained.lr_reports = 1;
  }
  trained_until_ = std::chrono::steady_clock::now();
  return trained;
}

void LearnerRun::drop_trained(int n) {
  // What a cut left stays for the next period, first in line (nothing moves when the period was whole).
  const auto batch_ints = static_cast<std::size_t>(s_.bs * s_.window_width());
  std::copy(batch_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(n) * batch_ints),
            batch_.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(ready_) * batch_ints),
            batch_.begin());
  ready_ -= n;
}

void LearnerRun::plan(std::int64_t steps) {
  if (steps <= 0 || steps == planned_) return;
  lib_.plan_steps(steps);
  planned_ = steps;
}

void LearnerRun::at_step(std::int64_t steps) { lib_.at_step(steps); }

void LearnerRun::send_state() { outbox_.send(lib_.get_state(), dispatcher(), comm::Tag::LearnerState); }

}  // namespace fedavg::training
