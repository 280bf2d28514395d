// A learner's side of the sparse exchange (sparse_exchange.hpp): it finds the rows it changed (only those its
// model's steps wrote and those that waited), sends each to its owner, sums the rows it owns, and takes the global
// change, keeping back what a lossy round did not send (error feedback).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "bridge/written_rows.hpp"
#include "core/floats.hpp"
#include "core/settings.hpp"
#include "training/collectives/round_sync.hpp"
#include "training/exchange/combine_rule.hpp"
#include "training/exchange/sparse_delta.hpp"
#include "training/exchange/sparse_exchange.hpp"
#include "training/exchange/sparse_link.hpp"

namespace fedavg::training {

class SparseLearner {
 public:
  static constexpr double kReadWhole = 0.25;

  // `rule`: how the owners combine the rows they sum (the strategy's).
  SparseLearner(RoundSync& sync, Layout layout, const core::Settings& s, Publisher publisher, CombineRule rule);

  const Layout& layout() const { return link_.layout(); }
  unsigned threads() const { return link_.threads(); }
  bool lossy() const { return link_.lossy(); }
  // Holding the global weights (after a dense broadcast): they are the start of the next round.
  void start_from(core::Floats w);
  // Sends what it changed (since the start, with what it kept back before), scaled by `share` (its share of the
  // round's windows; for the "touched" weighting also each row's weight), takes the global change and leaves in
  // `w` the new global weights plus what it kept back. A full round sends every change, in float32. `written`:
  // the rows the model's steps wrote in the round, per table; the round looks for changes only in those and in
  // the rows that waited from earlier rounds (a table the model says nothing of, and a full round, are read
  // whole).
  void learner_round(core::Floats w, double share, RoundKind kind, const bridge::WrittenRows& written = {});
  // learner_round's first part, which needs no share: reads the rows `written` names (as learner_round) and picks
  // those a round of `kind` sends, so that learner_round, given the same kind, goes on from there (ignoring its
  // `written`). Where it runs while the round's totals are found, the reading costs the exchange no time.
  void choose(core::Floats w, RoundKind kind, const bridge::WrittenRows& written);
  // Whether choose() ran for the round learner_round is to end.
  bool chosen() const { return chosen_kind_.has_value(); }
  // The global weights, which every member holds bit for bit (its own weights add what it kept back).
  const std::vector<float>& global() const { return start_; }

 private:
  // Its delta, split by owner into parts_: every changed row (or the largest changes: chosen_, choose()), scaled;
  // puts what it sends out of `w`, leaving what it keeps back.
  void own_delta(core::Floats w, double share, RoundKind kind, const bridge::WrittenRows& written);
  // The round sends nothing (a share of 0): the chosen rows wait with the others.
  void keep_back();
  // Resizes parts_ (one per owner) and empties them.
  void clear_parts();
  // The rows of table `t` that `written` names, ascending; null when any row may have changed (a full round reads
  // every row) or where they are more than kReadWhole of the table's rows, which are then all read.
  const std::vector<std::uint32_t>* written_in(std::size_t t, const bridge::WrittenRows& written, RoundKind kind) const;
  // Into chosen_[t]: table `t`'s changed rows of those `rows` names (every row when null). Nothing waits.
  void every_change(std::size_t t, core::Floats w, const std::vector<std::uint32_t>* rows);
  // Into chosen_[t]: table `t`'s largest changes (with what waited from earlier rounds), by L2 norm; the others
  // wait.
  void largest_changes(std::size_t t, core::Floats w, const std::vector<std::uint32_t>* rows);
  // scan_[i] for the i-th row `rows` names (every row when null): the squared norm of its change since the start,
  // or -1 when it has not changed (`norms`: else any value >= 0). Shared among the workers.
  void scan(std::size_t t, core::Floats w, const std::vector<std::uint32_t>* rows, bool norms);
  // Puts table `t`'s rows `rows` (ascending) into their owners' parts, each as its change times `scale` rounded to
  // `as`, and leaves in `w` what the rounding lost above the start. The copying is shared among the workers.
  void emit(core::Floats w, std::size_t t, const std::vector<std::uint32_t>& rows, float scale, ValueType as);
  // Table `t`'s changed rows with their squared norms, in candidates_: it reads the rows `rows` names (every row
  // when null) and takes the other waiting rows' norms from the round they were read in (a waiting row nothing
  // wrote since has not moved from the global weights: the global change went to both).
  void measure(std::size_t t, core::Floats w, const std::vector<std::uint32_t>* rows);
  // measure's step for the i-th row read, row `r` of table `t`: a candidate, and its norm kept, if it changed.
  void take_scanned(std::size_t t, std::size_t i, std::uint32_t r);
  // Of candidates_ (ascending by row), the `keep` with the largest norms into `chosen` and the others into
  // `waiting`, both ascending; of rows with equal norms at the cut, the lower rows are taken.
  void select(std::size_t keep, std::vector<std::uint32_t>& chosen, std::vector<std::uint32_t>& waiting);
  // Sends the other owners their parts, and sums theirs of its own rows into its part.
  void scatter(RoundKind kind);
  // Publisher::Owners: rounds the sum of its rows, adds it to `w` and the start, and sends it to every other
  // member; then adds the other owners' sums.
  void publish_own(core::Floats w, RoundKind kind);
  // Publisher::Dispatcher: rounds the sum of its rows and sends it to the Dispatcher, and adds the global change it
  // sends down the learner tree to `w` and the start.
  void through_dispatcher(core::Floats w, RoundKind kind);
  // `sum` (the sum of its rows) encoded for `copies` receivers, after the byte count of everything this learner
  // sent in the round (for the Dispatcher, which adds up the counts). Valid until the round's sends end.
  const std::vector<std::uint8_t>& counted(const SparseDelta& sum, RoundKind kind, int copies);
  SparseDelta& mine() { return parts_[static_cast<std::size_t>(link_.sync().comm().rank() - 1)]; }
  // After a full round, which moves every changed row: gives back the memory of its buffers, which would otherwise
  // hold up to two copies of the weights for the rest of the run. Within a full round each buffer is dropped as
  // soon as its contents are encoded or added, so that the round holds few copies at once.
  void release_buffers();

  SparseLink link_;
  CombineRule rule_;
  std::vector<float> start_;  // the global weights
  // Kept from round to round for their capacity: a round allocates nothing once it has seen its largest (but for
  // a full round's, given back after it).
  std::vector<SparseDelta> parts_;              // its delta by owner; its own part becomes the sum of its rows
  std::vector<std::vector<std::uint8_t>> out_;  // the messages in flight, by learner rank - 1
  std::vector<std::pair<float, std::uint32_t>> candidates_;  // rows with a change, and its size
  std::vector<float> scan_;                                  // scan's result
  std::vector<float> sizes_;                                 // candidates' norms, for select's cut
  std::vector<std::vector<std::uint32_t>> chosen_;           // by table: the rows it sends
  std::optional<RoundKind> chosen_kind_;                     // choose() ran for a round of this kind
  std::vector<std::size_t> slot_;                            // each chosen row's place in its owner's part
  std::vector<std::vector<std::uint32_t>> waiting_;          // by table: changed rows a lossy round did not send
  std::vector<std::vector<float>> norms_;                    // by table and row: a waiting row's squared norm
  double sent_ = 0.0;                                        // payload bytes it sent this round
};

}  // namespace fedavg::training
