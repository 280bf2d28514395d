#include "training/collectives/topology.hpp"

#include <algorithm>

#include "training/collectives/learner_hosts.hpp"

namespace fedavg::training {

Topology::Topology(std::vector<int> hosts) : hosts_(std::move(hosts)) {}

Topology Topology::of_world(const std::vector<int>& world_hosts, const core::RankMap& map) {
  std::vector<int> world{core::RankMap::dispatcher()};
  for (int l = 0; l < map.learners(); ++l) world.push_back(map.learner_rank(l));
  std::vector<int> hosts;
  for (const int r : world) {
    const int host = world_hosts[static_cast<std::size_t>(r)];
    int lowest = 0;
    while (world_hosts[static_cast<std::size_t>(world[static_cast<std::size_t>(lowest)])] != host) ++lowest;
    hosts.push_back(lowest);
  }
  return Topology(std::move(hosts));
}

std::vector<int> Topology::learner_hosts() const {
  return hosts_.empty() ? std::vector<int>{} : std::vector<int>(hosts_.begin() + 1, hosts_.end());
}

bool Topology::one_host() const {
  return std::all_of(hosts_.begin(), hosts_.end(), [&](int h) { return h == hosts_[0]; });
}

std::vector<std::vector<int>> Topology::learners_by_host(int members) const {
  return training::learners_by_host(hosts_, members);
}

int Topology::learners_on_host(int rank, int members) const {
  if (rank <= 0) return 1;
  for (const auto& g : learners_by_host(members))
    if (std::find(g.begin(), g.end(), rank) != g.end()) return static_cast<int>(g.size());
  return 1;
}

bool Topology::some_host_has_several(int members) const {
  const auto groups = learners_by_host(members);
  return std::any_of(groups.begin(), groups.end(), [](const std::vector<int>& g) { return g.size() > 1; });
}

int Topology::local_rank(int rank) const {
  if (hosts_.empty()) return 0;
  const int host = hosts_[static_cast<std::size_t>(rank)];
  return static_cast<int>(std::count(hosts_.begin(), hosts_.begin() + rank, host));
}

}  // namespace fedavg::training
