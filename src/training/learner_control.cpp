#include "training/learner_control.hpp"

#include <cstdint>
#include <vector>

#include "comm/request.hpp"
#include "comm/wait.hpp"

namespace fedavg::training {

comm::Control LearnerControl::next(const std::function<bool()>& work) {
  auto wire = comm::Control{}.encode();
  comm::Request control = learners_.ibcast(wire.data(), wire.size(), 0);
  while (work && !control.test() && work()) {
  }
  if (control.pending()) {
    const auto start = comm::Clock::now();
    const auto missed = control.wait_until(comm::Deadline::after(liveness_ * comm::kNextRound),
                                           waits_.recurring(control_wait_, waits_.collective()));
    control_wait_.record(start, missed);
  }
  return comm::Control::decode(wire);
}

void LearnerControl::report(comm::Tag tag, long round) {
  reports_.retire();
  reports_.send(std::vector<std::int64_t>{round}, 0, tag);
}

void LearnerControl::complete_reports() { reports_.flush(comm::Deadline::after(liveness_)); }

}  // namespace fedavg::training
