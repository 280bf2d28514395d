// Cadence: the forecast of a recurring wait is a share of the shortest of the last few.
#include <gtest/gtest.h>

#include <chrono>

#include "comm/cadence.hpp"

using namespace fedavg::comm;
using namespace std::chrono_literals;

TEST(Cadence, NoForecastBeforeTheFirstWait) {
  Cadence c;
  const Pace p = c.pace(kCollective);
  EXPECT_EQ(p.quiet, Clock::duration{0});
  EXPECT_EQ(p.fast, kCollective.fast);  // the base pace is kept
}

TEST(Cadence, ForecastIsAShareOfTheShortestRecentWait) {
  Cadence c;
  c.record(100ms);
  EXPECT_EQ(c.pace().quiet, std::chrono::duration_cast<Clock::duration>(100ms * Cadence::kShare));
  c.record(2s);  // one long wait (a checkpoint round, a slow start) does not stretch the forecast
  c.record(50ms);
  EXPECT_EQ(c.pace().quiet, std::chrono::duration_cast<Clock::duration>(50ms * Cadence::kShare));
}

TEST(Cadence, OnlyTheLastFewWaitsCount) {
  Cadence c;
  c.record(10ms);
  for (std::size_t i = 0; i < Cadence::kHistory; ++i) c.record(200ms);
  EXPECT_EQ(c.pace().quiet, std::chrono::duration_cast<Clock::duration>(200ms * Cadence::kShare));
  EXPECT_TRUE(c.pace(kPatient).patient);
}
