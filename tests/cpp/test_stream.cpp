// The stream protocol between two stages: credit-bounded sends, then the Shutdown/ShutdownAck handshake
// while blocks are still in flight, which must leave no send pending. Runs under mpiexec -n 2, time-limited by
// meson (timeout 60 s, MPIEXEC_TIMEOUT=50).
#include <gtest/gtest.h>

#include "comm/credit_line.hpp"
#include "comm/messages.hpp"
#include "comm/outbox.hpp"
#include "mpi_main.hpp"

using namespace fedavg::comm;

TEST(Stream, ShutdownWhileLargeBlocksAreInFlight) {
  auto world = Communicator::world();
  const auto deadline = Deadline::after(20);
  constexpr int kUp = 0, kDown = 1;
  if (world.rank() == kUp) {
    Outbox out(world);
    CreditLine line(world, kDown, "downstream");
    int sent = 0;
    IdleWatch watch(20);
    while (!line.stopped()) {
      out.retire();
      bool progress = line.poll();
      if (line.can_send()) {
        // 1 MiB blocks travel by rendezvous: they stay pending until the receiver takes them.
        out.send(std::vector<std::int32_t>(1 << 18, sent++), kDown, Tag::Tokens);
        line.spend();
        progress = true;
      }
      progress ? watch.progress() : watch.idle([] { return std::string("credit"); });
    }
    acknowledge_stop(out, kDown, deadline);
    EXPECT_GE(sent, 3);
  } else {
    Outbox out(world);
    out.send(Credit{3}.encode(), kUp, Tag::Credit);
    std::vector<std::int32_t> block;
    int got = 0;
    poll_until(
        [&] {
          auto a = world.probe(kUp, Tag::Tokens);
          if (a) {
            world.receive(*a, block);
            EXPECT_EQ(block.size(), 1u << 18);
            EXPECT_EQ(block[0], got);
            ++got;
            if (got < 2) out.send(Credit{1}.encode(), kUp, Tag::Credit);
          }
          return got == 2;
        },
        deadline, "two blocks");
    // The upstream still has up to two blocks in flight: stop must drain them.
    stop_upstream(world, kUp, "upstream", deadline);
    out.flush(deadline);
    EXPECT_FALSE(world.probe(kUp, std::nullopt).has_value());
  }
  world.ibarrier().wait_until(deadline);
}

FEDAVG_MPI_TEST_MAIN
