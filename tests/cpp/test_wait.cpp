// The wait helpers: a wait that never completes ends in a Timeout naming what was awaited, and waiting costs
// almost no CPU. Runs under mpiexec -n 2, time-limited by meson (timeout 60 s, MPIEXEC_TIMEOUT=50).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <thread>

#include "comm/communicator.hpp"
#include "comm/error.hpp"
#include "mpi_main.hpp"

using namespace fedavg::comm;

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

}  // namespace

TEST(Wait, PollUntilTimesOutNamingWhatWasAwaited) {
  const auto start = Clock::now();
  try {
    poll_until([] { return false; }, Deadline::after(0.3), "a batch from Batcher rank 3");
    FAIL() << "expected a Timeout";
  } catch (const Timeout& e) {
    EXPECT_NE(std::string(e.what()).find("a batch from Batcher rank 3"), std::string::npos) << e.what();
  }
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(300));
}

TEST(Wait, IdleWatchThrowsOnlyAfterTheLivenessLimit) {
  IdleWatch w(0.2);
  const auto start = Clock::now();
  int passes = 0;
  try {
    for (;;) {
      ++passes;
      if (passes == 5) w.progress();
      w.idle([] { return std::string("tokens from Tokenizer rank 1"); });
    }
  } catch (const Timeout& e) {
    EXPECT_NE(std::string(e.what()).find("Tokenizer rank 1"), std::string::npos);
  }
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(200));
}

TEST(Wait, ReceiveFromAPeerThatNeverSendsTimesOutCheaply) {
  auto world = Communicator::world();
  const double cpu0 = cpu_seconds();
  const auto t0 = Clock::now();
  EXPECT_THROW(poll_until([&] { return world.probe(1 - world.rank(), Tag::Batch).has_value(); }, Deadline::after(1.0),
                          "a batch"),
               Timeout);
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  const double cpu = cpu_seconds() - cpu0;
  // A busy-polling wait would use ~100 % of a core; ours sleeps between polls.
  EXPECT_LT(cpu / wall, 0.10) << "waiting used " << cpu << " s of CPU in " << wall << " s";
  world.ibarrier().wait_until(Deadline::after(10));
}

TEST(Wait, BarrierCompletesAndIdleRankSleeps) {
  auto world = Communicator::world();
  const double cpu0 = cpu_seconds();
  const auto t0 = Clock::now();
  if (world.rank() == 1) std::this_thread::sleep_for(std::chrono::milliseconds(800));
  world.ibarrier().wait_until(Deadline::after(10));
  if (world.rank() == 0) {
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    EXPECT_GE(wall, 0.7);
    EXPECT_LT((cpu_seconds() - cpu0) / wall, 0.10);
  }
}

TEST(Wait, OneProbeSeesAMessageThatHasArrived) {
  // A polled wait looks once per wake-up: if a probe missed messages already there, every hand-off would cost a
  // poll interval (1-50 ms). MPICH 4.0 ch4:ucx needs two MPI_Iprobe calls for that; probe() makes them.
  auto world = Communicator::world();
  const int peer = 1 - world.rank();
  int seen_at_once = 0;
  constexpr int kTries = 20;
  for (int i = 0; i < kTries; ++i) {
    world.ibarrier().wait_until(Deadline::after(10));
    if (world.rank() == 1) {
      const std::int64_t x = i;
      world.isend(&x, 1, peer, Tag::Cut).wait_until(Deadline::after(10));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(3));  // the message is in by now
      if (world.probe(peer, Tag::Cut)) ++seen_at_once;
      std::int64_t x = -1;
      world.receive_into(world.await_message(peer, Tag::Cut, Deadline::after(10), "the test message"), &x, 1);
      EXPECT_EQ(x, i);
    }
  }
  if (world.rank() == 0) {
    EXPECT_GE(seen_at_once, kTries - 2) << "probe() missed messages that had arrived";
  }
  world.ibarrier().wait_until(Deadline::after(10));
}

FEDAVG_MPI_TEST_MAIN
