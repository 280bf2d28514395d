// The sparse exchange between a Dispatcher (rank 0) and L learners (every other rank), whose rows meet at the
// learners that own them, with the owners or the Dispatcher publishing the global change: exact averages for the
// rows learners changed, untouched rows left as they are, the "touched" weighting, error feedback for lossy
// settings (nothing lost), each changed row received once by the Dispatcher, and rounds that read only the rows
// the model says it wrote, and the same bits whatever threads share the work on rows. Runs under mpiexec -n 4 and
// -n 6 (L = 3, 5), time-limited by meson (timeout 60 s, MPIEXEC_TIMEOUT=50).
#include <gtest/gtest.h>

#include <mpi.h>

#include <cmath>
#include <functional>
#include <optional>
#include <set>

#include "mpi_main.hpp"
#include "training/exchange/sparse_dispatcher.hpp"
#include "training/exchange/sparse_exchange.hpp"
#include "training/exchange/sparse_learner.hpp"

using namespace fedavg;

namespace {

// The exact settings: every changed row, float32, the dense average (combine average).
core::Settings exact() {
  core::Settings s;
  s.exchange = core::Exchange::Sparse;
  s.sparse_rows = 1.0;
  s.sparse_values = core::ExchangeType::Float32;
  s.sparse_weighting = core::SparseWeighting::Windows;
  s.combine = core::Combine::Average;
  return s;
}

// Table 0: 6 rows of 4; table 1: 3 rows of 2.
const training::Layout kLayout{{0, 6, 4}, {24, 3, 2}};
constexpr std::size_t kSize = 30;

// The learners: every rank but the Dispatcher (at most 5, so that rows 1..L of table 0 are distinct).
int learners() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);  // not Communicator::world(), a collective
  return size - 1;
}

std::vector<float> start() {
  std::vector<float> w(kSize);
  for (std::size_t i = 0; i < kSize; ++i) w[i] = 0.01f * static_cast<float>(i);
  return w;
}

// Learner l (1..L) changes rows {l-1, l} of table 0 (row 0 by learner 1 only, row 1 by learners 1 and 2, ...)
// and row 0 of table 1 (every learner); rows L+1.. of table 0 and rows 1, 2 of table 1 stay untouched.
std::vector<float> trained(int l, const std::vector<float>& from, int round) {
  std::vector<float> w = from;
  for (int row : {l - 1, l})
    for (int c = 0; c < 4; ++c)
      w[static_cast<std::size_t>(row * 4 + c)] += 0.5f * static_cast<float>(l) + 0.1f * static_cast<float>(c + round);
  for (int c = 0; c < 2; ++c) w[static_cast<std::size_t>(24 + c)] -= static_cast<float>(l);
  return w;
}

using training::Publisher;
using training::RoundKind;

struct Outcome {
  std::vector<float> w;       // every member's weights after the rounds (a learner's hold what it kept back)
  std::vector<float> global;  // every member's global weights
  double inbound = 0.0;       // Dispatcher: bytes received
};

// This rank's side of the exchange: the Dispatcher's on rank 0, a learner's on every other rank.
struct Member {
  std::optional<training::SparseDispatcher> dispatcher;
  std::optional<training::SparseLearner> learner;
  const comm::Communicator& comm;

  Member(training::RoundSync& sync, const training::Layout& layout, const core::Settings& s, Publisher publisher)
      : comm(sync.comm()) {
    if (sync.on_dispatcher()) {
      dispatcher.emplace(sync, layout, s, publisher);
    } else {
      // The average, as the strategy factory makes it for these settings (combine average).
      learner.emplace(sync, layout, s, publisher,
                      training::CombineRule::average(s.sparse_weighting == core::SparseWeighting::Touched));
    }
  }
  unsigned threads() const { return dispatcher ? dispatcher->threads() : learner->threads(); }
  // The Dispatcher's part of a round: it adds no outer step of its own when it publishes.
  void dispatcher_round(std::vector<float>& w, RoundKind kind) {
    if (dispatcher->publisher() == Publisher::Owners) {
      dispatcher->receive_global(w, kind);
    } else {
      training::SparseDelta& d = dispatcher->collect(kind);
      dispatcher->publish(d, w, kind);
    }
  }
  // After the rounds, with this member's weights `w`; waits for every member.
  Outcome outcome(std::vector<float> w) const {
    Outcome run;
    run.global = dispatcher ? w : learner->global();
    run.inbound = dispatcher ? dispatcher->inbound_bytes() : 0.0;
    run.w = std::move(w);
    comm.ibarrier().wait_until(comm::Deadline::after(20));
    return run;
  }
};

