// The sparse weight exchange of a lock-step round (exchange "sparse", docs/strategies.md#sparse-exchange): each
// learner sends only the rows it changed since the round's global weights, scaled by its share of the round's
// windows (for the "touched" weighting also each row's weight), each row to the learner that owns it
// (row_owners.hpp), so the summing is spread over the learners and nothing funnels through one rank. Without an
// outer step every owner turns the sum of its rows into their global change and sends it to every other member,
// the Dispatcher included, straight to the members of its host and through one relay on each other host
// (host_relay.hpp); with one (bmuf, diloco) the owners send their sums to the Dispatcher, which steps and
// sends the global change down the learner tree. Every member adds the same global change to the same global
// weights, so all hold the same bits. Lossy settings (a fraction of the rows, 16-bit values) leave what a learner
// did not send in its own weights, on top of the global ones, where it keeps training and joins a later delta
// (error feedback); what a publisher's rounding lost waits in its residual. A full round sends everything. A
// learner reads only the rows its model's steps wrote (engine.written_rows), and remembers the size of what it
// kept back.
#pragma once

#include <cstdint>
#include <vector>

#include "bridge/written_rows.hpp"
#include "core/workers.hpp"
#include "core/settings.hpp"
#include "training/host_relay.hpp"
#include "training/round_sync.hpp"
#include "training/row_owners.hpp"
#include "training/sparse_delta.hpp"

namespace fedavg::training {

class SparseExchange {
 public:
  // Who turns the summed delta into the global change: each owner for its rows (no outer step), or the
  // Dispatcher (a strategy with an outer step, which runs there).
  enum class Publisher { Owners, Dispatcher };

  SparseExchange(RoundSync& sync, Layout layout, const core::Settings& s, Publisher publisher);

  Publisher publisher() const { return publisher_; }
  // Learner, holding the global weights (after a dense broadcast): they are the start of the next round.
  void start_from(const std::vector<float>& w);
  // Learner: sends what it changed (since the start, with what it kept back before), scaled by `share` (its
  // share of the round's windows; for the "touched" weighting also each row's weight), takes the global change
  // and leaves in `w` the new global weights plus what it kept back. `full`: every change, in float32.
  // `written`: the rows the model's steps wrote in the round, per table; the round looks for changes only in
  // those and in the rows that waited from earlier rounds (a table the model says nothing of, and a full round,
  // are read whole).
  void learner_round(std::vector<float>& w, double share, bool full, const bridge::WrittenRows& written = {});
  // Learner: the global weights, which every member holds bit for bit (its own weights add what it kept back).
  const std::vector<float>& global() const { return start_; }

  // Dispatcher, Publisher::Owners: adds the owners' global change to `w`. `full` as the learners'.
  void receive_global(std::vector<float>& w, bool full);
  // Dispatcher, Publisher::Dispatcher: the learners' summed delta (each row divided by its weight for
  // "touched"). Valid until the next collect.
  SparseDelta& collect(bool full);
  // Dispatcher, Publisher::Dispatcher: adds `delta` to `w` and sends it down the learner tree in the learners'
  // value type (`full`: float32), rounded before it adds it, so every replica adds exactly the same; the
  // rounding waits in the Dispatcher's residual for the row's next change (or the next full round). Leaves in
  // `delta` what it sent, but for a full round, after which `delta` is gone (release_buffers).
  void publish(SparseDelta& delta, std::vector<float>& w, bool full);

  const Layout& layout() const { return layout_; }
  // The threads that share this member's work on rows (exchange_threads).
  unsigned threads() const { return workers_.threads(); }
  // Lossy settings (a fraction of the rows, 16-bit values): changes wait to be sent.
  bool lossy() const { return type_ != ValueType::Float32 || fraction_ < 1.0; }
  // Payload bytes moved so far: every learner's rows sent to their owners, and the global change once per
  // learner.
  double bytes() const { return bytes_; }
  // Bytes the Dispatcher received so far.
  double inbound_bytes() const { return inbound_; }

