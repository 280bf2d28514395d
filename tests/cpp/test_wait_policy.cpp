// The wait policy: the plain profile notices an arrival within about a millisecond everywhere; the
// oversubscribed profile makes pipeline stages patient and forecasts the recurring round waits (Cadence), which
// wake far less often and still notice an arrival soon enough. Poll counts are checked as upper bounds and
// reaction times with slack, so a loaded machine (longer sleeps) cannot fail them.
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "comm/wait.hpp"
#include "comm/wait_policy.hpp"

using namespace fedavg::comm;
using namespace std::chrono_literals;
using fedavg::core::WaitProfile;

namespace {

struct Waited {
  int polls = 0;
  Clock::duration noticed_after{};
};

// Polls with `pace` until `arrival` has passed since the start; counts the polls.
Waited wait_for(Clock::duration arrival, const Pace& pace) {
  Backoff backoff(pace);
  Waited w;
  const auto start = Clock::now();
  while (Clock::now() - start < arrival) {
    ++w.polls;
    backoff.sleep();
  }
  w.noticed_after = Clock::now() - start;
  return w;
}

const Clock::time_point t0 = Clock::now();

// One occurrence of the wait that a poll last found unfinished `missed` after its start.
void wait(Cadence& c, Clock::duration missed) { c.record(t0, t0 + missed); }

Clock::duration share(Clock::duration d) { return std::chrono::duration_cast<Clock::duration>(d * Cadence::kShare); }

const WaitPolicy plain(WaitPolicy::Profile::Plain);
const WaitPolicy oversubscribed(WaitPolicy::Profile::Oversubscribed);

}  // namespace

TEST(WaitPolicy, AutoIsOversubscribedOnlyWithMoreRanksThanCores) {
  EXPECT_EQ(WaitPolicy::choose(WaitProfile::Auto, 6, 2).profile(), WaitPolicy::Profile::Oversubscribed);
  EXPECT_EQ(WaitPolicy::choose(WaitProfile::Auto, 6, 8).profile(), WaitPolicy::Profile::Plain);
  EXPECT_EQ(WaitPolicy::choose(WaitProfile::Auto, 8, 8).profile(), WaitPolicy::Profile::Plain);
  EXPECT_EQ(WaitPolicy::choose(WaitProfile::Plain, 60, 2).profile(), WaitPolicy::Profile::Plain);
  EXPECT_EQ(WaitPolicy::choose(WaitProfile::Oversubscribed, 2, 60).profile(), WaitPolicy::Profile::Oversubscribed);
  EXPECT_GE(WaitPolicy::usable_cores(), 1);
}

TEST(WaitPolicy, PlainWaitsAreAllPrompt) {
  EXPECT_EQ(plain.stage().patience, 0);
  Cadence c;
  for (std::size_t i = 0; i <= Cadence::kHistory; ++i) wait(c, 100ms);
  EXPECT_EQ(plain.recurring(c, plain.collective()).quiet, Clock::duration{0});  // no forecast is slept through
  EXPECT_EQ(plain.collective().fast, oversubscribed.collective().fast);         // both poll collectives fast
  EXPECT_GT(plain.collective().fast, Clock::duration{0});
}

TEST(Backoff, DefaultNoticesAnArrivalWithinAboutAMillisecond) {
  const Waited w = wait_for(200ms, plain.prompt());
  EXPECT_LT(w.noticed_after, 200ms + 25ms);
  EXPECT_GT(w.polls, 20);  // it keeps polling: at most ~1 ms apart, so ~200 unless the machine is loaded
}

TEST(Backoff, PlainStageNoticesAnArrivalWithinAboutAMillisecond) {
  const Waited w = wait_for(200ms, plain.stage());
  EXPECT_LT(w.noticed_after, 200ms + 25ms);
  EXPECT_GT(w.polls, 20);
}

TEST(Backoff, PatientWaitWakesRarelyAndStillNoticesAnArrival) {
  const Pace stage = oversubscribed.stage();
  const Waited w = wait_for(400ms, stage);
  // Doubling to 1 ms, then half the time waited, then long_max: about 25 polls (the default pace polls ~400
  // times).
  EXPECT_LE(w.polls, 40);
  EXPECT_LT(w.noticed_after, 400ms + stage.long_max + 40ms);
}