// What learner l's model says it wrote in a round (nothing said: every row is read).
using Written = std::function<bridge::WrittenRows(int l, int round)>;

// The rows trained() changes: {l-1, l} of table 0, row 0 of table 1.
bridge::WrittenRows wrote(int l, int) {
  const auto row = static_cast<std::uint32_t>(l);
  return {std::vector<std::uint32_t>{row - 1, row}, std::vector<std::uint32_t>{0}};
}

// Learner l's weights after training round `round` from `w`.
using Train = std::function<std::vector<float>(int l, const std::vector<float>& w, int round)>;

// `rounds` rounds with every learner's share 1/L; the rounds in `full` (counted from 0) are full ones, those in
// `whole` whole ones. The Dispatcher adds no outer step of its own when it publishes. `hosts`: each rank's host,
// as RoundSync takes it (empty: one).
Outcome exchange(const core::Settings& s, Publisher publisher, int rounds, const std::set<int>& full,
                 const Written& written = {}, const Train& train = trained, const std::vector<int>& hosts = {},
                 const std::set<int>& whole = {}) {
  auto world = comm::Communicator::world();
  const comm::WaitPolicy waits;
  std::vector<int> ranks;
  for (int l = 1; l <= learners(); ++l) ranks.push_back(l);
  training::RoundSync sync(world, waits, 20.0, ranks, hosts);
  Member sparse(sync, kLayout, s, publisher);
  std::vector<float> w = start();
  if (sparse.learner) sparse.learner->start_from(w);
  for (int r = 0; r < rounds; ++r) {
    const RoundKind kind = full.count(r) > 0    ? RoundKind::Full
                           : whole.count(r) > 0 ? RoundKind::Whole
                                                : RoundKind::Regular;
    if (sparse.dispatcher) {
      sparse.dispatcher_round(w, kind);
    } else {
      w = train(world.rank(), w, r);
      sparse.learner->learner_round(w, 1.0 / learners(), kind,
                                    written ? written(world.rank(), r) : bridge::WrittenRows{});
    }
  }
  return sparse.outcome(std::move(w));
}

// Every member holds the same bits.
void expect_same_everywhere(const std::vector<float>& w) {
  auto world = comm::Communicator::world();
  std::vector<float> root = w;
  world.ibcast(root.data(), root.size(), 0).wait_until(comm::Deadline::after(20));
  for (std::size_t i = 0; i < w.size(); ++i) ASSERT_EQ(w[i], root[i]) << "element " << i << " on rank " << world.rank();
}

// The dense FedAvg of one round from `from`: the mean of the learners' weights.
std::vector<float> dense_average(const std::vector<float>& from, int round) {
  std::vector<float> avg(kSize, 0.0f);
  const int n = learners();
  for (int l = 1; l <= n; ++l) {
    const auto w = trained(l, from, round);
    for (std::size_t i = 0; i < kSize; ++i) avg[i] += (w[i] - from[i]) / static_cast<float>(n);
  }
  for (std::size_t i = 0; i < kSize; ++i) avg[i] += from[i];
  return avg;
}

// Table 0's elements from its first untouched row on.
std::size_t untouched_from() { return static_cast<std::size_t>(learners() + 1) * 4; }

class SparseExchange : public ::testing::TestWithParam<Publisher> {};

}  // namespace

TEST_P(SparseExchange, ExactSettingsGiveTheDenseAverageAndLeaveUntouchedRowsAlone) {
  ASSERT_LE(learners(), 5);
  const Outcome run = exchange(exact(), GetParam(), 2, {});
  expect_same_everywhere(run.w);
  const auto expected = dense_average(dense_average(start(), 0), 1);
  for (std::size_t i = 0; i < kSize; ++i) EXPECT_NEAR(run.w[i], expected[i], 1e-5) << "element " << i;
  const auto s0 = start();
  for (std::size_t i = untouched_from(); i < 24; ++i) EXPECT_EQ(run.w[i], s0[i]) << "untouched element " << i;
  for (std::size_t i = 26; i < 30; ++i) EXPECT_EQ(run.w[i], s0[i]) << "untouched element " << i;
  // The Dispatcher received each changed row once a round, however many learners changed it: L+1 rows of
  // table 0 and one of table 1, in one message per owner (a byte count, flags and a row count per table).
  if (comm::Communicator::world().rank() == 0) {
    const double one = learners() * (8 + 4 + 2 * 4) + (learners() + 1) * (4 + 16) + 1 * (4 + 8);
    EXPECT_EQ(run.inbound, 2 * one);
  }
}

