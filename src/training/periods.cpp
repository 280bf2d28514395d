#include "training/periods.hpp"

#include <vector>

#include "comm/communicator.hpp"
#include "training/dispatcher_run.hpp"
#include "training/learner_run.hpp"

namespace fedavg::training {

void Periods::round_complete(DispatcherRun&, comm::WindowTotals&, double&) {}

void Periods::dispatcher_done(DispatcherRun&) {}

void Periods::dispatcher_rounds(DispatcherRun& run) {
  const Context& ctx = run.ctx();
  const core::Settings& s = run.settings();
  const auto& world = ctx.world;
  const auto& ranks = run.learner_ranks();
  using Clock = DispatcherRun::Clock;
  dispatcher_start(run);

  const auto learners = static_cast<std::size_t>(run.learners());
  std::vector<int> owed(learners, 0);  // LearnerState messages still to come
  std::vector<Clock::time_point> last_report(learners, Clock::now());
  std::vector<bool> stopped(learners, false);
  auto index_of = [&](int rank) { return static_cast<std::size_t>(ctx.map.learner_index(rank)); };
  // Takes the states that have arrived; true if there was one.
  auto take_states = [&] {
    bool any = false;
    for (std::size_t l = 0; l < learners; ++l) {
      while (owed[l] > 0) {
        auto a = world.probe(ranks[l], comm::Tag::LearnerState);
        if (!a) break;
        world.receive(*a, run.learner_state(l));
        --owed[l];
        any = true;
      }
    }
    return any;
  };
  // Other learners' reports keep the loop busy, so each learner's silence is watched on its own.
  auto check_liveness = [&] {
    const double limit = s.liveness_seconds * comm::kSlowPeer;
    for (std::size_t l = 0; l < learners; ++l)
      if (!stopped[l] && DispatcherRun::seconds_since(last_report[l]) >= limit)
        comm::liveness_timeout(report_name() + " from learner rank " + std::to_string(ranks[l]), limit);
  };

  bool stopping = run.should_stop();
  if (!stopping) ctx.hooks.reached(run.round() + 1);
  std::size_t running = learners, reports = 0;
  comm::WindowTotals trained = run.no_windows();
  double sync_seconds = 0.0;
  comm::Backoff backoff(ctx.waits.prompt());
  while (running > 0) {
    check_liveness();
    const bool got_state = take_states();
    const auto a = world.probe(comm::kAnySource, comm::Tag::PeriodDone);
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
    std::vector<double> period;
    world.receive(*a, period);
    take_report(run, rank);
    last_report[l] = Clock::now();
    if (stopping) {  // the round is over: the period is not applied, so the outputs are the evaluated weights
      run.outbox().send(comm::Answer{comm::Control::Command::Stop, run.round(), false}.encode(), rank,
                        comm::Tag::Answer);
      ++owed[l];  // a stopped learner sends its state
      stopped[l] = true;
      --running;
      continue;
    }
    const auto start = Clock::now();
    apply_report(run, rank);
    const bool send_state = (run.round() + 1) % s.checkpoint_every == 0;
    run.outbox().send(comm::Answer{comm::Control::Command::Train, run.round() + 1, send_state}.encode(), rank,
                      comm::Tag::Answer);
    if (send_state) ++owed[l];
    sync_seconds += DispatcherRun::seconds_since(start);
    trained += comm::WindowTotals::decode(period);
    if (++reports < learners) continue;

    run.next_round();
    take_states();
    round_complete(run, trained, sync_seconds);
    run.end_round(trained, sync_seconds);
    reports = 0;
    trained = run.no_windows();
    sync_seconds = 0.0;
    stopping = run.should_stop();
    if (!stopping) ctx.hooks.reached(run.round() + 1);
  }
  // Every learner has its Stop: take the states still on their way.
  comm::poll_until(
      [&] {
        take_states();
        for (int o : owed)
          if (o > 0) return false;
        return true;
      },
      comm::Deadline::after(s.liveness_seconds), "the learners' final states");
  dispatcher_done(run);
}

void Periods::report(LearnerRun& run, const comm::WindowTotals& period) {
  run.outbox().send(period.encode(), run.dispatcher(), comm::Tag::PeriodDone);
}

std::optional<comm::Answer> Periods::await_answer(LearnerRun& run, const std::string& what) {
  const auto& world = run.ctx().world;
  comm::Answer::Wire wire{};
  world.receive_into(world.await_message(run.dispatcher(), comm::Tag::Answer,
                                         comm::Deadline::after(run.settings().liveness_seconds), what),
                     wire.data(), wire.size());
  const comm::Answer answer = comm::Answer::decode(wire);
  if (answer.command == comm::Control::Command::Stop) {
    run.send_state();
    return std::nullopt;
  }
  return answer;
}

}  // namespace fedavg::training
