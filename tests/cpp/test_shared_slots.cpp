// Each member's values of a round in shared memory (comm::SharedSlots) among three ranks on one node: rank 0
// reads the sum once every member posted the round; posting never waits for the reader; a slot refuses a round
// that is not above its last and values of the wrong length. Runs under mpiexec -n 3, time-limited by meson
// (timeout 60 s, MPIEXEC_TIMEOUT=50).
#include <gtest/gtest.h>

#include <vector>

#include "comm/shared_slots.hpp"
#include "core/error.hpp"
#include "mpi_main.hpp"

using namespace fedavg;

namespace {

std::vector<double> values_of(int rank, long round) {
  return {1.0, 10.0 * rank, static_cast<double>(round), rank == 2 ? 0.5 : 0.0};
}

}  // namespace

TEST(SharedSlots, TheReaderSumsEachRoundOnceEveryMemberPostedIt) {
  auto world = comm::Communicator::world();
  ASSERT_EQ(world.size(), 3);
  const auto deadline = comm::Deadline::after(20);
  comm::SharedSlots slots(world, 4, deadline);
  EXPECT_EQ(slots.values(), 4u);
  EXPECT_EQ(slots.members(), 3);
  const int me = world.rank();
  for (long round = 1; round <= 50; ++round) {
    if (me != 0) {
      // Posted without waiting for rank 0, which enters the barrier below before it posts its own.
      slots.post(round, values_of(me, round));
      world.ibarrier().wait_until(deadline);
    } else {
      world.ibarrier().wait_until(deadline);
      EXPECT_FALSE(slots.all_posted(round)) << "round " << round << " posted before rank 0 posted it";
      slots.post(round, values_of(me, round));
      ASSERT_TRUE(slots.all_posted(round));
      EXPECT_FALSE(slots.all_posted(round + 1));
      const std::vector<double> want{3.0, 30.0, 3.0 * static_cast<double>(round), 0.5};
      EXPECT_EQ(slots.sum(), want) << "round " << round;
    }
    // The next round is posted only once rank 0 read this one (HostShare's protocol: the next Control).
    world.ibarrier().wait_until(deadline);
  }
  slots.release(deadline);
}

TEST(SharedSlots, ASlotRefusesAnOldRoundAndValuesOfTheWrongLength) {
  auto world = comm::Communicator::world();
  const auto deadline = comm::Deadline::after(20);
  comm::SharedSlots slots(world, 2, deadline);
  slots.post(5, {1.0, 2.0});
  EXPECT_THROW(slots.post(5, {1.0, 2.0}), core::Error);
  EXPECT_THROW(slots.post(4, {1.0, 2.0}), core::Error);
  EXPECT_THROW(slots.post(6, {1.0, 2.0, 3.0}), core::Error);
  world.ibarrier().wait_until(deadline);
  EXPECT_TRUE(slots.all_posted(5));
  EXPECT_EQ(slots.sum(), (std::vector<double>{3.0, 6.0}));  // the refused posts changed nothing
  world.ibarrier().wait_until(deadline);
  slots.release(deadline);
}

FEDAVG_MPI_TEST_MAIN