 private:
  ValueType type(bool full) const { return full ? ValueType::Float32 : type_; }
  int learners() const { return sync_.comm().size() - 1; }
  // Learner: its delta, split by owner into parts_: every changed row (or the largest changes), scaled; puts
  // what it sends out of `w`, leaving what it keeps back.
  void own_delta(std::vector<float>& w, double share, bool full, const bridge::WrittenRows& written);
  // Learner: the rows of table `t` that `written` names, ascending; null when any row may have changed (a full
  // round reads every row).
  const std::vector<std::uint32_t>* written_in(std::size_t t, const bridge::WrittenRows& written, bool full) const;
  // Learner: scan_[i] for the i-th row `rows` names (every row when null): the squared norm of its change since
  // the start, or -1 when it has not changed (`norms`: else any value >= 0). Shared among the workers.
  void scan(std::size_t t, const std::vector<float>& w, const std::vector<std::uint32_t>* rows, bool norms);
  // Learner: puts table `t`'s rows `rows` (ascending) into their owners' parts, each as its change times `scale`
  // rounded to `as`, and leaves in `w` what the rounding lost above the start. The copying is shared among the
  // workers.
  void emit(std::vector<float>& w, std::size_t t, const std::vector<std::uint32_t>& rows, float scale, ValueType as);
  // Learner: table `t`'s changed rows with their squared norms, in candidates_: it reads the rows `rows` names
  // (every row when null) and takes the other waiting rows' norms from the round they were read in (a waiting
  // row nothing wrote since has not moved from the global weights: the global change went to both).
  void measure(std::size_t t, const std::vector<float>& w, const std::vector<std::uint32_t>* rows);
  // Learner: of candidates_ (ascending by row), the `keep` with the largest norms into chosen_ and the others into
  // `waiting`, both ascending; of rows with equal norms at the cut, the lower rows are taken.
  void select(std::size_t keep, std::vector<std::uint32_t>& waiting);
  // Learner: sends the other owners their parts, and sums theirs of its own rows into its part.
  void scatter(bool full);
  // Learner, Publisher::Owners: rounds the sum of its rows, adds it to `w` and the start, and sends it to every
  // other member (relay_); then adds the other owners' sums.
  void publish_own(std::vector<float>& w, bool full);
  // Publisher::Owners: every other owner's sum, straight from it or through this host's relay, added to `w` (and
  // to `also` unless null); a relay passes on to its host what came from the other hosts. `counted`: the
  // Dispatcher's, whose messages start with a byte count.
  void take_owners_sums(float* w, float* also, bool full, bool counted);
  // Learner: `sum` (the sum of its rows) encoded for `copies` receivers, after the byte count of everything this
  // learner sent in the round (for the Dispatcher, which adds up the counts). Valid until the round's sends end.
  const std::vector<std::uint8_t>& counted(const SparseDelta& sum, bool full, int copies);
  // Receives the message `from` sends with `tag` into msg_.
  void receive(int from, comm::Tag tag, const comm::Deadline& deadline);
  // Dispatcher: the same for a message that starts with a learner's byte count, which it adds up.
  void receive_counted(int from, comm::Tag tag, const comm::Deadline& deadline);
  // After a full round, which moves every changed row: gives back the memory of its buffers, which would
  // otherwise hold up to two copies of the weights for the rest of the run. Within a full round each buffer is
  // dropped as soon as its contents are encoded or added, so that the round holds few copies at once.
  void release_buffers();
  // Empties `d` and gives back its memory.
  void drop(SparseDelta& d) const;
  // A publisher: rounds `delta` to `t` after adding the residual's rows (`full`: every row the residual holds),
  // keeping the rounding in the residual.
  void round_with_residual(SparseDelta& delta, ValueType t, bool full);

  RoundSync& sync_;
  Layout layout_;
  ValueType type_;
  double fraction_;   // of each table's rows a learner sends per round (1: every changed row)
  bool touched_;      // weight each row by the windows of the learners that sent it
  Publisher publisher_;
  RowOwners block_;   // the rows this member publishes: a learner its own (Owners), the Dispatcher every row
  HostRelay relay_;   // how the owners' sums reach every member (Publisher::Owners)
  std::vector<float> start_;     // learner: the global weights
  std::vector<float> residual_;  // a publisher's rounding, by block_ (16-bit values)
  // Kept from round to round for their capacity: a round allocates nothing once it has seen its largest (but for
  // a full round's, given back after it).
  std::vector<SparseDelta> parts_;  // learner: its delta by owner; its own part becomes the sum of its rows
  std::vector<std::vector<std::uint8_t>> out_;  // learner: the messages in flight, by learner rank - 1
  std::vector<std::vector<std::uint8_t>> passed_;  // a relay: the other hosts' sums it is passing on
  SparseDelta spare_;  // where merge_encoded builds a sum (swapped with it; both keep their capacity)
  std::vector<std::uint8_t> msg_;
  std::vector<std::pair<float, std::uint32_t>> candidates_;  // learner: rows with a change, and its size
  std::vector<float> scan_;                                 // learner: scan's result
  std::vector<float> sizes_;                                // learner: candidates' norms, for select's cut
  std::vector<std::uint32_t> chosen_;                       // learner: the rows of a table it sends
  std::vector<std::size_t> slot_;                           // learner: each chosen row's place in its owner's part
  std::vector<std::vector<std::uint32_t>> waiting_;  // learner, by table: changed rows a lossy round did not send
  std::vector<std::vector<float>> norms_;            // learner, by table and row: a waiting row's squared norm
  std::vector<comm::Request> sends_;
  double sent_ = 0.0;  // learner: payload bytes it sent this round
  double bytes_ = 0.0;
  double inbound_ = 0.0;
  core::Workers workers_;
};

// The exchange a run uses: sparse for "sparse", and for "auto" when the model has at least 8M parameters and the
// Dispatcher and the learners are not all on one host (below that size, or within one host's shared memory, the
// dense exchange costs less than finding and packing the changed rows).
bool sparse_exchange(const core::Settings& s, std::size_t params, bool learners_on_one_host);

}  // namespace fedavg::training
