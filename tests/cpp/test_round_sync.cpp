// The round's weight exchange between the Dispatcher (rank 0) and its learners: the broadcast down the learner
// tree, the windows totals, the averaging (point-to-point Average messages summed along the learner tree, so the
// Dispatcher receives one copy) and bsp's ring allreduce, all in chunks that do not divide the weights evenly.
// Each over one host and over made-up host layouts. Runs under mpiexec -n 3 and -n 6, time-limited by meson
// (timeout 60 s, MPIEXEC_TIMEOUT=50).
#include <gtest/gtest.h>

#include <cstring>

#include "mpi_main.hpp"
#include "training/collectives/round_sync.hpp"

using namespace fedavg;

namespace {

// Learner l's pre-scaled weights in the test: distinct per learner and per element.
std::vector<float> learner_weights(int l, std::size_t n) {
  std::vector<float> w(n);
  for (std::size_t i = 0; i < n; ++i) w[i] = 0.25f * static_cast<float>(l) + 1e-3f * static_cast<float>(i % 1000);
  return w;
}

// Host layouts to run the tree and ring over (RoundSync follows the hosts it is given; these ranks all share
// one): one host, and learners spread over made-up hosts: with 5 learners, learner 1 then has two children on its
// host and two other hosts' learners as children, and the ring goes 1 3 5 2 4.
std::vector<std::vector<int>> layouts(int size) {
  if (size == 3) return {{}, {0, 5, 3}};
  if (size == 6) return {{}, {0, 1, 1, 1, 2, 3}, {0, 1, 2, 1, 2, 1}};
  return {{}};
}

}  // namespace

TEST(RoundSync, DispatcherReceivesTheSumOfTwoLearnersWeights) {
  auto world = comm::Communicator::world();
  if (world.size() != 3) GTEST_SKIP() << "a Dispatcher and two learners";
  const std::size_t n = 320000;  // 1.3 MB: large enough to travel by rendezvous
  const comm::WaitPolicy waits;
  training::RoundSync sync(world, waits, 20.0, {1, 2}, {}, 100000);  // 4 chunks, the last one short
  std::vector<float> w = world.rank() == 0 ? std::vector<float>(n, 0.0f) : learner_weights(world.rank(), n);
  for (int round = 0; round < 3; ++round) {  // repeated: each round's messages match that round
    if (world.rank() != 0) w = learner_weights(world.rank() + round, n);
    std::vector<float> global(n);
    for (std::size_t i = 0; i < n; ++i) global[i] = world.rank() == 0 ? static_cast<float>(i + round) : -1.0f;
    sync.weights(global);
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(global[i], static_cast<float>(i + round)) << "element " << i;
    const double mine = world.rank() == 0 ? 0.0 : 100.0 * world.rank();
    const comm::WindowTotals t = sync.totals(
        {mine, 1.0, 0.0, 0.0, {world.rank() == 1 ? mine : 0.0, world.rank() == 2 ? mine : 0.0}});
    EXPECT_EQ(t.windows, 300.0);
    EXPECT_EQ(t.loss_sum, 3.0);
    EXPECT_EQ(t.pipeline_windows, (std::vector<double>{100.0, 200.0}));
    if (world.rank() == 0) std::fill(w.begin(), w.end(), 0.0f);
    sync.average_into_root(w, world.rank() == 1 ? 0.5f : 0.25f);  // the learners' shares
    if (world.rank() == 0) {
      const auto a = learner_weights(1 + round, n), b = learner_weights(2 + round, n);
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(w[i], 0.5f * a[i] + 0.25f * b[i]) << "element " << i << " round " << round;
    }
  }
  EXPECT_EQ(sync.weight_bytes(), 3 * 2 * 2.0 * n * sizeof(float));
  world.ibarrier().wait_until(comm::Deadline::after(20));
}

TEST(RoundSync, TheTreeSumsEveryLearnersWeightsAndTheDispatcherReceivesOneCopy) {
  auto world = comm::Communicator::world();
  const std::size_t n = 100000;
  const comm::WaitPolicy waits;
  std::vector<int> learners;
  for (int r = 1; r < world.size(); ++r) learners.push_back(r);
  for (const auto& hosts : layouts(world.size())) {
    training::RoundSync sync(world, waits, 20.0, learners, hosts, 48000);  // 9 chunks, the last one short
    std::vector<float> w = world.rank() == 0 ? std::vector<float>(n, 0.0f) : learner_weights(world.rank(), n);
    sync.average_into_root(w, 1.0f);
    if (world.rank() == 0) {
      std::vector<double> sum(n, 0.0);
      for (int l = 1; l < world.size(); ++l) {
        const auto x = learner_weights(l, n);
        for (std::size_t i = 0; i < n; ++i) sum[i] += x[i];
      }
      for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(w[i], sum[i], 1e-4) << "element " << i;
      EXPECT_EQ(sync.inbound_bytes(), static_cast<double>(n * sizeof(float)));
    }
    world.ibarrier().wait_until(comm::Deadline::after(20));
  }
}

