// The learner tree, bsp's ring and the sparse exchange's relays follow hosts: on one host they are the plain
// binary tree by rank, a ring of every learner by rank and every owner sending to every member; across hosts each
// host but the root's has one edge up the tree, the ring holds one learner per host and crosses between hosts
// once per host each way, and an owner's message crosses into each other host once, whatever order MPI gave the
// ranks in.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "training/collectives/host_relay.hpp"
#include "training/collectives/learner_ring.hpp"
#include "training/collectives/learner_tree.hpp"

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

TEST(LearnerRing, HoldsEachHostsLowestLearnerInTheOrderOfTheHosts) {
  // Learners 1..9 on three hosts, whose lowest learners are 1, 2 and 4: the ring crosses once per host, and each
  // host's other learners sum to its lowest along the tree's edges on that host.
  const std::vector<int> hosts{0, 7, 8, 7, 9, 8, 9, 7, 8, 9};
  const LearnerRing ring(hosts, 10);
  EXPECT_EQ(ring.learners(), 3);
  EXPECT_EQ(ring.next(1), 2);
  EXPECT_EQ(ring.next(2), 4);
  EXPECT_EQ(ring.next(4), 1);
  EXPECT_EQ(ring.previous(1), 4);
  for (int r = 0; r < 10; ++r) EXPECT_EQ(ring.holds(r), r == 1 || r == 2 || r == 4) << "rank " << r;
  const LearnerTree tree(hosts, 10);
  for (int r = 1; r < 10; ++r) {
    for (const int c : tree.local_children(r)) {
      EXPECT_EQ(hosts[c], hosts[r]) << r << " -> " << c;
      EXPECT_EQ(tree.parent(c), r);
    }
    // Up the local edges every learner reaches the ring.
    int up = r;
    while (!ring.holds(up)) up = tree.parent(up);
    EXPECT_EQ(hosts[up], hosts[r]) << "rank " << r;
  }
  EXPECT_EQ(tree.local_children(1), (std::vector<int>{3, 7}));
  EXPECT_EQ(tree.children(1), (std::vector<int>{3, 7, 2, 4}));
  // On one host the ring holds every learner, by rank.
  const LearnerRing one({}, 6);
  EXPECT_EQ(one.learners(), 5);
  EXPECT_EQ(one.next(1), 2);
  EXPECT_EQ(one.next(5), 1);
  EXPECT_EQ(LearnerTree({}, 6).local_children(1), (std::vector<int>{2, 3}));
}

TEST(LearnerRing, EverySegmentIsCompletedByOneMemberWhoseSuccessorsReceiveIt) {
  for (const auto& hosts :
       {std::vector<int>{}, std::vector<int>{0, 1, 2, 1, 2, 1}, std::vector<int>{0, 5, 4, 3, 2, 1}}) {
    const LearnerRing ring(hosts, 6);
    const int l = ring.learners();
    std::set<int> completed;
    for (int r = 1; r <= 5; ++r) {
      if (!ring.holds(r)) continue;
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

namespace {

// Delivers every owner's message as `relay` routes it: each member but the owner must receive it once, straight
// or through its host's relay, as direct_from and relayed_to say; returns the hops that cross between hosts.
int deliver(const HostRelay& relay, const std::vector<int>& hosts) {
  const int size = static_cast<int>(hosts.size());
  std::vector<int> direct(static_cast<std::size_t>(size)), relayed(static_cast<std::size_t>(size));
  int crossings = 0;
  for (int owner = 1; owner < size; ++owner) {
    std::vector<int> got(static_cast<std::size_t>(size));
    for (const int t : relay.targets(owner)) {
      ++got[static_cast<std::size_t>(t)];
      ++direct[static_cast<std::size_t>(t)];
      crossings += hosts[t] != hosts[owner];
      if (hosts[t] == hosts[owner]) continue;
      for (const int p : relay.passes_to(t)) {
        ++got[static_cast<std::size_t>(p)];
        ++relayed[static_cast<std::size_t>(p)];
        EXPECT_EQ(hosts[p], hosts[t]) << "relay " << t << " passes to " << p << " on another host";
      }
    }
    for (int r = 0; r < size; ++r) EXPECT_EQ(got[r], r == owner ? 0 : 1) << "owner " << owner << ", rank " << r;
  }
  for (int r = 0; r < size; ++r) {
    EXPECT_EQ(direct[r], static_cast<int>(relay.direct_from(r).size())) << "rank " << r;
    EXPECT_EQ(relayed[r], relay.relayed_to(r)) << "rank " << r;
  }
  return crossings;
}

}  // namespace

TEST(HostRelay, OnOneHostEveryOwnerSendsToEveryMember) {
  const HostRelay relay({}, 5);
  EXPECT_EQ(relay.targets(2), (std::vector<int>{0, 1, 3, 4}));
  EXPECT_EQ(relay.direct_from(0), (std::vector<int>{1, 2, 3, 4}));
  for (int r = 0; r < 5; ++r) {
    EXPECT_EQ(relay.relayed_to(r), 0);
    EXPECT_TRUE(relay.passes_to(r).empty() || r == 1);
  }
  EXPECT_EQ(deliver(relay, std::vector<int>(5, 0)), 0);
}

TEST(HostRelay, AnOwnersMessageCrossesIntoEachOtherHostOnce) {
  // The Dispatcher alone on a host (9); learners 1 3 5 7 on host 1, 2 4 6 8 on host 0: 8 owners, 2 other hosts
  // each. Sent to every member, each message would cross 6 times.
  const std::vector<int> apart{9, 1, 0, 1, 0, 1, 0, 1, 0};
  const HostRelay a(apart, 9);
  EXPECT_EQ(a.relay(0), 0);
  EXPECT_EQ(a.relay(5), 1);
  EXPECT_EQ(a.relay(6), 2);
  EXPECT_EQ(a.targets(3), (std::vector<int>{1, 5, 7, 0, 2}));
  EXPECT_EQ(a.passes_to(2), (std::vector<int>{4, 6, 8}));
  EXPECT_EQ(a.relayed_to(4), 4);
  EXPECT_EQ(deliver(a, apart), 8 * 2);
  // The Dispatcher on host 0 with learners 2 and 4, whose relay, learner 2, passes the others on to it too.
  const std::vector<int> shared{0, 1, 0, 1, 0, 1};
  const HostRelay b(shared, 6);
  EXPECT_EQ(b.relay(0), 2);
  EXPECT_EQ(b.passes_to(2), (std::vector<int>{0, 4}));
  EXPECT_EQ(b.direct_from(0), (std::vector<int>{2, 4}));
  EXPECT_EQ(b.relayed_to(0), 3);
  EXPECT_EQ(deliver(b, shared), 5);
  // Every learner on a host of its own.
  const std::vector<int> each{5, 4, 3, 2, 1};
  EXPECT_EQ(deliver(HostRelay(each, 5), each), 4 * 4);
}
