// Learners that run on one host share one copy of the weights (share_host, docs/strategies.md#learners-on-one-host-
// share-their-weights): every learner of the host trains it in place, Hogwild-style, and only the host's lowest
// learner, its leader, takes part in the lock-step strategy's exchange, for the whole host. The exchange thus runs
// over a smaller learner communicator: the Dispatcher (rank 0) and one leader per host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "bridge/written_rows.hpp"
#include "comm/communicator.hpp"
#include "comm/messages.hpp"
#include "comm/shared_row_marks.hpp"
#include "comm/shared_slots.hpp"
#include "comm/shared_weights.hpp"
#include "comm/wait_policy.hpp"
#include "core/floats.hpp"
#include "core/rank_map.hpp"
#include "training/collectives/topology.hpp"
#include "training/exchange/sparse_delta.hpp"

namespace fedavg::training {

class HostShare {
 public:
  // Collective over `learners` (the Dispatcher, rank 0, and the learners, on `topology`; `map` names their world
  // ranks). A learner maps its host's shared copy of `params` floats. Its collectives wait as `waits` says, up to
  // `liveness_seconds` times comm::kIndirect.
  HostShare(const comm::Communicator& learners, const Topology& topology, const core::RankMap& map,
            const comm::WaitPolicy& waits, double liveness_seconds, std::size_t params);
  HostShare(const HostShare&) = delete;
  HostShare& operator=(const HostShare&) = delete;
  ~HostShare();

  // The communicator of the exchange: the Dispatcher (0) and the hosts' leaders, in the order of their ranks.
  const comm::Communicator& exchange() const { return exchange_; }
  // Its members' hosts (comm::Communicator::hosts ids) and their world ranks, by rank of exchange().
  const std::vector<int>& exchange_hosts() const { return exchange_hosts_; }
  const std::vector<int>& exchange_ranks() const { return exchange_ranks_; }

  // Learner: whether it is its host's leader; the shared weights; how many learners share them.
  bool leader() const { return host_.rank() == 0; }
  float* weights() const { return shared_->data(); }
  std::size_t size() const { return shared_->size(); }
  int learners_here() const { return host_.size(); }
  // Learner, where the host's learners train on through the exchange (overlap): posts this learner's windows
  // `mine` of round `round` (comm::SharedSlots) and goes on. Leader: waits until every learner of the host has
  // posted the round and returns their windows summed; the others return `mine` without waiting.
  comm::WindowTotals host_totals(const comm::WindowTotals& mine, long round) const;
  // Learner: a polled barrier of the host's learners, with a memory barrier on the shared weights on both sides
  // (what one learner wrote before it is seen by all after it).
  void barrier() const;
  // Learner: the end of use, once every learner of the host is done with the weights.
  void release();
  // Learner: claims one of the host's batches, if the host has claimed fewer than `limit` (a running total over
  // the process, the same on every learner of the host), and returns its place in that total (from 0; -1: none
  // left): the learners of a host that train on through its leader's exchange share each round's batches rather
  // than each training its own (comm::SharedWeights::claim).
  std::int64_t claim(std::int64_t limit) const { return shared_->claim(limit); }

  // A lock-step round's steps on the shared weights, each called by every learner of the host. The leader
  // exchanges the shared weights themselves (shared()), in place, while the host's other learners wait: they
  // have reported Ready, so none writes them, and the Dispatcher starts an exchange only once every learner has.
  // Leader: the shared weights, as the exchange reads and writes them.
  core::Floats shared() const { return {shared_->data(), shared_->size()}; }
  // After an opening exchange that brought weights: every learner of the host waits for them.
  void start() const;
  // After training, with this learner's windows `mine`: the host's windows (summed); every learner of the host
  // is done writing.
  comm::WindowTotals trained(const comm::WindowTotals& mine) const;
  // After the exchange: every learner of the host waits for its result.
  void finish() const;

  // The rows the host's learners wrote, where the leader's exchange reads only those (the sparse exchange): each
  // learner marks what its model's steps wrote (engine.written_rows) after each step, and the leader takes the
  // marks before its exchange, which then reads those rows and the ones it kept back rather than every row.
  // Learner, collective over the host's learners: maps one mark per row of `layout`'s tables, none set.
  void track_rows(const Layout& layout);
  bool tracks_rows() const { return marks_ != nullptr; }
  // Learner: marks `rows` (per table, engine.written_rows: empty or none where the model does not say).
  void mark(const bridge::WrittenRows& rows) const;
  // Leader: the rows the host's learners marked since the last call and its own `rows`, per table, ascending, and
  // clears their marks; none for a table `rows` has none for (every row may have changed), and empty where
  // `rows` is (the model says nothing).
  bridge::WrittenRows take_written(const bridge::WrittenRows& rows) const;

 private:
  comm::Deadline deadline() const;
  // The windows every learner of the host trained, summed (collective over the host's learners).
  comm::WindowTotals summed(const comm::WindowTotals& mine) const;

  const comm::WaitPolicy& waits_;
  double liveness_;
  comm::Communicator host_;      // the learners of this rank's host (empty on the Dispatcher)
  comm::Communicator exchange_;  // the Dispatcher and the leaders (empty on other learners)
  std::unique_ptr<comm::SharedWeights> shared_;
  std::unique_ptr<comm::SharedSlots> totals_;    // each learner's window totals of its last round (host_totals)
  std::unique_ptr<comm::SharedRowMarks> marks_;  // track_rows: one mark per row of the tables
  Layout tables_;                                // track_rows: the tables marked
  std::vector<std::size_t> first_row_;           // each table's first mark
  std::vector<int> exchange_hosts_;
  std::vector<int> exchange_ranks_;
};

}  // namespace fedavg::training
