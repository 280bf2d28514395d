// Where the Dispatcher and the learners run, made once per job (main.cpp): the host of each member of the learner
// communicator (the Dispatcher at rank 0, learner i at rank i + 1), the learners grouped by host, and each host's
// leader, its lowest learner. The learner tree, the ring, the relays and the host share follow it.
#pragma once

#include <vector>

#include "core/rank_map.hpp"

namespace fedavg::training {

class Topology {
 public:
  // One host.
  Topology() = default;
  // `hosts`: the host of each rank of the learner communicator, any ids (comm::Communicator::hosts); empty: one
  // host.
  explicit Topology(std::vector<int> hosts);
  // From the host of every world rank (comm::Communicator::hosts of the world) and where the Dispatcher and the
  // learners are (`map`), with the ids the learner communicator's hosts() gives: each member's host is the rank
  // of the lowest member on it.
  static Topology of_world(const std::vector<int>& world_hosts, const core::RankMap& map);

  // The host of each rank (empty: one host), as the learner tree and ring take it.
  const std::vector<int>& hosts() const { return hosts_; }
  // The host of each learner, by learner index (empty: one host).
  std::vector<int> learner_hosts() const;
  // Every member on one host.
  bool one_host() const;
  // The learners' ranks (from 1) grouped by host, each group ascending, in the order of their lowest rank (for a
  // learner communicator of `members` ranks, learners_by_host); its first is the host's leader.
  std::vector<std::vector<int>> learners_by_host(int members) const;
  // The learners on the host of rank `rank` (the Dispatcher, 0: 1), of `members` ranks.
  int learners_on_host(int rank, int members) const;
  // Whether some host runs several of the `members` - 1 learners.
  bool some_host_has_several(int members) const;
  // Rank `rank`'s place among the members on its host, counted from 0.
  int local_rank(int rank) const;

 private:
  std::vector<int> hosts_;
};

}  // namespace fedavg::training
