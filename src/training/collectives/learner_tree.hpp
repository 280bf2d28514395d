// The tree along which learners sum what they send the Dispatcher, so it receives one message a round however
// many learners there are, and along which the Dispatcher's weights (or global delta) come back down. Ranks are
// the learner communicator's: the Dispatcher is 0 and the parent of the root, learner 1. Within a host the
// learners form a binary tree under the lowest of them (its i-th learner, counting from 1, has children 2i and
// 2i+1); those hosts' lowest learners form a binary tree of their own in the same way, so each host but the
// root's sends one copy up and receives one down. On one host this is learner r with children 2r and 2r+1.
#pragma once

#include <cstddef>
#include <vector>

#include "training/collectives/learner_hosts.hpp"

namespace fedavg::training {

class LearnerTree {
 public:
  // For a learner communicator of `size` members on `hosts` (learners_by_host).
  LearnerTree(const std::vector<int>& hosts, int size)
      : parent_(static_cast<std::size_t>(size), 0),
        children_(static_cast<std::size_t>(size)),
        local_(static_cast<std::size_t>(size)) {
    if (size > 1) children_[0].push_back(1);
    const auto groups = learners_by_host(hosts, size);
    const auto link = [&](int parent, int child) {
      parent_[static_cast<std::size_t>(child)] = parent;
      children_[static_cast<std::size_t>(parent)].push_back(child);
    };
    for (std::size_t g = 0; g < groups.size(); ++g) {
      for (std::size_t i = 2; i <= groups[g].size(); ++i) {
        link(groups[g][i / 2 - 1], groups[g][i - 1]);
        local_[static_cast<std::size_t>(groups[g][i / 2 - 1])].push_back(groups[g][i - 1]);
      }
      for (std::size_t h = 2 * (g + 1); h <= 2 * (g + 1) + 1 && h <= groups.size(); ++h)
        link(groups[g][0], groups[h - 1][0]);
    }
  }

  int parent(int rank) const { return parent_[static_cast<std::size_t>(rank)]; }
  // In the order their sums are added; the Dispatcher's is learner 1.
  const std::vector<int>& children(int rank) const { return children_[static_cast<std::size_t>(rank)]; }
  // The children on `rank`'s own host, the first of children(rank).
  const std::vector<int>& local_children(int rank) const { return local_[static_cast<std::size_t>(rank)]; }

 private:
  std::vector<int> parent_;
  std::vector<std::vector<int>> children_;
  std::vector<std::vector<int>> local_;
};

}  // namespace fedavg::training
