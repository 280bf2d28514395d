#include "training/exchange/host_share.hpp"

#include <algorithm>
#include <string>

namespace fedavg::training {

HostShare::HostShare(const comm::Communicator& learners, const Topology& topology, const core::RankMap& map,
                     const comm::WaitPolicy& waits, double liveness_seconds, std::size_t params)
    : waits_(waits), liveness_(liveness_seconds) {
  const int me = learners.rank();
  const auto groups = topology.learners_by_host(learners.size());
  const std::vector<int>& hosts = topology.hosts();
  int group = -1;
  bool leads = me == 0;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    if (std::find(groups[g].begin(), groups[g].end(), me) != groups[g].end()) {
      group = static_cast<int>(g);
      leads = groups[g][0] == me;
    }
    exchange_ranks_.push_back(map.learner_rank(groups[g][0] - 1));
  }
  // The leaders in the order of their ranks, as the exchange numbers them.
  std::sort(exchange_ranks_.begin(), exchange_ranks_.end());
  std::vector<int> leaders{0};
  for (const auto& g : groups) leaders.push_back(g[0]);
  std::sort(leaders.begin(), leaders.end());
  for (const int r : leaders) exchange_hosts_.push_back(hosts.empty() ? 0 : hosts[static_cast<std::size_t>(r)]);
  // Both splits are collective over every member of `learners`; a polled barrier first, so that no member
  // spins in them while another is still starting.
  learners.ibarrier().wait_until(deadline(), waits_.collective());
  host_ = learners.split_groups(group, me);
  exchange_ = learners.split(leads, me);
  if (group < 0) return;
  shared_ = std::make_unique<comm::SharedWeights>(host_, params, deadline());
  comm::WindowTotals none;
  none.pipeline_windows.assign(static_cast<std::size_t>(map.pipelines()), 0.0);
  totals_ = std::make_unique<comm::SharedSlots>(host_, none.encode().size(), deadline());
}

HostShare::~HostShare() = default;

comm::Deadline HostShare::deadline() const { return comm::Deadline::after(liveness_ * comm::kIndirect); }

comm::WindowTotals HostShare::host_totals(const comm::WindowTotals& mine, long round) const {
  totals_->post(round, mine.encode());
  if (!leader()) return mine;
  comm::poll_until([&] { return totals_->all_posted(round); }, deadline(),
                   "the window totals of round " + std::to_string(round) + " from the " +
                       std::to_string(learners_here()) + " learners of this host",
                   waits_.collective());
  return comm::WindowTotals::decode(totals_->sum());
}

comm::WindowTotals HostShare::summed(const comm::WindowTotals& mine) const {
  const auto in = mine.encode();
  std::vector<double> sum(in.size());
  host_.iallreduce_sum(in.data(), sum.data(), in.size()).wait_until(deadline(), waits_.collective());
  return comm::WindowTotals::decode(sum);
}

void HostShare::barrier() const {
  shared_->sync();
  host_.ibarrier().wait_until(deadline(), waits_.collective());
  shared_->sync();
}

void HostShare::start() const { barrier(); }

comm::WindowTotals HostShare::trained(const comm::WindowTotals& mine) const {
  const comm::WindowTotals host = summed(mine);
  barrier();  // every learner of the host is done writing
  return host;
}

void HostShare::finish() const { barrier(); }

void HostShare::track_rows(const Layout& layout) {
  tables_ = layout;
  first_row_.clear();
  std::size_t rows = 0;
  for (const Table& t : layout) {
    first_row_.push_back(rows);
    rows += t.rows;
  }
  marks_ = std::make_unique<comm::SharedRowMarks>(host_, rows, deadline());
}

void HostShare::mark(const bridge::WrittenRows& rows) const {
  for (std::size_t t = 0; t < rows.size() && t < first_row_.size(); ++t) {
    if (!rows[t]) continue;
    check_written_rows(*rows[t], t, tables_[t]);
    marks_->mark(first_row_[t], *rows[t]);
  }
}

bridge::WrittenRows HostShare::take_written(const bridge::WrittenRows& rows) const {
  if (rows.empty()) return {};
  mark(rows);
  bridge::WrittenRows all(rows.size());
  for (std::size_t t = 0; t < rows.size() && t < first_row_.size(); ++t) {
    if (!rows[t]) continue;
    all[t].emplace();
    marks_->take(first_row_[t], tables_[t].rows, *all[t]);
  }
  return all;
}

void HostShare::release() {
  if (marks_) marks_->release(deadline());
  if (totals_) totals_->release(deadline());
  if (shared_) shared_->release(deadline());
}

}  // namespace fedavg::training
