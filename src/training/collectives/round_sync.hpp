// The collectives of one lock-step round on the learner communicator (Dispatcher = rank 0): every member, the
// Dispatcher and the learners alike, calls each of them in the same order. They start only once every member is
// known to be in them (the Ready and RoundDone reports of LearnerControl and DispatcherControl), so a wait in them
// means a member that is late and named elsewhere first.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/messages.hpp"
#include "comm/wait_policy.hpp"
#include "core/floats.hpp"
#include "training/collectives/learner_ring.hpp"
#include "training/collectives/learner_tree.hpp"

namespace fedavg::training {

class RoundSync {
 public:
  // Weights move along the learner tree in messages of `chunk_bytes`: a hop passes each chunk on as soon as it
  // has it, so the hops of the tree overlap rather than each waiting for the whole vector.
  static constexpr std::size_t kChunkBytes = std::size_t{4} << 20;

  // `hosts`: the host of each member, by rank (comm::Communicator::hosts), which the learner tree and ring
  // follow; empty: one host. Every member must pass the same.
  // `learner_ranks`: the world rank of each learner, which names it in a timeout.
  RoundSync(const comm::Communicator& comm, const comm::WaitPolicy& waits, double liveness_seconds,
            std::vector<int> learner_ranks, const std::vector<int>& hosts, std::size_t chunk_bytes = kChunkBytes)
      : comm_(comm),
        waits_(waits),
        liveness_(liveness_seconds),
        learner_ranks_(std::move(learner_ranks)),
        chunk_bytes_(chunk_bytes),
        hosts_(hosts),
        tree_(hosts, comm.size()),
        ring_(hosts, comm.size()) {}

  // True on the Dispatcher (rank 0 of the learner communicator).
  bool on_dispatcher() const { return comm_.rank() == 0; }
  const comm::Communicator& comm() const { return comm_; }
  const comm::WaitPolicy& waits() const { return waits_; }
  double liveness() const { return liveness_; }
  const std::vector<int>& learner_ranks() const { return learner_ranks_; }
  // The host of each member, as given (empty: one host).
  const std::vector<int>& hosts() const { return hosts_; }
  // Dispatcher: sends the global weights. Learner: overwrites its weights with them (down_tree, tag Weights).
  // `from_root`: learner 1 holds them already (fedavg: the sum it sent the Dispatcher in the last
  // average_into_root, which the Dispatcher keeps as they are), so the Dispatcher sends nothing and the tree
  // starts at learner 1.
  void weights(core::Floats w, bool from_root = false);
  // Everyone: `data` from the Dispatcher to every learner, down the learner tree: the Dispatcher sends it to
  // learner 1, and each learner receives it from its parent and passes it on to its children. Point to point
  // rather than MPI_Ibcast: each message is taken in one go once its receiver has probed it, where a broadcast
  // of tens of MB runs stages that advance only while every member polls. It travels in chunks, each passed on
  // as soon as it is in. When `resize`, a learner's `data` takes the size the Dispatcher's has (a message
  // ahead of the chunks says it); else it must have that size already. `from_root`: as for weights().
  template <typename T> void down_tree(std::vector<T>& data, comm::Tag tag, bool resize, bool from_root = false);
  // Everyone: sums `mine` over all members (the Dispatcher contributes zeros); every member's has as many
  // pipelines.
  comm::WindowTotals totals(const comm::WindowTotals& mine);
  // Everyone: sums the learners' `w`, each scaled by its learner's `share` of the round's windows, into the
  // Dispatcher's `w`, which is overwritten (the Dispatcher's `share` is not used): along the learner tree
  // (learner_tree.hpp), so the Dispatcher receives one copy however many learners there are; a learner's `w`
  // then holds its subtree's sum. In chunks: a learner sends a chunk up as soon as it has added its children's.
  // Point to point rather than MPI_Ireduce, which Debian's MPICH runs slower between local ranks
  // (docs/performance.md#mpi-the-weight-exchange-between-local-ranks).
  void average_into_root(core::Floats w, float share);
  // Everyone: sums the learners' pre-scaled `w` in place; the Dispatcher's `w` is overwritten with the sum (bsp).
  // Point to point in chunks. A ring (learner_ring.hpp): a reduce-scatter, in which each member adds the partial
  // sums of one segment after another and passes them on, then an allgather of the whole segments, each member
  // also sending the Dispatcher the segment it completed. On one host the ring holds every learner, each sending
  // 2 (L - 1) / L copies of the weights. Across hosts each host's learners first sum along their host's part of
  // the learner tree to its lowest learner (Average), the ring holds those, one per host, each sending
  // 2 (H - 1) / H copies for H hosts however many learners its host holds, and each passes the sum back down its
  // host's part of the tree (Weights). The Dispatcher receives one copy; every element is summed once, in one
  // order, so every member holds the same bits. Not MPI_Iallreduce, which advances only while its members poll
  // it, stage by stage (docs/performance.md#mpi-the-weight-exchange-between-local-ranks).
  void allreduce_in_place(core::Floats w);
  // Everyone: true if every member passed the same `value`.
  bool same_everywhere(double value);
  // Bytes of weights this object's calls moved between the members so far, counted as the algorithm's payload
  // (a broadcast sends one copy per learner, a reduce receives one per learner, the allreduce sends
  // 2 (L - 1) copies between the learners and one to the Dispatcher). Control values are not counted.
  double weight_bytes() const { return weight_bytes_; }
  // Bytes of weights the Dispatcher received through average_into_root and allreduce_in_place.
  double inbound_bytes() const { return inbound_bytes_; }
  // "the weights of learner rank N" for learner communicator rank `rank`.
  std::string who(int rank) const;

