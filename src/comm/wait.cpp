#include "comm/wait.hpp"

#include <sstream>

#include "comm/error.hpp"

namespace fedavg::comm {

Deadline Deadline::after(double seconds) {
  return {Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds)), seconds};
}

void liveness_timeout(const std::string& what, double seconds, const std::string& why) {
  std::ostringstream os;
  os << "liveness limit: " << what << " did not happen within " << seconds
     << " s (liveness_seconds in cfg.json; 1.25x for a batch, 1.5x for a learner's round, 2x for a wait behind "
        "another)"
     << why;
  throw Timeout(os.str());
}

void IdleWatch::idle(const std::function<std::string()>& awaited, double factor, const std::vector<int>& peers) {
  if (!waiting_ || peers != peers_) {
    waiting_.reset();
    waiting_.emplace(peers.size() == 1 ? peers.front() : WaitChain::kAnyone);
    verdict_.reset();
    peers_ = peers;
  }
  const double limit = liveness_ * factor;
  const auto now = Clock::now();
  if (std::chrono::duration<double>(now - last_).count() >= limit && (!verdict_ || now >= extended_)) {
    if (!verdict_) verdict_.emplace(peers, limit);
    std::string why;
    const auto more = verdict_->at_deadline(why);
    if (!more) liveness_timeout(awaited(), limit, why);
    extended_ = *more;
  }
  backoff_.sleep();
}

Clock::time_point poll_until(const std::function<bool()>& done, const Deadline& deadline, const std::string& what,
                             const Pace& pace) {
  const WaitChain::Waiting waiting(deadline.peers.size() == 1 ? deadline.peers.front() : WaitChain::kAnyone,
                                   deadline.sending);
  std::optional<Verdict> verdict;  // once the deadline has passed
  Backoff backoff(pace);
  auto missed = Clock::now();
  auto at = deadline.at;
  while (!done()) {
    missed = Clock::now();
    if (missed >= at) {
      if (!verdict) verdict.emplace(deadline.peers, deadline.seconds, deadline.sending);
      std::string why;
      const auto more = verdict->at_deadline(why);
      if (!more) liveness_timeout(what, deadline.seconds, why);
      at = *more;
    }
    backoff.sleep();
  }
  return missed;
}

}  // namespace fedavg::comm
