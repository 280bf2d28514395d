// The learners grouped by the host they run on, which the learner tree and the learner ring follow so that their
// edges cross between hosts as few times as they can: within a host the members share memory, between hosts
// every copy of the weights crosses the network.
#pragma once

#include <algorithm>
#include <iterator>
#include <vector>

namespace fedavg::training {

// The ranks first..size-1 of the learner communicator grouped by host (`hosts[r]`: rank r's host, any ids,
// comm::Communicator::hosts), each group ascending, the groups in the order of their lowest rank. An empty
// `hosts` means one host.
inline std::vector<std::vector<int>> ranks_by_host(const std::vector<int>& hosts, int first, int size) {
  std::vector<int> ids;
  std::vector<std::vector<int>> groups;
  for (int r = first; r < size; ++r) {
    const int id = hosts.empty() ? 0 : hosts[static_cast<std::size_t>(r)];
    const auto at = static_cast<std::size_t>(std::distance(ids.begin(), std::find(ids.begin(), ids.end(), id)));
    if (at == ids.size()) {
      ids.push_back(id);
      groups.emplace_back();
    }
    groups[at].push_back(r);
  }
  return groups;
}

// The learners (ranks 1..size-1; rank 0, the Dispatcher, is left out) grouped by host, as ranks_by_host.
inline std::vector<std::vector<int>> learners_by_host(const std::vector<int>& hosts, int size) {
  return ranks_by_host(hosts, 1, size);
}

}  // namespace fedavg::training
