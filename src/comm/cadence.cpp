#include "comm/cadence.hpp"

#include <algorithm>

namespace fedavg::comm {

Pace Cadence::pace(Pace base) const {
  if (recorded_ == 0) return base;
  const auto known = last_.begin() + static_cast<std::ptrdiff_t>(std::min(recorded_, kHistory));
  const Clock::duration shortest = *std::min_element(last_.begin(), known);
  base.quiet = std::chrono::duration_cast<Clock::duration>(shortest * kShare);
  return base;
}

void Cadence::record(Clock::duration waited) { last_[recorded_++ % kHistory] = waited; }

}  // namespace fedavg::comm