TEST_P(SparseExchange, TouchedWeightingAveragesARowOverTheLearnersThatChangedIt) {
  core::Settings s = exact();
  s.sparse_weighting = core::SparseWeighting::Touched;
  const Outcome run = exchange(s, GetParam(), 1, {});
  expect_same_everywhere(run.w);
  const auto s0 = start();
  const auto one = trained(1, s0, 0), two = trained(2, s0, 0);
  // Row 0 of table 0: only learner 1 changed it, so it takes learner 1's value.
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(run.w[i], one[i], 1e-5);
  // Row 1: learners 1 and 2, equal shares.
  for (std::size_t i = 4; i < 8; ++i) EXPECT_NEAR(run.w[i], 0.5f * (one[i] + two[i]), 1e-5);
  for (std::size_t i = untouched_from(); i < 24; ++i) EXPECT_EQ(run.w[i], s0[i]);
}

TEST_P(SparseExchange, ALearnerKeepsWhatItDidNotSendAndNothingIsLost) {
  core::Settings s = exact();
  s.sparse_rows = 0.1;  // one row of each table per learner: each changed two of table 0
  const Outcome run = exchange(s, GetParam(), 1, {});
  expect_same_everywhere(run.global);
  // What the global weights took plus what each learner kept back, at its share, is the dense average.
  std::vector<float> kept(kSize, 0.0f);
  if (comm::Communicator::world().rank() != 0)
    for (std::size_t i = 0; i < kSize; ++i) kept[i] = (run.w[i] - run.global[i]) / static_cast<float>(learners());
  std::vector<float> sum(kSize);
  comm::Communicator::world().iallreduce_sum(kept.data(), sum.data(), kSize).wait_until(comm::Deadline::after(20));
  const auto expected = dense_average(start(), 0);
  for (std::size_t i = 0; i < kSize; ++i) EXPECT_NEAR(run.global[i] + sum[i], expected[i], 1e-5) << "element " << i;
  // Something was kept back: a learner changed two rows of table 0 and sent one.
  if (comm::Communicator::world().rank() != 0) {
    int rows_kept = 0;
    for (std::size_t r = 0; r < 6; ++r) rows_kept += run.w[r * 4] != run.global[r * 4] ? 1 : 0;
    EXPECT_EQ(rows_kept, 1);
  }
}

TEST_P(SparseExchange, LossyRoundsKeepWhatTheyDidNotSendAndAFullRoundCatchesUp) {
  core::Settings s = exact();
  const Outcome exact = exchange(s, GetParam(), 3, {});
  s.sparse_rows = 0.1;  // one row of each table per learner and round: each changes two of table 0
  for (const auto values : {core::ExchangeType::Float16, core::ExchangeType::Int8}) {
    s.sparse_values = values;
    // Every learner adds fixed amounts each round, so after a full round the sum of what was applied equals the
    // dense exchange's, whatever was held back or rounded on the way (the sums' rounding too: float32 error only).
    const Outcome lossy = exchange(s, GetParam(), 3, {2});
    expect_same_everywhere(lossy.w);
    for (std::size_t i = 0; i < kSize; ++i) EXPECT_NEAR(lossy.w[i], exact.w[i], 1e-5) << "element " << i;
    if (comm::Communicator::world().rank() == 0) {
      EXPECT_LT(lossy.inbound, exact.inbound);
    }
  }
}