TEST(RoundSync, FromLearnerOneEveryLearnerTakesTheSumTheDispatcherReceived) {
  auto world = comm::Communicator::world();
  const std::size_t n = 50000;
  const comm::WaitPolicy waits;
  std::vector<int> learners;
  for (int r = 1; r < world.size(); ++r) learners.push_back(r);
  for (const auto& hosts : layouts(world.size())) {
    training::RoundSync sync(world, waits, 20.0, learners, hosts, 48000);
    std::vector<float> w = world.rank() == 0 ? std::vector<float>(n, 0.0f) : learner_weights(world.rank(), n);
    sync.average_into_root(w, 1.0f / static_cast<float>(world.size() - 1));
    const double before = sync.weight_bytes();
    sync.weights(w, true);  // learner 1 passes its sum on; the Dispatcher sends nothing
    // Learner-to-learner copies only: every learner but learner 1 receives one.
    EXPECT_EQ(sync.weight_bytes() - before, static_cast<double>(world.size() - 2) * n * sizeof(float));
    std::vector<float> dispatchers = w;
    world.ibcast(dispatchers.data(), n, 0).wait_until(comm::Deadline::after(20));
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(w[i], dispatchers[i]) << "element " << i << " rank " << world.rank();
    world.ibarrier().wait_until(comm::Deadline::after(20));
  }
}

TEST(RoundSync, DownTheTreeEveryLearnerTakesTheSizeAndBytesTheDispatcherSent) {
  auto world = comm::Communicator::world();
  const comm::WaitPolicy waits;
  std::vector<int> learners;
  for (int r = 1; r < world.size(); ++r) learners.push_back(r);
  training::RoundSync sync(world, waits, 20.0, learners, {}, 1000);
  // Several chunks with a short last one, a whole number of chunks, nothing, and less than a chunk.
  for (const std::size_t n : {4321u, 3000u, 0u, 17u}) {
    std::vector<std::uint8_t> data(world.rank() == 0 ? n : 5, 0);
    if (world.rank() == 0)
      for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<std::uint8_t>(i * 7 + n);
    sync.down_tree(data, comm::Tag::RowGlobal, true);
    ASSERT_EQ(data.size(), n) << "rank " << world.rank();
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_EQ(data[i], static_cast<std::uint8_t>(i * 7 + n)) << "byte " << i << " of " << n;
  }
  world.ibarrier().wait_until(comm::Deadline::after(20));
}

TEST(RoundSync, TheRingGivesEveryLearnerAndTheDispatcherTheSameSum) {
  auto world = comm::Communicator::world();
  const comm::WaitPolicy waits;
  std::vector<int> learners;
  for (int r = 1; r < world.size(); ++r) learners.push_back(r);
  const int l = world.size() - 1;
  for (const auto& hosts : layouts(world.size())) {
    training::RoundSync sync(world, waits, 20.0, learners, hosts, 4000);  // 1000 floats a chunk
    // Segments of several chunks with a short last one, of less than a chunk, fewer elements than learners
    // (some segments empty), and none.
    for (const std::size_t n : {25013u, 2500u, 3u, 0u}) {
      const double bytes_before = sync.weight_bytes(), inbound_before = sync.inbound_bytes();
      std::vector<float> w = world.rank() == 0 ? std::vector<float>(n, -7.0f) : learner_weights(world.rank(), n);
      sync.allreduce_in_place(w);
      std::vector<double> sum(n, 0.0);
      for (int r = 1; r < world.size(); ++r) {
        const auto x = learner_weights(r, n);
        for (std::size_t i = 0; i < n; ++i) sum[i] += x[i];
      }
      for (std::size_t i = 0; i < n; ++i) ASSERT_NEAR(w[i], sum[i], 1e-4) << "element " << i << " of " << n;
      // Bit for bit the same everywhere: rank 0's copy against every other.
      std::vector<float> dispatchers = w;
      world.ibcast(dispatchers.data(), n, 0).wait_until(comm::Deadline::after(20));
      for (std::size_t i = 0; i < n; ++i)
        ASSERT_EQ(std::memcmp(&w[i], &dispatchers[i], sizeof(float)), 0) << "element " << i << " rank " << world.rank();
      EXPECT_EQ(sync.weight_bytes() - bytes_before, (2.0 * l - 1) * n * sizeof(float));
      if (world.rank() == 0) {
        EXPECT_EQ(sync.inbound_bytes() - inbound_before, static_cast<double>(n * sizeof(float)));
      }
    }
    world.ibarrier().wait_until(comm::Deadline::after(20));
  }
}

TEST(RoundSync, SameEverywhereTellsWhetherEveryMemberHoldsTheSameValue) {
  auto world = comm::Communicator::world();
  const comm::WaitPolicy waits;
  training::RoundSync sync(world, waits, 20.0, {1, 2}, {});
  EXPECT_TRUE(sync.same_everywhere(12345.0));
  EXPECT_FALSE(sync.same_everywhere(world.rank() == 2 ? 1.0 : 2.0));
  EXPECT_FALSE(sync.same_everywhere(static_cast<double>(world.rank())));
  world.ibarrier().wait_until(comm::Deadline::after(20));
}

FEDAVG_MPI_TEST_MAIN
