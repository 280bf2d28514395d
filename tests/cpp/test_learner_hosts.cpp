// The learner tree and ring follow hosts: on one host they are the plain binary tree by rank and the ring by
// rank; across hosts each host but the root's has one edge up the tree, and the ring crosses between hosts once
// per host each way, whatever order MPI gave the ranks in.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "training/learner_ring.hpp"
#include "training/learner_tree.hpp"

using namespace fedavg::training;

namespace {

// Edges of `tree` whose ends are on different hosts (the Dispatcher's edge left out).
int crossings(const LearnerTree& tree, const std::vector<int>& hosts) {
  int n = 0;
  for (int r = 2; r < static_cast<int>(hosts.size()); ++r) n += hosts[r] != hosts[tree.parent(r)];
  return n;
}

// Every learner reaches the Dispatcher by parents, and is its parent's child exactly once.
void expect_one_tree(const LearnerTree& tree, int size) {
  EXPECT_EQ(tree.children(0), std::vector<int>{1});
  EXPECT_EQ(tree.parent(1), 0);
  std::multiset<int> seen;
  for (int r = 0; r < size; ++r)
    for (int c : tree.children(r)) {
      EXPECT_EQ(tree.parent(c), r);
      seen.insert(c);
    }
  for (int r = 1; r < size; ++r) {
    EXPECT_EQ(seen.count(r), 1u) << "rank " << r;
    int up = r, steps = 0;
    while (up != 0 && steps++ < size) up = tree.parent(up);
    EXPECT_EQ(up, 0) << "rank " << r;
  }
}

}  // namespace

TEST(LearnerHosts, GroupsLearnersByHostInTheOrderOfTheirLowestRank) {
  EXPECT_EQ(learners_by_host({7, 3, 5, 3, 5}, 5), (std::vector<std::vector<int>>{{1, 3}, {2, 4}}));
  EXPECT_EQ(learners_by_host({}, 4), (std::vector<std::vector<int>>{{1, 2, 3}}));
}

TEST(LearnerTree, OnOneHostLearnerRHasChildren2RAnd2RPlus1) {
  const LearnerTree tree({}, 8);
  expect_one_tree(tree, 8);
  EXPECT_EQ(tree.children(1), (std::vector<int>{2, 3}));
  EXPECT_EQ(tree.children(2), (std::vector<int>{4, 5}));
  EXPECT_EQ(tree.children(3), (std::vector<int>{6, 7}));
  EXPECT_EQ(tree.parent(7), 3);
  EXPECT_TRUE(tree.children(4).empty());
}

TEST(LearnerTree, EachHostButTheRootsSendsOneCopyUp) {
  // The Dispatcher on host 0; four hosts of four learners, ranks in order, then the same hosts round-robin.
  std::vector<int> in_order{0}, round_robin{0};
  for (int r = 0; r < 16; ++r) {
    in_order.push_back(1 + r / 4);
    round_robin.push_back(1 + r % 4);
  }
  for (const auto& hosts : {in_order, round_robin}) {
    const LearnerTree tree(hosts, 17);
    expect_one_tree(tree, 17);
    EXPECT_EQ(crossings(tree, hosts), 3);
  }
  // By rank alone the in-order layout would cross 12 times (2 -> 5, 3 -> 6, 3 -> 7, 4 -> 8, ...).
  const LearnerTree by_rank({}, 17);
  EXPECT_EQ(crossings(by_rank, in_order), 12);
  // A host's lowest learner takes the other hosts' lowest learners as children after its own.
  const LearnerTree tree(in_order, 17);
  EXPECT_EQ(tree.children(1), (std::vector<int>{2, 3, 5, 9}));
  EXPECT_EQ(tree.children(5), (std::vector<int>{6, 7, 13}));
  EXPECT_EQ(tree.parent(13), 5);
}

TEST(LearnerRing, CrossesBetweenHostsOncePerHost) {
  const std::vector<int> hosts{0, 1, 2, 1, 2, 1, 2};  // learners alternate between two hosts
  const LearnerRing ring(hosts, 7);
  EXPECT_EQ(ring.learners(), 6);
  int crossings = 0, r = 1;
  std::set<int> visited;
  for (int k = 0; k < 6; ++k) {
    visited.insert(r);
    EXPECT_EQ(ring.previous(ring.next(r)), r);
    crossings += hosts[r] != hosts[ring.next(r)];
    r = ring.next(r);
  }
  EXPECT_EQ(r, 1);
  EXPECT_EQ(visited.size(), 6u);
  EXPECT_EQ(crossings, 2);
  EXPECT_EQ(ring.next(1), 3);
  EXPECT_EQ(ring.next(5), 2);
  EXPECT_EQ(ring.next(6), 1);
}

TEST(LearnerRing, EverySegmentIsCompletedByOneLearnerWhoseSuccessorsReceiveIt) {
  for (const auto& hosts : {std::vector<int>{}, std::vector<int>{0, 1, 2, 1, 2, 1}}) {
    const LearnerRing ring(hosts, 6);
    const int l = ring.learners();
    std::set<int> completed;
    for (int r = 1; r <= l; ++r) {
      const int s = ring.completed(r);
      EXPECT_EQ(ring.completer(s), r);
      completed.insert(s);
      // Reduce-scatter: what r receives at step k its predecessor sent on at step k - 1 (its own at step -1).
      for (int k = 0; k + 1 < l; ++k) EXPECT_EQ(ring.segment(r, k), ring.segment(ring.previous(r), k - 1));
      // Allgather: r first receives the segment its predecessor completed.
      EXPECT_EQ(ring.segment(r, l - 1), ring.completed(ring.previous(r)));
    }
    EXPECT_EQ(completed.size(), static_cast<std::size_t>(l));
    EXPECT_EQ(ring.segment_begin(0, 17), 0u);
    EXPECT_EQ(ring.segment_begin(l, 17), 17u);
  }
}
