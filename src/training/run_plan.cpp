#include "training/run_plan.hpp"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

namespace fedavg::training {

namespace {

// The most learners on one host, and how many hosts have learners.
std::pair<int, int> host_counts(const std::vector<int>& hosts) {
  std::map<int, int> per_host;
  for (const int h : hosts) ++per_host[h];
  int most = 0;
  for (const auto& [host, n] : per_host) most = std::max(most, n);
  return {most, static_cast<int>(per_host.size())};
}

}  // namespace

RunPlan RunPlan::of(const core::Settings& s, const Topology& topology, const GivenSettings& given,
                    const StrategyTraits& traits, int pipelines) {
  const std::vector<int> hosts = topology.learner_hosts();
  const auto [most, host_count] = host_counts(hosts);
  RunPlan plan;
  plan.shares_hosts = s.share_host && traits.lock_step && most > 1;
  const int members = plan.shares_hosts ? host_count : static_cast<int>(hosts.size());
  plan.link_sized_rounds = plan.shares_hosts && host_count > 1 && s.exchange_share > 0;
  plan.combine = plan.link_sized_rounds && !given.combine ? core::Combine::Average : s.combine;
  const bool adds = traits.adds && plan.combine == core::Combine::Add && members > 1;
  plan.hosts_add = adds && plan.shares_hosts && !plan.link_sized_rounds;
  const bool one_host = plan.shares_hosts && host_count == 1 && pipelines == 1;
  plan.overlap = traits.trains_through && (plan.link_sized_rounds || plan.hosts_add || one_host) &&
                 (given.overlap || plan.link_sized_rounds ? s.overlap : !s.fixed_batch_order);
  const int bpe = adds && s.add_bpe > 0 ? s.add_bpe : s.bpe;
  plan.learner_bpe = plan.hosts_add && !given.add_bpe ? std::max(1, kHostsBatchesPerLearner / host_count)
                     : plan.shares_hosts              ? (bpe + most - 1) / most
                                                      : bpe;
  plan.sparse_rows = plan.hosts_add && !given.sparse_rows ? kHostSparseRows : s.sparse_rows;
  plan.sparse_values = plan.hosts_add && !given.sparse_values ? kHostSparseValues : s.sparse_values;
  plan.add_power = given.add_power ? s.add_power : plan.shares_hosts ? kHostAddPower : core::Settings{}.add_power;
  plan.cpu_only = traits.host_memory;
  return plan;
}

}  // namespace fedavg::training