TEST_P(SparseExchange, AWholeRoundSendsEveryChangeKeptBackInItsOwnValues) {
  core::Settings s = exact();
  s.sparse_rows = 0.1;  // one row of each table per learner and round: each changes two of table 0
  s.sparse_values = core::ExchangeType::Float16;
  const Outcome whole = exchange(s, GetParam(), 3, {}, {}, trained, {}, {2});
  const Outcome full = exchange(s, GetParam(), 3, {2});
  const Outcome regular = exchange(s, GetParam(), 3, {});
  s.sparse_rows = 1.0;
  s.sparse_values = core::ExchangeType::Float32;
  const Outcome exact = exchange(s, GetParam(), 3, {});
  expect_same_everywhere(whole.global);
  // The global weights hold every change but the 16-bit rounding, which waits in the learners' own weights.
  float regular_gap = 0.0f;
  for (std::size_t i = 0; i < kSize; ++i) {
    EXPECT_NEAR(whole.global[i], exact.w[i], 2e-3) << "element " << i;
    regular_gap = std::max(regular_gap, std::abs(regular.global[i] - exact.w[i]));
  }
  EXPECT_GT(regular_gap, 0.1f);  // a regular round leaves most rows' changes back
  // A learner keeps back only the rounding of its changes (about 2^-11 of values up to 3 here).
  if (comm::Communicator::world().rank() != 0) {
    for (std::size_t i = 0; i < kSize; ++i) EXPECT_NEAR(whole.w[i], whole.global[i], 5e-3) << "element " << i;
  } else {
    EXPECT_LT(whole.inbound, full.inbound);  // 16-bit values, not float32
  }
}

// A full round gives back its buffers: the rounds after it start from empty ones and exchange as before.
TEST_P(SparseExchange, RoundsAfterAFullRoundExchangeAsBefore) {
  core::Settings s = exact();
  s.sparse_rows = 0.1;
  s.sparse_values = core::ExchangeType::Float16;
  const Outcome with = exchange(s, GetParam(), 5, {1, 4});
  s.sparse_rows = 1.0;
  s.sparse_values = core::ExchangeType::Float32;
  const Outcome exact = exchange(s, GetParam(), 5, {});
  expect_same_everywhere(with.w);
  for (std::size_t i = 0; i < kSize; ++i) EXPECT_NEAR(with.w[i], exact.w[i], 2e-3) << "element " << i;
  const Outcome twice = exchange(s, GetParam(), 5, {0, 2});  // exact settings: a full round changes nothing
  for (std::size_t i = 0; i < kSize; ++i) EXPECT_EQ(twice.w[i], exact.w[i]) << "element " << i;
}

TEST_P(SparseExchange, TheRowsTheModelSaysItWroteGiveTheSameExchange) {
  // Every changed row named: the same bits as reading every row, exact or lossy (waiting rows are read too).
  for (const double rows : {1.0, 0.1}) {
    core::Settings s = exact();
    s.sparse_rows = rows;
    const Outcome all = exchange(s, GetParam(), 3, {});
    const Outcome named = exchange(s, GetParam(), 3, {}, wrote);
    for (std::size_t i = 0; i < kSize; ++i) {
      EXPECT_EQ(named.w[i], all.w[i]) << "rows " << rows << ", element " << i;
      EXPECT_EQ(named.global[i], all.global[i]) << "rows " << rows << ", element " << i;
    }
  }
}

TEST_P(SparseExchange, ARowThatWaitedIsSentThoughTheModelWritesItNoMore) {
  core::Settings s = exact();
  s.sparse_rows = 0.1;  // one row of each table per learner and round: each changed two of table 0
  // Round 0 trains and names its rows; round 1 trains nothing and names none: the row round 0 kept back goes.
  const auto nothing_after_round_0 = [](int l, int round) {
    return round == 0 ? wrote(l, round) : bridge::WrittenRows{std::vector<std::uint32_t>{}, {}};
  };
  const auto train_round_0 = [](int l, const std::vector<float>& w, int round) {
    return round == 0 ? trained(l, w, round) : w;
  };
  const Outcome run = exchange(s, GetParam(), 2, {}, nothing_after_round_0, train_round_0);
  expect_same_everywhere(run.global);
  const auto expected = dense_average(start(), 0);
  for (std::size_t i = 0; i < kSize; ++i) {
    EXPECT_NEAR(run.global[i], expected[i], 1e-5) << "element " << i;
    EXPECT_EQ(run.w[i], run.global[i]) << "kept back: element " << i;
  }
}

