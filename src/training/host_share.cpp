#include "training/host_share.hpp"

#include <algorithm>

#include "training/learner_hosts.hpp"

namespace fedavg::training {

namespace {

// The learner-communicator ranks (from 1) of every host's learners, as learners_by_host.
std::vector<std::vector<int>> host_groups(const Context& ctx) {
  return learners_by_host(ctx.learner_hosts, ctx.learners.size());
}

}  // namespace

int HostShare::sharing(const Context& ctx) {
  if (!ctx.learners.valid() || ctx.learners.rank() <= 0) return 1;
  if (!wanted(ctx)) return 1;
  for (const auto& g : host_groups(ctx))
    if (std::find(g.begin(), g.end(), ctx.learners.rank()) != g.end()) return static_cast<int>(g.size());
  return 1;
}

bool HostShare::wanted(const Context& ctx) {
  if (!ctx.learners.valid()) return false;
  // One host id per learner (ctx.learner_hosts has the Dispatcher's first; empty: one host).
  std::vector<int> hosts(static_cast<std::size_t>(ctx.learners.size() - 1), 0);
  if (!ctx.learner_hosts.empty()) std::copy(ctx.learner_hosts.begin() + 1, ctx.learner_hosts.end(), hosts.begin());
  return core::shares_hosts(ctx.cfg.settings, hosts);
}

HostShare::HostShare(const Context& ctx, std::size_t params) : ctx_(ctx) {
  const int me = ctx.learners.rank();
  const auto groups = host_groups(ctx);
  int group = -1;
  bool leads = me == 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (std::find(groups[g].begin(), groups[g].end(), me) != groups[g].end()) {
      group = static_cast<int>(g);
      leads = groups[g][0] == me;
    }
    exchange_ranks_.push_back(ctx.map.learner_rank(groups[g][0] - 1));
  }
  // The leaders in the order of their ranks, as the exchange numbers them.
  std::sort(exchange_ranks_.begin(), exchange_ranks_.end());
  std::vector<int> leaders{0};
  for (const auto& g : groups) leaders.push_back(g[0]);
  std::sort(leaders.begin(), leaders.end());
  for (const int r : leaders)
    exchange_hosts_.push_back(ctx.learner_hosts.empty() ? 0 : ctx.learner_hosts[static_cast<std::size_t>(r)]);
  // Both splits are collective over every member of ctx.learners; a polled barrier first, so that no member
  // spins in them while another is still starting.
  ctx.learners.ibarrier().wait_until(deadline(), ctx.waits.collective());
  host_ = ctx.learners.split_groups(group, me);
  exchange_ = ctx.learners.split(leads, me);
  if (group >= 0) shared_ = std::make_unique<comm::SharedWeights>(host_, params, deadline());
  if (group >= 0 && leads) copy_.assign(params, 0.0f);
}

HostShare::~HostShare() = default;

comm::Deadline HostShare::deadline() const {
  return comm::Deadline::after(ctx_.cfg.settings.liveness_seconds * comm::kIndirect);
}

comm::WindowTotals HostShare::host_totals(const comm::WindowTotals& mine) const {
  const auto in = mine.encode();
  std::vector<double> sum(in.size());
  host_.iallreduce_sum(in.data(), sum.data(), in.size()).wait_until(deadline(), ctx_.waits.collective());
  return comm::WindowTotals::decode(sum);
}

void HostShare::barrier() const {
  shared_->sync();
  host_.ibarrier().wait_until(deadline(), ctx_.waits.collective());
  shared_->sync();
}

void HostShare::start() {
  if (leader()) std::copy(copy_.begin(), copy_.end(), weights());
  barrier();
}

comm::WindowTotals HostShare::trained(const comm::WindowTotals& mine) {
  const comm::WindowTotals host = host_totals(mine);
  barrier();  // every learner of the host is done writing
  if (leader()) std::copy(weights(), weights() + copy_.size(), copy_.begin());
  return host;
}

void HostShare::finish() {
  flushed();
  barrier();
}

void HostShare::flushed() {
  if (leader()) std::copy(copy_.begin(), copy_.end(), weights());
}

void HostShare::release() {
  if (shared_) shared_->release(deadline());
}

}  // namespace fedavg::training
