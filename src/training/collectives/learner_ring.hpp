// The ring along which bsp's learners sum their weights with no root (RoundSync::allreduce_in_place): the
// weights are cut into one segment per member, each segment's sum gathers along the ring and is then passed round
// it. Ranks are the learner communicator's. On one host the ring holds every learner, 1..L, so each sends the
// same share. Across hosts each host's learners first sum on their host, to its lowest learner, and the ring
// holds those lowest learners (learners_by_host), in the order of the hosts, so it crosses between hosts once per
// host each way and carries as much however many learners a host holds. The Dispatcher (0) is not in it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "training/collectives/learner_hosts.hpp"

namespace fedavg::training {

class LearnerRing {
 public:
  // For a learner communicator of `size` members on `hosts` (learners_by_host).
  LearnerRing(const std::vector<int>& hosts, int size) : position_(static_cast<std::size_t>(size), -1) {
    const auto groups = learners_by_host(hosts, size);
    if (groups.size() == 1) {
      order_ = groups.front();
    } else {
      for (const auto& group : groups) order_.push_back(group.front());
    }
    for (std::size_t p = 0; p < order_.size(); ++p)
      position_[static_cast<std::size_t>(order_[p])] = static_cast<int>(p);
  }

  // The members of the ring (every learner on one host, else one per host).
  int learners() const { return static_cast<int>(order_.size()); }
  bool holds(int rank) const { return position(rank) >= 0; }
  // The learner after (and before) learner `rank`.
  int next(int rank) const { return at(position(rank) + 1); }
  int previous(int rank) const { return at(position(rank) - 1); }
  // The segment learner `rank` receives at step `k` (0..L-2) of the reduce-scatter (and sends on at step k + 1;
  // at "step -1" it sends its own); at step L - 2 it completes the sum of that segment, completed(rank). At step
  // `k` of the allgather it receives segment(rank, k + L - 1), passed on from the learner that completed it.
  int segment(int rank, int k) const { return wrap(position(rank) - 1 - k); }
  int completed(int rank) const { return segment(rank, learners() - 2); }
  // The learner that completes segment `s`.
  int completer(int s) const { return at(s - 1); }

  // Segment `s` (0..L-1) of `n` elements: [segment_begin(s), segment_begin(s + 1)).
  std::size_t segment_begin(int s, std::size_t n) const {
    const auto l = static_cast<std::size_t>(learners());
    return n / l * static_cast<std::size_t>(s) + std::min(n % l, static_cast<std::size_t>(s));
  }

 private:
  int position(int rank) const { return position_[static_cast<std::size_t>(rank)]; }
  int wrap(int p) const { return (p % learners() + learners()) % learners(); }
  int at(int p) const { return order_[static_cast<std::size_t>(wrap(p))]; }
  std::vector<int> order_;     // the members' ranks in ring order
  std::vector<int> position_;  // by rank: its place in order_ (-1: not in the ring)
};

}  // namespace fedavg::training
