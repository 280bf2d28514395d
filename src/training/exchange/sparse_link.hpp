// What both sides of the sparse exchange (sparse_exchange.hpp) use: the layout and the values a round sends, the
// threads for row work, receives and the byte counts they carry, a publisher's rounding residual, and the owners'
// sums as they arrive straight or through a host's relay. SparseLearner and SparseDispatcher each hold one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "comm/request.hpp"
#include "core/settings.hpp"
#include "core/workers.hpp"
#include "training/collectives/host_relay.hpp"
#include "training/collectives/round_sync.hpp"
#include "training/exchange/row_owners.hpp"
#include "training/exchange/sparse_delta.hpp"
#include "training/exchange/sparse_exchange.hpp"

namespace fedavg::training {

class SparseLink {
 public:
  // Who takes the owners' sums: a learner, or the Dispatcher, which adds up the byte counts they start with.
  enum class Receiver { Learner, Dispatcher };
  // Each message a learner sends the Dispatcher starts with the payload bytes that learner sent in the round (a
  // double), so the Dispatcher can count the payload of the whole exchange.
  static constexpr std::size_t kCount = sizeof(double);
  // Writes the count at the front of `msg` (kCount bytes it leaves for it).
  static void put_count(std::vector<std::uint8_t>& msg, double bytes);

  SparseLink(RoundSync& sync, Layout layout, const core::Settings& s, Publisher publisher);

  RoundSync& sync() const { return sync_; }
  const Layout& layout() const { return layout_; }
  Publisher publisher() const { return publisher_; }
  const HostRelay& relay() const { return relay_; }
  int learners() const { return sync_.comm().size() - 1; }
  // The values a round of `kind` sends: float32 in a full round, else sparse_values.
  ValueType values(RoundKind kind) const { return kind == RoundKind::Full ? ValueType::Float32 : type_; }
  // Of each table's rows, the fraction a learner sends a round (1: every changed row).
  double fraction() const { return fraction_; }
  // Lossy settings (a fraction of the rows, 16-bit values): changes wait to be sent.
  bool lossy() const { return type_ != ValueType::Float32 || fraction_ < 1.0; }
  // The threads that share this member's work on rows (exchange_threads).
  core::Workers& workers() { return workers_; }
  unsigned threads() const { return workers_.threads(); }

  // Receives the message `from` sends with `tag` into msg().
  void receive(int from, comm::Tag tag, const comm::Deadline& deadline);
  // The same for a message that starts with a learner's byte count, which it adds up (the Dispatcher).
  void receive_counted(int from, comm::Tag tag, const comm::Deadline& deadline);
  // The last message received; its buffer is kept from round to round.
  std::vector<std::uint8_t>& msg() { return msg_; }
  // Where SparseDelta::merge_encoded builds a sum (swapped with it; both keep their capacity).
  SparseDelta& spare() { return spare_; }

  // Rounds `delta` to the values of `kind` after adding the residual's rows (a full round: every row
  // the residual holds), keeping the rounding in the residual.
  void round_with_residual(SparseDelta& delta, RoundKind kind);
  // Publisher::Owners: every other owner's sum, straight from it or through this host's relay, added to `w` (and
  // to `also` unless null); a relay passes on to its host what came from the other hosts (its sends join sends()).
  void take_owners_sums(float* w, float* also, RoundKind kind, Receiver receiver);
  // The sends in flight, which the round waits for before it ends.
  std::vector<comm::Request>& sends() { return sends_; }
  void wait_sends();

  // Payload bytes moved so far: every learner's rows sent to their owners, and the global change once per
  // learner (counted by the Dispatcher).
  double bytes() const { return bytes_; }
  void count_bytes(double bytes) { bytes_ += bytes; }
  // Bytes received so far with receive_counted.
  double inbound_bytes() const { return inbound_; }

  // Empties `d` and gives back its memory.
  void drop(SparseDelta& d) const { d = SparseDelta(layout_.size()); }
  // After a full round: gives back the memory of the buffers kept from round to round.
  void release_buffers();

 private:
  // Every row the residual holds, with zero values, added to `delta` (a full round: the residual joins).
  void add_residual_rows(SparseDelta& delta) const;
  void receive_sum(int from, comm::Tag tag, const comm::Deadline& deadline, Receiver receiver);

  RoundSync& sync_;
  Layout layout_;
  ValueType type_;
  double fraction_;
  Publisher publisher_;
  RowOwners block_;              // the rows this member sums and rounds: a learner its own, the Dispatcher every row
  HostRelay relay_;              // how the owners' sums reach every member (Publisher::Owners)
  std::vector<float> residual_;  // the rounding of what this member sent, by block_ (16-bit or int8 values)
  // Kept from round to round for their capacity (but for a full round's, given back after it).
  std::vector<std::vector<std::uint8_t>> passed_;  // a relay: the other hosts' sums it is passing on
  SparseDelta spare_;
  std::vector<std::uint8_t> msg_;
  std::vector<comm::Request> sends_;
  double bytes_ = 0.0;
  double inbound_ = 0.0;
  core::Workers workers_;
};

}  // namespace fedavg::training
