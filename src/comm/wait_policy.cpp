#include "comm/wait_policy.hpp"

#include <sched.h>

#include <algorithm>
#include <thread>

#include "comm/wait_chain.hpp"

namespace fedavg::comm {
namespace {

constexpr std::chrono::microseconds kCollectiveFast{5000};
constexpr int kStagePatience = 2;

}  // namespace

Clock::duration Cadence::forecast() const {
  if (seen_ < kHistory + 1) return Clock::duration{0};
  const Clock::duration shortest = *std::min_element(last_.begin(), last_.end());
  return std::chrono::duration_cast<Clock::duration>(shortest * kShare);
}

void Cadence::record(Clock::time_point start, Clock::time_point missed) {
  if (seen_++ == 0) return;
  last_[seen_ % kHistory] = missed - start;
}

WaitPolicy WaitPolicy::choose(core::WaitProfile requested, int ranks_on_node, int cores) {
  switch (requested) {
    case core::WaitProfile::Plain: return WaitPolicy(Profile::Plain);
    case core::WaitProfile::Oversubscribed: return WaitPolicy(Profile::Oversubscribed);
    case core::WaitProfile::Auto: break;
  }
  return WaitPolicy(ranks_on_node > cores ? Profile::Oversubscribed : Profile::Plain);
}

int WaitPolicy::usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

Pace WaitPolicy::collective() const {
  Pace p = prompt();
  p.fast = kCollectiveFast;
  return p;
}

Pace WaitPolicy::stage() const {
  Pace p = prompt();
  if (profile_ == Profile::Oversubscribed) p.patience = kStagePatience;
  return p;
}

Pace WaitPolicy::recurring(const Cadence& c, Pace base) const {
  if (profile_ == Profile::Oversubscribed) base.quiet = c.forecast();
  return base;
}

void Backoff::sleep() {
  if (auto* chain = WaitChain::active()) chain->serve();
  if (pace_.between_polls != nullptr && *pace_.between_polls) (*pace_.between_polls)();
  const auto waited = Clock::now() - start_;
  if (waited < pace_.quiet) {
    std::this_thread::sleep_for(std::min<Clock::duration>(pace_.quiet - waited, pace_.long_max));
    return;
  }
  std::this_thread::sleep_for(delay_);
  if (waited - pace_.quiet < pace_.fast) return;
  auto cap = pace_.max;
  if (pace_.patience > 0)
    cap = std::clamp(std::chrono::duration_cast<std::chrono::microseconds>(waited / pace_.patience), pace_.max,
                     pace_.long_max);
  delay_ = std::min(delay_ * 2, cap);
}

}  // namespace fedavg::comm
