// comm::WaitChain and comm::Verdict: a wait whose peer waits in turn goes on; a peer that does not answer is named as
// stalled; a cycle of waits names the last rank the chain reached. Runs under mpiexec -n 3, time-limited by meson
// (timeout 60 s, MPIEXEC_TIMEOUT=50).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "comm/communicator.hpp"
#include "comm/error.hpp"
#include "comm/wait.hpp"
#include "comm/wait_chain.hpp"
#include "mpi_main.hpp"

using namespace fedavg::comm;

namespace {

constexpr double kLimit = 0.5;  // the waits under test; the others are far longer

// Waits, polling, for a message from `from`, blaming `peer` (the rank it says it waits on) after `seconds`.
void await_from(const Communicator& world, int from, int peer, double seconds) {
  poll_until([&] { return world.probe(from, Tag::Credit).has_value(); }, Deadline::after(seconds).on({peer}),
             "a message from rank " + std::to_string(from));
  world.discard(*world.probe(from, Tag::Credit));
}

void send_to(const Communicator& world, int dest) {
  const std::int32_t one = 1;
  world.isend(&one, 1, dest, Tag::Credit).wait_until(Deadline::after(30));
}

// What the wait of rank 0 on rank 1 says when it fails, or "" if it completes.
std::string failure_of(const std::function<void()>& wait) {
  try {
    wait();
  } catch (const Timeout& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(WaitChain, AWaitOnARankThatWaitsInTurnGoesOn) {
  auto world = Communicator::world();
  WaitChain chain;
  // 0 waits on 1, which waits on 2, which is busy past 0's limit and then sends: 0 does not blame 1.
  if (world.rank() == 0) {
    EXPECT_EQ(failure_of([&] { await_from(world, 1, 1, kLimit); }), "");
  } else if (world.rank() == 1) {
    await_from(world, 2, 2, 30);
    send_to(world, 0);
  } else {
    std::this_thread::sleep_for(std::chrono::duration<double>(2.5 * kLimit));
    send_to(world, 1);
  }
  world.ibarrier().wait_until(Deadline::after(30));
}

TEST(WaitChain, APeerThatDoesNotAnswerIsNamedAsStalled) {
  auto world = Communicator::world();
  WaitChain chain;
  if (world.rank() == 0) {
    const auto why = failure_of([&] { await_from(world, 1, 1, kLimit); });
    EXPECT_NE(why.find("stalled at rank(s) 1, which does not answer what it waits on"), std::string::npos) << why;
  } else if (world.rank() == 1) {
    std::this_thread::sleep_for(std::chrono::duration<double>(3 * kLimit));  // busy, polling nothing
  }
  world.ibarrier().wait_until(Deadline::after(30));
}

TEST(WaitChain, ACycleOfWaitsNamesTheLastRankReached) {
  auto world = Communicator::world();
  WaitChain chain;
  // 1 and 2 wait on each other (each says so) until 0 lets them go; 0 waits on 1 and follows the chain.
  if (world.rank() == 0) {
    const auto why = failure_of([&] { await_from(world, 1, 1, kLimit); });
    EXPECT_NE(why.find("stalled at rank(s) 2: the waits 0 -> 1 -> 2 -> 1 form a cycle"), std::string::npos) << why;
    send_to(world, 1);
    send_to(world, 2);
  } else {
    await_from(world, 0, 3 - world.rank(), 30);
  }
  world.ibarrier().wait_until(Deadline::after(30));
}

TEST(WaitChain, WithoutAChainTheDeadlineIsFinal) {
  auto world = Communicator::world();
  if (world.rank() == 0) {
    const auto why = failure_of([&] { await_from(world, 1, 1, 0.2); });
    EXPECT_NE(why.find("did not happen within 0.2 s"), std::string::npos) << why;
    EXPECT_EQ(why.find("stalled"), std::string::npos) << why;
  }
  world.ibarrier().wait_until(Deadline::after(30));
}

FEDAVG_MPI_TEST_MAIN
