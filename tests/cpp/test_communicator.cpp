// Point-to-point messages past 2^31 elements (a 10^6-word model's rows in float32 are 2.4 GB): sent, sized on
// arrival and received whole; the host names gathered at rank 0. Runs under mpiexec -n 2, time-limited by meson
// (timeout 120 s, MPIEXEC_TIMEOUT=110).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/wait.hpp"
#include "mpi_main.hpp"

using namespace fedavg::comm;

TEST(Communicator, MessagePastTwoToTheThirtyOneBytes) {
  auto world = Communicator::world();
  const auto deadline = Deadline::after(90);
  const std::size_t n = (std::size_t{1} << 31) + 4099;  // more bytes than an int counts
  // Every 4 KiB a mark that tells the pages apart, and the last byte.
  const auto mark = [](std::size_t i) { return static_cast<std::uint8_t>(i / 4096 * 7 + 1); };
  if (world.rank() == 0) {
    std::vector<std::uint8_t> out(n);
    for (std::size_t i = 0; i < n; i += 4096) out[i] = mark(i);
    out[n - 1] = 0xA5;
    world.isend(out.data(), out.size(), 1, Tag::RowDelta).wait_until(deadline);
  } else {
    const Arrival a = world.await_message(0, Tag::RowDelta, deadline, "the large message");
    ASSERT_EQ(a.count<std::uint8_t>(), n);
    std::vector<std::uint8_t> in;
    world.receive(a, in);
    ASSERT_EQ(in.size(), n);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; i += 4096) wrong += in[i] != mark(i);
    EXPECT_EQ(wrong, 0u);
    EXPECT_EQ(in[n - 1], 0xA5);
  }
  world.ibarrier().wait_until(deadline);
}

TEST(Communicator, HostNamesAreGatheredAtRankZero) {
  auto world = Communicator::world();
  const auto names = world.host_names();
  std::vector<char> mine(MPI_MAX_PROCESSOR_NAME + 1, '\0');
  int length = 0;
  MPI_Get_processor_name(mine.data(), &length);
  if (world.rank() == 0) {
    ASSERT_EQ(names.size(), static_cast<std::size_t>(world.size()));
    for (const auto& name : names) EXPECT_EQ(name, std::string(mine.data(), static_cast<std::size_t>(length)));
  } else {
    EXPECT_TRUE(names.empty());
  }
}

FEDAVG_MPI_TEST_MAIN
