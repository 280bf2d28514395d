// Backoff's paces: a patient wait (pipeline stages) and a quiet phase (a forecast recurring wait) wake far
// less often than the default, and still notice an arrival soon enough. Poll counts are checked as upper
// bounds and reaction times with slack, so a loaded machine (longer sleeps) cannot fail them.
#include <gtest/gtest.h>

#include <chrono>

#include "comm/backoff.hpp"

using namespace fedavg::comm;
using namespace std::chrono_literals;

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

}  // namespace

TEST(Backoff, DefaultNoticesAnArrivalWithinAboutAMillisecond) {
  const Waited w = wait_for(200ms, {});
  EXPECT_LT(w.noticed_after, 200ms + 25ms);
  EXPECT_GT(w.polls, 20);  // it keeps polling: at most ~1 ms apart, so ~200 unless the machine is loaded
}

TEST(Backoff, PatientWaitWakesRarelyAndStillNoticesAnArrival) {
  const Waited w = wait_for(400ms, kPatient);
  // Doubling to 1 ms, then half the time waited, then kLongMax: about 25 polls (65 with the earlier eighth of
  // the time waited and 10 ms steps; the default pace polls ~400 times).
  EXPECT_LE(w.polls, 40);
  EXPECT_LT(w.noticed_after, 400ms + Backoff::kLongMax + 40ms);
}

TEST(Backoff, QuietPhaseSleepsInLongStepsAndNoticesAnEarlyArrival) {
  Pace pace;
  pace.quiet = 300ms;
  // The forecast was 300 ms but it comes at 100 ms: noticed within one long step.
  const Waited early = wait_for(100ms, pace);
  EXPECT_LE(early.polls, 100ms / Backoff::kLongMax + 2);
  EXPECT_LT(early.noticed_after, 100ms + Backoff::kLongMax + 25ms);
}

TEST(Backoff, AfterTheQuietPhaseItPollsAsUsual) {
  Pace pace;
  pace.quiet = 100ms;
  const Waited late = wait_for(160ms, pace);
  EXPECT_LT(late.noticed_after, 160ms + 25ms);
  EXPECT_LE(late.polls, 100ms / Backoff::kLongMax + 2 + 70);  // ~2 long steps, then ~60 at most 1 ms apart
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
