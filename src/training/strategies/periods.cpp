#include "training/strategies/periods.hpp"

#include <vector>

#include "comm/communicator.hpp"
#include "training/dispatcher_run.hpp"
#include "training/learner_run.hpp"

namespace fedavg::training {

void Periods::round_complete(DispatcherRun&, comm::WindowTotals&, double&) {}

void Periods::dispatcher_done(DispatcherRun&) {}

// The Dispatcher's side of the periods, after its start: per learner, the states it still owes, its last report
// and whether it has stopped; and the round whose reports are being collected.
class Periods::DispatcherLoop {
 public:
  DispatcherLoop(Periods& strategy, DispatcherRun& run)
      : strategy_(strategy),
        run_(run),
        ctx_(run.ctx()),
        learners_(static_cast<std::size_t>(run.learners())),
        owed_(learners_, 0),
        last_report_(learners_, Clock::now()),
        stopped_(learners_, false),
        stopping_(begin_round()),
        running_(learners_),
        trained_(run.no_windows()),
        backoff_(ctx_.waits.prompt()) {}

  // Until every learner has its Stop: answers each report, and closes a round every `learners` reports. Then takes
  // the states still on their way. The pipelines' shard requests are answered before each sleep (the wait
  // policy's between_polls) and after each report, as a loop busy with reports may not sleep for long.
  void run() {
    while (running_ > 0) {
      check_liveness();
      const bool got_state = take_states();
      const auto a = ctx_.world.probe(comm::kAnySource, comm::Tag::PeriodDone);
      if (!a) {
        if (got_state) backoff_.reset();
        else backoff_.sleep();
        continue;
      }
      backoff_.reset();
      answer(*a);
      run_.serve_pipelines();
    }
    comm::poll_until(
        [&] {
          take_states();
          return all_states_in();
        },
        comm::Deadline::after(run_.settings().liveness_seconds), "the learners' final states");
  }

 private:
  using Clock = DispatcherRun::Clock;

  // Returns whether the job stops; if not, a round begins.
  bool begin_round() {
    const bool stopping = run_.should_stop();
    if (!stopping) ctx_.hooks.reached(run_.round() + 1);
    return stopping;
  }

  // Takes the states that have arrived; true if there was one.
  bool take_states() {
    bool any = false;
    for (std::size_t l = 0; l < learners_; ++l) {
      while (owed_[l] > 0) {
        auto a = ctx_.world.probe(run_.learner_ranks()[l], comm::Tag::LearnerState);
        if (!a) break;
        ctx_.world.receive(*a, run_.learner_state(l));
        --owed_[l];
        any = true;
      }
    }
    return any;
  }
  bool all_states_in() const {
    for (int o : owed_)
      if (o > 0) return false;
    return true;
  }

  // Other learners' reports keep the loop busy, so each learner's silence is watched on its own.
  void check_liveness() const {
    const double limit = run_.settings().liveness_seconds * comm::kSlowPeer;
    for (std::size_t l = 0; l < learners_; ++l)
      if (!stopped_[l] && DispatcherRun::seconds_since(last_report_[l]) >= limit) {
        const int rank = run_.learner_ranks()[l];
        comm::liveness_timeout(strategy_.report_name() + " from learner rank " + std::to_string(rank), limit);
      }
  }

  // Takes learner a.source's report and answers it: Stop once the round is over, else Train.
  void answer(const comm::Arrival& a) {
    const int rank = a.source;
    const auto l = static_cast<std::size_t>(ctx_.map.learner_index(rank));
    std::vector<double> period;
    ctx_.world.receive(a, period);
    strategy_.take_report(run_, rank);
    last_report_[l] = Clock::now();
    if (stopping_) {  // the round is over: the period is not applied, so the outputs are the evaluated weights
      run_.outbox().send(comm::Answer{comm::Control::Command::Stop, run_.round(), false}.encode(), rank,
                         comm::Tag::Answer);
      ++owed_[l];  // a stopped learner sends its state
      stopped_[l] = true;
      --running_;
      return;
    }
    const auto start = Clock::now();
    strategy_.apply_report(run_, rank);
    const bool send_state = run_.checkpoint_due(run_.round() + 1);
    run_.outbox().send(comm::Answer{comm::Control::Command::Train, run_.round() + 1, send_state}.encode(), rank,
                       comm::Tag::Answer);
    if (send_state) ++owed_[l];
    sync_seconds_ += DispatcherRun::seconds_since(start);
    trained_ += comm::WindowTotals::decode(period);
    if (++reports_ == learners_) end_round();
  }

  // A round's reports are in: evaluate, record, and begin the next round or stop.
  void end_round() {
    run_.next_round();
    take_states();
    strategy_.round_complete(run_, trained_, sync_seconds_);
    run_.end_round(trained_, sync_seconds_);
    reports_ = 0;
    trained_ = run_.no_windows();
    sync_seconds_ = 0.0;
    stopping_ = begin_round();
  }

  Periods& strategy_;
  DispatcherRun& run_;
  const Context& ctx_;
  const std::size_t learners_;
  std::vector<int> owed_;  // LearnerState messages still to come
  std::vector<Clock::time_point> last_report_;
  std::vector<bool> stopped_;
  bool stopping_;
  std::size_t running_;
  std::size_t reports_ = 0;
  comm::WindowTotals trained_;
  double sync_seconds_ = 0.0;
  comm::Backoff backoff_;
};

void Periods::dispatcher_rounds(DispatcherRun& run) {
  dispatcher_start(run);
  DispatcherLoop(*this, run).run();
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