TEST_P(SparseExchange, RowsThatWaitGoLargestFirstThoughNothingWritesThemAgain) {
  core::Settings s = exact();
  s.sparse_rows = 0.1;  // one row of each table per learner and round
  // Round 0: every learner moves rows 0, 1, 2 of table 0 by 3, 1, 2 and names them; later rounds train nothing.
  const auto train = [](int, const std::vector<float>& w, int round) {
    std::vector<float> out = w;
    if (round == 0)
      for (int row : {0, 1, 2})
        for (int c = 0; c < 4; ++c) out[static_cast<std::size_t>(row * 4 + c)] += row == 0 ? 3.0f : float(row);
    return out;
  };
  const auto written = [](int, int round) {
    return bridge::WrittenRows{round == 0 ? std::vector<std::uint32_t>{0, 1, 2} : std::vector<std::uint32_t>{},
                               std::vector<std::uint32_t>{}};
  };
  // Round 0 sends row 0; round 1 the larger of the rows that waited, row 2, though nothing wrote it again.
  const Outcome run = exchange(s, GetParam(), 2, {}, written, train);
  expect_same_everywhere(run.global);
  const auto s0 = start();
  for (std::size_t c = 0; c < 4; ++c) {
    EXPECT_NEAR(run.global[c], s0[c] + 3.0f, 1e-5) << "row 0";
    EXPECT_EQ(run.global[4 + c], s0[4 + c]) << "row 1 waits";
    EXPECT_NEAR(run.global[8 + c], s0[8 + c] + 2.0f, 1e-5) << "row 2";
  }
}

TEST_P(SparseExchange, ARowTheModelDoesNotNameWaitsForAFullRound) {
  // Learner l names only row l of table 0, not row l-1, which it changed too.
  const auto half = [](int l, int) {
    return bridge::WrittenRows{std::vector<std::uint32_t>{std::uint32_t(l)}, std::vector<std::uint32_t>{0}};
  };
  const Outcome partial = exchange(exact(), GetParam(), 1, {}, half);
  // Row 0 of table 0, which only learner 1 changed and did not name, is not in the global weights yet.
  const auto s0 = start();
  for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(partial.global[i], s0[i]) << "element " << i;
  if (comm::Communicator::world().rank() == 1) {
    for (std::size_t i = 0; i < 4; ++i) EXPECT_NE(partial.w[i], partial.global[i]) << "element " << i;
  }
  // A full round reads every row: the two rounds together are the dense exchange's.
  const Outcome caught_up = exchange(exact(), GetParam(), 2, {1}, half);
  expect_same_everywhere(caught_up.w);
  const auto expected = dense_average(dense_average(start(), 0), 1);
  for (std::size_t i = 0; i < kSize; ++i) EXPECT_NEAR(caught_up.w[i], expected[i], 1e-5) << "element " << i;
}

TEST_P(SparseExchange, OnSeveralHostsEveryMemberTakesTheSameBitsAsOnOne) {
  // These ranks share one host; RoundSync follows the made-up hosts it is given: the Dispatcher alone and the
  // learners on two hosts, whose relays pass the other host's sums on; the Dispatcher with learners 2, 4, whose
  // relay passes it the others'; every member on a host of its own.
  const int size = learners() + 1;
  std::vector<std::vector<int>> layouts{{9}, {}, {}};
  for (int r = 1; r < size; ++r) layouts[0].push_back(r % 2);
  for (int r = 0; r < size; ++r) layouts[1].push_back(r % 2);
  for (int r = 0; r < size; ++r) layouts[2].push_back(r);
  core::Settings lossy = exact();
  lossy.sparse_rows = 0.1;
  lossy.sparse_values = core::ExchangeType::Float16;
  core::Settings int8 = lossy;
  int8.sparse_values = core::ExchangeType::Int8;
  for (const core::Settings& s : {exact(), lossy, int8}) {
    const Outcome one = exchange(s, GetParam(), 3, {}, wrote);
    for (const auto& hosts : layouts) {
      const Outcome several = exchange(s, GetParam(), 3, {}, wrote, trained, hosts);
      expect_same_everywhere(several.global);
      for (std::size_t i = 0; i < kSize; ++i) {
        ASSERT_EQ(several.w[i], one.w[i]) << "element " << i << ", hosts of rank 1: " << hosts[1];
        ASSERT_EQ(several.global[i], one.global[i]) << "element " << i;
      }
      EXPECT_EQ(several.inbound, one.inbound);
    }
  }
}

// Tables large enough for the exchange to share its row work among threads (kRowGrain rows a thread at least).
const training::Layout kLargeLayout{{0, 40000, 4}, {160000, 9000, 2}};
constexpr std::size_t kLargeSize = 178000;