 private:
  comm::Deadline deadline() const;
  // Learner: chunk by chunk, scales its `w` by `share`, adds the sums `children` send (Average) and sends the
  // total to `parent` (none if negative) with tag `up`.
  void sum_up(core::Floats w, float share, const std::vector<int>& children, int parent,
              comm::Tag up = comm::Tag::Average);
  // `data` from `parent` (none if negative: this member has it) on to `children`, chunk by chunk, as down_tree.
  template <typename T>
  void pass_down(std::vector<T>& data, comm::Tag tag, bool resize, int parent, const std::vector<int>& children);
  // pass_down's chunks: the `n` elements at `data`, whose size the members agree on; waits for its sends and those
  // already in `sends`.
  template <typename T>
  void pass_chunks(T* data, std::size_t n, comm::Tag tag, int parent, const std::vector<int>& children,
                   std::vector<comm::Request>& sends);
  // The tree's parent of this member in down_tree (none, -1, where it has the data: the Dispatcher, and learner 1
  // with `from_root`).
  int tree_source(bool from_root) const;
  // The ring stage of allreduce_in_place, for its members and the Dispatcher; a member leaves in `gather` its
  // last sends, from `w`, which it does not change again.
  void ring_allreduce(core::Floats w, std::vector<comm::Request>& gather);
  // The Dispatcher's part of the ring stage: each segment's sum from the learner that completed it.
  void gather_segments(core::Floats w);
  // A ring member's part: the reduce-scatter, which sends the chunks of the segment this member completes round
  // the ring and to the Dispatcher (left in `gather`), then the allgather, by `until`.
  void reduce_scatter(core::Floats w, std::vector<comm::Request>& gather, const comm::Deadline& until);
  void allgather(core::Floats w, std::vector<comm::Request>& gather, const comm::Deadline& until);
  // Calls `f(offset, count)` for each chunk of ring segment `s` of `n` floats (one, empty, for an empty segment).
  template <typename F> void each_chunk(int s, std::size_t n, const F& f) const;
  // Waits by `until` for a message `tag` from member `rank`, during a collective.
  comm::Arrival await_member(int rank, comm::Tag tag, const comm::Deadline& until) const;
  // Elements of T per chunk, and how many chunks `n` elements make (at least one: an empty vector still sends).
  template <typename T> std::size_t chunk() const { return std::max<std::size_t>(1, chunk_bytes_ / sizeof(T)); }
  template <typename T> std::size_t chunks(std::size_t n) const {
    return n == 0 ? 1 : (n + chunk<T>() - 1) / chunk<T>();
  }
  // Elements of T in the chunk at `offset` of data that ends at `end` (none from the end on).
  template <typename T> std::size_t chunk_size(std::size_t offset, std::size_t end) const {
    return std::min(chunk<T>(), end - std::min(offset, end));
  }
  const comm::Communicator& comm_;
  const comm::WaitPolicy& waits_;
  double liveness_;
  std::vector<int> learner_ranks_;
  std::size_t chunk_bytes_;
  std::vector<int> hosts_;
  LearnerTree tree_;
  LearnerRing ring_;
  std::vector<float> incoming_;  // chunks a member adds to its own (average_into_root, allreduce_in_place)
  double weight_bytes_ = 0.0;
  double inbound_bytes_ = 0.0;
};

}  // namespace fedavg::training
