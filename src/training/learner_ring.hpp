// The ring along which bsp's learners sum their weights with no root (RoundSync::allreduce_in_place): the
// weights are cut into one segment per learner, each segment's sum gathers along the ring and is then passed
// round it. Ranks are the learner communicator's: learners 1..L, in a ring 1 -> 2 -> ... -> L -> 1; the
// Dispatcher (0) is not in it.
#pragma once

#include <algorithm>
#include <cstddef>

namespace fedavg::training {

// The learner after (and before) learner `rank` in a ring of `learners`.
inline int ring_next(int rank, int learners) { return rank % learners + 1; }
inline int ring_previous(int rank, int learners) { return (rank + learners - 2) % learners + 1; }

// Segment `s` (0..learners-1) of `n` elements: [ring_segment_begin(s), ring_segment_begin(s + 1)).
inline std::size_t ring_segment_begin(int s, std::size_t n, int learners) {
  return n / static_cast<std::size_t>(learners) * static_cast<std::size_t>(s) +
         std::min(n % static_cast<std::size_t>(learners), static_cast<std::size_t>(s));
}

// The segment learner `rank` receives at step `k` (0..L-2) of the reduce-scatter (and sends on at step k + 1);
// at step L - 2 it completes the sum of that segment, ring_completed(rank). At step `k` of the allgather it
// receives ring_segment(rank, k + L - 1, L), passed on from the learner that completed it.
inline int ring_segment(int rank, int k, int learners) {
  return ((rank - 2 - k) % learners + learners) % learners;
}
inline int ring_completed(int rank, int learners) { return ring_segment(rank, learners - 2, learners); }

}  // namespace fedavg::training
