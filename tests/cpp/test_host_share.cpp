// A host's learners that share their weights (training::HostShare) on one host: a Dispatcher (rank 0) and two
// learners. Both learners map the same weights; the leader (rank 1) takes the rows both marked, per table, with its
// own, and none of a table its own rows say nothing of; a row past its table is refused. A round's window totals:
// the other learner posts its own and goes on, the leader gets the host's sum. Runs under mpiexec -n 3,
// time-limited by meson (timeout 60 s, MPIEXEC_TIMEOUT=50).
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "comm/messages.hpp"
#include "comm/wait_policy.hpp"
#include "core/error.hpp"
#include "core/rank_map.hpp"
#include "mpi_main.hpp"
#include "training/collectives/topology.hpp"
#include "training/exchange/host_share.hpp"

using namespace fedavg;

namespace {

using Rows = std::vector<std::uint32_t>;

const training::Layout kLayout{{0, 10, 5}, {50, 20, 2}};  // two tables: 10 rows of 5, then 20 rows of 2

void barrier(const comm::Communicator& world) { world.ibarrier().wait_until(comm::Deadline::after(20)); }

}  // namespace

TEST(HostShare, TheLeaderTakesTheRowsItsHostMarked) {
  auto world = comm::Communicator::world();
  ASSERT_EQ(world.size(), 3);
  const comm::WaitPolicy waits;
  training::HostShare share(world, training::Topology(), core::RankMap(5, 1), waits, 20.0, 90);
  const int me = world.rank();
  if (me != 0) {
    EXPECT_EQ(share.learners_here(), 2);
    share.track_rows(kLayout);
    EXPECT_TRUE(share.tracks_rows());
  }
  if (me == 2) share.mark({Rows{1, 3}, Rows{0, 19}});
  barrier(world);
  if (me == 1) {
    ASSERT_TRUE(share.leader());
    // Its own rows: 0 and 3 of the first table; of the second it says nothing, so any row may have changed.
    const bridge::WrittenRows taken = share.take_written({Rows{0, 3}, std::nullopt});
    ASSERT_EQ(taken.size(), 2u);
    ASSERT_TRUE(taken[0].has_value());
    EXPECT_EQ(*taken[0], (Rows{0, 1, 3}));
    EXPECT_FALSE(taken[1].has_value());
    // Taken marks are cleared; the second table's stayed marked, as nothing took them.
    const bridge::WrittenRows next = share.take_written({Rows{}, Rows{5}});
    ASSERT_TRUE(next[0].has_value() && next[1].has_value());
    EXPECT_TRUE(next[0]->empty());
    EXPECT_EQ(*next[1], (Rows{0, 5, 19}));
    // A model that says nothing of its rows: every row may have changed.
    EXPECT_TRUE(share.take_written({}).empty());
    EXPECT_THROW(share.mark({Rows{10}, Rows{}}), core::Error);  // the first table has rows 0 to 9
  }
  barrier(world);
  if (me != 0) share.release();
}

TEST(HostShare, TheLeaderSumsTheRoundsTotalsWhileTheOthersGoOn) {
  auto world = comm::Communicator::world();
  const comm::WaitPolicy waits;
  training::HostShare share(world, training::Topology(), core::RankMap(5, 1), waits, 20.0, 90);
  const int me = world.rank();
  for (long round = 3; round <= 4; ++round) {
    comm::WindowTotals mine{100.0 * me, 2.0 * me, 0.1, 1.0, {100.0 * me}};
    mine.idle_seconds = 0.5;
    if (me == 2) {
      // Returns its own totals at once, before the leader has posted (it waits in the barrier below).
      const comm::WindowTotals got = share.host_totals(mine, round);
      EXPECT_EQ(got.windows, 200.0);
      barrier(world);
    } else if (me == 1) {
      barrier(world);
      const comm::WindowTotals host = share.host_totals(mine, round);
      EXPECT_EQ(host.windows, 300.0);
      EXPECT_EQ(host.loss_sum, 6.0);
      EXPECT_EQ(host.lr_reports, 2.0);
      EXPECT_EQ(host.idle_seconds, 1.0);
      EXPECT_EQ(host.pipeline_windows, std::vector<double>{300.0});
    } else {
      barrier(world);
    }
    barrier(world);  // the next round once the leader has read this one
  }
  if (me != 0) share.release();
}

FEDAVG_MPI_TEST_MAIN
