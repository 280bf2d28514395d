// The Dispatcher's round loop for easgd and hogwild: no global barrier, each learner's push (hogwild: report)
// is answered at once, and every `learners` of them make a round.
#include <memory>

#include "comm/communicator.hpp"
#include "comm/messages.hpp"
#include "comm/shared_weights.hpp"
#include "core/fault.hpp"
#include "roles/dispatcher_run.hpp"
#include "roles/round_sync.hpp"

namespace fedavg::roles {

void DispatcherRun::asynchronous_rounds() {
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

}  // namespace fedavg::roles
