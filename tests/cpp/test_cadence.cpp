// Cadence: the forecast of a recurring wait is a share of the shortest of the last few, counted up to when a
// poll last found nothing, and not made from the start-up wait or from fewer than kHistory waits.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "comm/cadence.hpp"

using namespace fedavg::comm;
using namespace std::chrono_literals;

namespace {

const Clock::time_point t0 = Clock::now();

// One occurrence of the wait that a poll last found unfinished `missed` after its start.
void wait(Cadence& c, Clock::duration missed) { c.record(t0, t0 + missed); }

Clock::duration share(Clock::duration d) { return std::chrono::duration_cast<Clock::duration>(d * Cadence::kShare); }

}  // namespace

TEST(Cadence, NoForecastUntilTheHistoryIsFull) {
  Cadence c;
  const Pace p = c.pace(kCollective);
  EXPECT_EQ(p.quiet, Clock::duration{0});
  EXPECT_EQ(p.fast, kCollective.fast);  // the base pace is kept
  for (std::size_t i = 0; i < Cadence::kHistory; ++i) {
    wait(c, 100ms);
    EXPECT_EQ(c.pace().quiet, Clock::duration{0}) << "after " << i + 1 << " waits";
  }
  wait(c, 100ms);
  EXPECT_EQ(c.pace().quiet, share(100ms));
}

TEST(Cadence, TheStartUpWaitIsNotCounted) {
  Cadence c;
  wait(c, 10ms);  // the first wait includes the job's start-up, however short or long
  for (std::size_t i = 0; i < Cadence::kHistory; ++i) wait(c, 200ms);
  EXPECT_EQ(c.pace().quiet, share(200ms));
}

TEST(Cadence, ForecastIsAShareOfTheShortestRecentWait) {
  Cadence c;
  wait(c, 5s);
  wait(c, 100ms);
  wait(c, 2s);  // one long wait (the first checkpoint, a slow round) does not stretch the forecast
  wait(c, 50ms);
  EXPECT_EQ(c.pace().quiet, share(50ms));
}

TEST(Cadence, OnlyTheLastFewWaitsCount) {
  Cadence c;
  wait(c, 0ms);
  wait(c, 10ms);
  for (std::size_t i = 0; i < Cadence::kHistory; ++i) wait(c, 200ms);
  EXPECT_EQ(c.pace().quiet, share(200ms));
  EXPECT_TRUE(c.pace(kPatient).patient);
}

TEST(Cadence, AWaiterThatOversleptIsOnTimeNextRound) {
  // The forecast says 90 ms but the message now comes after 10 ms. The first round's quiet phase sleeps past it
  // (one long step); every later round notices it within a few ms. Counting the wait up to when it was noticed
  // instead would forecast the lateness again: still 35, 31, 27 ms late in the rounds after (measured).
  Cadence c;
  for (std::size_t i = 0; i <= Cadence::kHistory; ++i) wait(c, 100ms);
  std::vector<Clock::duration> late;
  for (int round = 0; round < 5; ++round) {
    const auto start = Clock::now();
    const auto missed = poll_until([&] { return Clock::now() - start >= 10ms; }, Deadline::after(10.0), "arrival",
                                   c.pace());
    late.push_back(Clock::now() - start - 10ms);
    c.record(start, missed);
  }
  EXPECT_GT(late[0], 20ms);
  for (int round = 1; round < 5; ++round) EXPECT_LT(late[round], 8ms) << "round " << round;
}