TEST(Backoff, QuietPhaseSleepsInLongStepsAndNoticesAnEarlyArrival) {
  Pace pace;
  pace.quiet = 300ms;
  // The forecast was 300 ms but it comes at 100 ms: noticed within one long step.
  const Waited early = wait_for(100ms, pace);
  EXPECT_LE(early.polls, 100ms / pace.long_max + 2);
  EXPECT_LT(early.noticed_after, 100ms + pace.long_max + 25ms);
}

TEST(Backoff, AfterTheQuietPhaseItPollsAsUsual) {
  Pace pace;
  pace.quiet = 100ms;
  const Waited late = wait_for(160ms, pace);
  EXPECT_LT(late.noticed_after, 160ms + 25ms);
  EXPECT_LE(late.polls, 100ms / pace.long_max + 2 + 70);  // ~2 long steps, then ~60 at most 1 ms apart
}

TEST(Backoff, ResetEndsTheQuietPhase) {
  Pace pace;
  pace.quiet = 10s;
  Backoff backoff(pace);
  backoff.reset();  // the forecast was for the first arrival; after work, the next one is awaited as usual
  const auto start = Clock::now();
  backoff.sleep();
  EXPECT_LT(Clock::now() - start, 5ms);
}

TEST(Cadence, NoForecastUntilTheHistoryIsFull) {
  Cadence c;
  const Pace p = oversubscribed.recurring(c, oversubscribed.collective());
  EXPECT_EQ(p.quiet, Clock::duration{0});
  EXPECT_EQ(p.fast, oversubscribed.collective().fast);  // the base pace is kept
  for (std::size_t i = 0; i < Cadence::kHistory; ++i) {
    wait(c, 100ms);
    EXPECT_EQ(c.forecast(), Clock::duration{0}) << "after " << i + 1 << " waits";
  }
  wait(c, 100ms);
  EXPECT_EQ(c.forecast(), share(100ms));
  EXPECT_EQ(oversubscribed.recurring(c, oversubscribed.prompt()).quiet, share(100ms));
}

TEST(Cadence, TheStartUpWaitIsNotCounted) {
  Cadence c;
  wait(c, 10ms);  // the first wait includes the job's start-up, however short or long
  for (std::size_t i = 0; i < Cadence::kHistory; ++i) wait(c, 200ms);
  EXPECT_EQ(c.forecast(), share(200ms));
}

TEST(Cadence, ForecastIsAShareOfTheShortestRecentWait) {
  Cadence c;
  wait(c, 5s);
  wait(c, 100ms);
  wait(c, 2s);  // one long wait (the first checkpoint, a slow round) does not stretch the forecast
  wait(c, 50ms);
  EXPECT_EQ(c.forecast(), share(50ms));
}

TEST(Cadence, OnlyTheLastFewWaitsCount) {
  Cadence c;
  wait(c, 0ms);
  wait(c, 10ms);
  for (std::size_t i = 0; i < Cadence::kHistory; ++i) wait(c, 200ms);
  EXPECT_EQ(c.forecast(), share(200ms));
  EXPECT_GT(oversubscribed.recurring(c, oversubscribed.stage()).patience, 0);  // the base pace is kept
}

TEST(Cadence, AWaiterThatOversleptIsOnTimeNextRound) {
  // The forecast says 90 ms but the message now comes after 10 ms. The first round's quiet phase sleeps past it
  // (one long step); every later round notices it within a few ms. Counting the wait up to when it was noticed
  // instead would forecast the lateness again, round after round.
  Cadence c;
  for (std::size_t i = 0; i <= Cadence::kHistory; ++i) wait(c, 100ms);
  std::vector<Clock::duration> late;
  for (int round = 0; round < 5; ++round) {
    const auto start = Clock::now();
    const auto missed = poll_until([&] { return Clock::now() - start >= 10ms; }, Deadline::after(10.0), "arrival",
                                   oversubscribed.recurring(c, oversubscribed.prompt()));
    late.push_back(Clock::now() - start - 10ms);
    c.record(start, missed);
  }
  EXPECT_GT(late[0], 20ms);
  for (int round = 1; round < 5; ++round) EXPECT_LT(late[round], 8ms) << "round " << round;
}