// `rounds` rounds on kLargeLayout, each learner changing a different scattered half of the rows by different
// amounts; the last round full when `end_full`.
Outcome large_exchange(const core::Settings& s, Publisher publisher, int rounds, bool end_full) {
  auto world = comm::Communicator::world();
  const comm::WaitPolicy waits;
  std::vector<int> ranks;
  for (int l = 1; l <= learners(); ++l) ranks.push_back(l);
  training::RoundSync sync(world, waits, 20.0, ranks, {});
  Member sparse(sync, kLargeLayout, s, publisher);
  std::vector<float> w(kLargeSize);
  for (std::size_t i = 0; i < kLargeSize; ++i) w[i] = 0.001f * static_cast<float>(i % 977);
  if (sparse.learner) sparse.learner->start_from(w);
  for (int r = 0; r < rounds; ++r) {
    const RoundKind kind = end_full && r == rounds - 1 ? RoundKind::Full : RoundKind::Regular;
    if (sparse.dispatcher) {
      sparse.dispatcher_round(w, kind);
    } else {
      const auto l = static_cast<std::size_t>(world.rank());
      for (const auto& tab : kLargeLayout)
        for (std::size_t row = 0; row < tab.rows; ++row) {
          if ((row * 7 + l + static_cast<std::size_t>(r)) % 2 != 0) continue;
          for (std::size_t c = 0; c < tab.cols; ++c)
            w[tab.offset + row * tab.cols + c] += 0.01f * static_cast<float>((row * 13 + c * l + 5 * r) % 101);
        }
      sparse.learner->learner_round(w, 1.0 / learners(), kind);
    }
  }
  return sparse.outcome(std::move(w));
}

TEST_P(SparseExchange, ThreadsShareTheRowWorkAndGiveTheSameBits) {
  core::Settings top = exact();
  top.sparse_rows = 0.2;
  top.sparse_values = core::ExchangeType::Float16;
  top.sparse_weighting = core::SparseWeighting::Touched;
  core::Settings defaults = exact();
  defaults.sparse_values = core::ExchangeType::BFloat16;
  core::Settings int8 = top;
  int8.sparse_values = core::ExchangeType::Int8;
  for (core::Settings s : {exact(), top, defaults, int8}) {
    s.exchange_threads = 1;
    const Outcome one = large_exchange(s, GetParam(), 3, true);
    s.exchange_threads = 4;
    const Outcome four = large_exchange(s, GetParam(), 3, true);
    expect_same_everywhere(four.global);
    for (std::size_t i = 0; i < kLargeSize; ++i) {
      ASSERT_EQ(four.w[i], one.w[i]) << "element " << i << ", sparse_rows " << s.sparse_rows;
      ASSERT_EQ(four.global[i], one.global[i]) << "element " << i << ", sparse_rows " << s.sparse_rows;
    }
    EXPECT_EQ(four.inbound, one.inbound);
    // Something moved: the rounds changed the global weights.
    EXPECT_NE(one.global[8], 0.001f * 8.0f);
  }
}

TEST_P(SparseExchange, ByDefaultEachMemberTakesItsShareOfItsHostsCores) {
  auto world = comm::Communicator::world();
  const comm::WaitPolicy waits;
  std::vector<int> ranks;
  for (int l = 1; l <= learners(); ++l) ranks.push_back(l);
  std::vector<int> own_host(static_cast<std::size_t>(world.size()));
  for (int r = 0; r < world.size(); ++r) own_host[static_cast<std::size_t>(r)] = r;
  core::Settings s = exact();
  const auto threads = [&](const std::vector<int>& hosts) {
    training::RoundSync sync(world, waits, 20.0, ranks, hosts);
    return Member(sync, kLargeLayout, s, GetParam()).threads();
  };
  EXPECT_EQ(threads({}), core::share_of_cores(static_cast<unsigned>(world.size())));
  EXPECT_EQ(threads(own_host), core::share_of_cores(1));
  s.exchange_threads = 3;
  EXPECT_EQ(threads({}), 3u);
}

INSTANTIATE_TEST_SUITE_P(Publishers, SparseExchange, ::testing::Values(Publisher::Owners, Publisher::Dispatcher),
                         [](const auto& info) { return info.param == Publisher::Owners ? "owners" : "dispatcher"; });

FEDAVG_MPI_TEST_MAIN
