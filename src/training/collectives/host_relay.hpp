// How the sparse exchange's owners reach every member with the global change of their rows
// (sparse_exchange.hpp) so that each owner's message crosses into each other host once: an owner sends it
// straight to the members of its own host and to one relay on every other host, which passes it on to the
// members of its host. A host's relay is its lowest learner; a host where only the Dispatcher runs is its own
// relay and passes nothing on. Ranks are the learner communicator's: the Dispatcher is 0 and owns no rows. On one
// host every owner sends straight to every member and nothing is relayed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

#include "training/collectives/learner_hosts.hpp"

namespace fedavg::training {

class HostRelay {
 public:
  // For a learner communicator of `size` members on `hosts` (`hosts[r]`: rank r's host, any ids,
  // comm::Communicator::hosts; empty: one host).
  HostRelay(const std::vector<int>& hosts, int size)
      : groups_(ranks_by_host(hosts, 0, size)),
        group_(static_cast<std::size_t>(size)),
        relay_(static_cast<std::size_t>(size)) {
    for (std::size_t g = 0; g < groups_.size(); ++g)
      for (const int r : groups_[g]) group_[static_cast<std::size_t>(r)] = g;
    for (const auto& g : groups_) {
      // Ascending: the lowest learner is the first rank above 0, or the Dispatcher when it is alone.
      const int relay = g.size() > 1 && g[0] == 0 ? g[1] : g[0];
      for (const int r : g) relay_[static_cast<std::size_t>(r)] = relay;
    }
  }

  // The relay of `rank`'s host.
  int relay(int rank) const { return relay_[static_cast<std::size_t>(rank)]; }
  // Where owner `rank` sends its message: every other member of its host, then every other host's relay.
  std::vector<int> targets(int rank) const {
    std::vector<int> out;
    for (const int r : host_of(rank))
      if (r != rank) out.push_back(r);
    for (const auto& g : groups_)
      if (&g != &host_of(rank)) out.push_back(relay(g[0]));
    return out;
  }
  // The owners (learners, ranks from 1) whose messages `rank` receives straight from them: those of its host and,
  // if it is a relay, every other owner.
  std::vector<int> direct_from(int rank) const {
    std::vector<int> out;
    const bool relays = relay(rank) == rank;
    for (int r = 1; r < static_cast<int>(relay_.size()); ++r)
      if (r != rank && (relays || same_host(r, rank))) out.push_back(r);
    return out;
  }
  // How many owners' messages `rank` receives through its host's relay: those of the other hosts, unless it is
  // the relay.
  int relayed_to(int rank) const {
    if (relay(rank) == rank) return 0;
    const auto& mine = host_of(rank);
    const auto owners_here = std::count_if(mine.begin(), mine.end(), [](int r) { return r > 0; });
    return static_cast<int>(relay_.size()) - 1 - static_cast<int>(owners_here);
  }
  // Relay `rank`: the members of its host it passes the other hosts' messages on to (empty for any other rank).
  std::vector<int> passes_to(int rank) const {
    std::vector<int> out;
    if (relay(rank) != rank) return out;
    for (const int r : host_of(rank))
      if (r != rank) out.push_back(r);
    return out;
  }
  bool same_host(int a, int b) const {
    return group_[static_cast<std::size_t>(a)] == group_[static_cast<std::size_t>(b)];
  }

 private:
  const std::vector<int>& host_of(int rank) const { return groups_[group_[static_cast<std::size_t>(rank)]]; }

  std::vector<std::vector<int>> groups_;  // members by host, each ascending, in the order of their lowest rank
  std::vector<std::size_t> group_;        // by rank: its index in groups_
  std::vector<int> relay_;                // by rank: its host's relay
};

}  // namespace fedavg::training
