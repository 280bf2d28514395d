#include "training/dispatcher_control.hpp"

#include <cstdint>
#include <string>

#include "core/error.hpp"

namespace fedavg::training {

void DispatcherControl::send(const comm::Control& c) {
  auto wire = c.encode();
  learners_.ibcast(wire.data(), wire.size(), 0).wait_until(comm::Deadline::after(liveness_), waits_.collective());
}

bool DispatcherControl::take_reports(std::set<int>& missing, comm::Tag tag, long round) const {
  bool progress = false;
  for (auto it = missing.begin(); it != missing.end();) {
    if (auto a = world_.probe(*it, tag)) {
      std::int64_t got = -1;
      world_.receive_into(*a, &got, 1);
      if (got != round)
        throw core::Error("learner rank " + std::to_string(*it) + " reported round " + std::to_string(got) +
                          " during round " + std::to_string(round));
      it = missing.erase(it);
      progress = true;
    } else {
      ++it;
    }
  }
  return progress;
}

void DispatcherControl::await_reports(comm::Tag tag, long round, double factor,
                                      const std::function<void(const std::set<int>&)>& first_in) {
  std::set<int> missing(learner_ranks_.begin(), learner_ranks_.end());
  bool first = true;
  const bool training = tag == comm::Tag::RoundDone;
  const auto start = comm::Clock::now();
  auto missed = start;  // when a pass last found no report
  comm::IdleWatch watch(liveness_, training ? waits_.recurring(training_wait_, waits_.prompt()) : waits_.prompt());
  while (!missing.empty()) {
    if (take_reports(missing, tag, round)) {
      if (first && training) training_wait_.record(start, missed);
      if (first && first_in && !missing.empty()) first_in(missing);
      first = false;
      watch.progress();
      continue;
    }
    missed = comm::Clock::now();
    watch.idle(
        [&] {
          std::string who;
          for (int m : missing) who += (who.empty() ? "" : ", ") + std::to_string(m);
          return std::string(tag == comm::Tag::Ready ? "the start" : "the end") + " of round " + std::to_string(round) +
                 " on learner rank(s) " + who;
        },
        factor, std::vector<int>(missing.begin(), missing.end()));
  }
}

}  // namespace fedavg::training
