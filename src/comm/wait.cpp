#include "comm/wait.hpp"

#include <sstream>

#include "comm/error.hpp"

namespace fedavg::comm {

Deadline Deadline::after(double seconds) {
  return {Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)), seconds};
}

void liveness_timeout(const std::string& what, double seconds) {
  std::ostringstream os;
  os << "liveness limit: " << what << " did not happen within " << seconds
     << " s (liveness_seconds in cfg.json; 1.25x for a batch, 1.5x for a learner's round, 2x for a wait behind "
        "another)";
  throw Timeout(os.str());
}

void IdleWatch::idle(const std::function<std::string()>& awaited, double factor) {
  const double limit = liveness_ * factor;
  if (std::chrono::duration<double>(Clock::now() - last_).count() >= limit) liveness_timeout(awaited(), limit);
  backoff_.sleep();
}

Clock::time_point poll_until(const std::function<bool()>& done, const Deadline& deadline, const std::string& what,
                             const Pace& pace) {
  Backoff backoff(pace);
  auto missed = Clock::now();
  while (!done()) {
    missed = Clock::now();
    if (deadline.passed()) liveness_timeout(what, deadline.seconds);
    backoff.sleep();
  }
  return missed;
}

}  // namespace fedavg::comm
