#include "comm/cadence.hpp"

#include <algorithm>

namespace fedavg::comm {

Pace Cadence::pace(Pace base) const {
  if (seen_ < kHistory + 1) return base;
  const Clock::duration shortest = *std::min_element(last_.begin(), last_.end());
  base.quiet = std::chrono::duration_cast<Clock::duration>(shortest * kShare);
  return base;
}

void Cadence::record(Clock::time_point start, Clock::time_point missed) {
  if (seen_++ == 0) return;
  last_[seen_ % kHistory] = missed - start;
}

}  // namespace fedavg::comm
