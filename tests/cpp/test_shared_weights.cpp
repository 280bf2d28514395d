// hogwild's shared weights between a Dispatcher (rank 0) and two learners: every member maps the same array,
// writes by one are seen by the others after sync and a message, the trained-windows counters add up, and the
// members' claims of batches stop at the limit. Runs under mpiexec -n 3, time-limited by meson (timeout 60 s,
// MPIEXEC_TIMEOUT=50).
#include <gtest/gtest.h>

#include "comm/shared_weights.hpp"
#include "mpi_main.hpp"

using namespace fedavg;

TEST(SharedWeights, EveryMemberSeesTheSameArrayAndCounters) {
  auto world = comm::Communicator::world();
  ASSERT_EQ(world.size(), 3);
  const std::size_t n = 320001;  // an odd size: the array must not be rounded
  const auto deadline = comm::Deadline::after(20);
  comm::SharedWeights shared(world, world.rank() == 0 ? n : 0, deadline);
  EXPECT_EQ(shared.size(), n);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(shared.data()) % 64, 0u) << "rows must start on a cache line";
  if (world.rank() == 0) {
    EXPECT_EQ(shared.data()[n - 1], 0.0f);  // zeros until written
    for (std::size_t i = 0; i < n; ++i) shared.data()[i] = static_cast<float>(i % 1000);
  }
  shared.sync();
  world.ibarrier().wait_until(deadline);
  shared.sync();
  // Each learner owns every other element and adds to its counter; the Dispatcher checks both after the next barrier.
  if (world.rank() != 0) {
    const int l = world.rank() - 1;
    const std::size_t last_of_mine = n - 1 - static_cast<std::size_t>((n - 1 - l) % 2);  // not yet touched
    EXPECT_EQ(shared.data()[last_of_mine], static_cast<float>(last_of_mine % 1000));
    for (std::size_t i = static_cast<std::size_t>(l); i < n; i += 2) shared.data()[i] += 1.0f;
    for (int k = 0; k < 10; ++k) shared.add_trained(l, 100 * (l + 1));
  }
  shared.sync();
  world.ibarrier().wait_until(deadline);
  shared.sync();
  EXPECT_EQ(shared.trained(), 1000 + 2000);
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i) wrong += shared.data()[i] != static_cast<float>(i % 1000) + 1.0f;
  EXPECT_EQ(wrong, 0u);
  shared.release(deadline);
}

TEST(SharedWeights, ClaimsAddUpToTheLimitAndNoFurther) {
  // Every member claims batches as fast as it can against a running total: together they get exactly the total,
  // each time it is raised, however their claims interleave.
  auto world = comm::Communicator::world();
  const auto deadline = comm::Deadline::after(20);
  comm::SharedWeights shared(world, world.rank() == 0 ? 8 : 0, deadline);
  for (const std::int64_t limit : {std::int64_t{5000}, std::int64_t{5000}, std::int64_t{12000}}) {
    std::int64_t mine = 0;
    for (std::int64_t at = shared.claim(limit); at >= 0; at = shared.claim(limit)) {
      EXPECT_LT(at, limit);
      ++mine;
    }
    EXPECT_EQ(shared.claim(limit), -1);
    shared.data()[world.rank()] += static_cast<float>(mine);
    shared.sync();
    world.ibarrier().wait_until(deadline);
    shared.sync();
    EXPECT_EQ(shared.data()[0] + shared.data()[1] + shared.data()[2], static_cast<float>(limit));
    world.ibarrier().wait_until(deadline);
  }
  shared.release(deadline);
}

TEST(SharedWeights, AReleasedWindowCanBeMappedAgain) {
  auto world = comm::Communicator::world();
  const auto deadline = comm::Deadline::after(20);
  for (int k = 0; k < 3; ++k) {
    comm::SharedWeights shared(world, world.rank() == 0 ? 1000 : 0, deadline);
    EXPECT_EQ(shared.size(), 1000u);
    EXPECT_EQ(shared.trained(), 0);
    shared.release(deadline);
  }
}

FEDAVG_MPI_TEST_MAIN
