// core::Hooks: --inject-fault fires at the planned round (every round reached in between counts, but a resumed
// run's first round does not fire the ones before it), only on its own rank; a slowed learner sleeps its step's
// time again; a pause keeps the rank busy for its seconds.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "core/error.hpp"
#include "core/hooks.hpp"

using namespace fedavg::core;
using namespace std::chrono_literals;

namespace {

const RankInfo kLearner{5, Role::Learner};

Hooks with_fault(long round, Fault::Kind kind = Fault::Kind::Exception, int rank = 5) {
  return Hooks({Fault{rank, round, kind}}, kLearner);
}

// The round named by the exception reached() throws, or -1.
long fired(Hooks& h, long round) {
  try {
    h.reached(round);
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("injected fault"), std::string::npos) << what;
    return std::stol(what.substr(what.find("round ") + 6));
  }
  return -1;
}

}  // namespace

TEST(Hooks, FiresAtThePlannedRound) {
  Hooks h = with_fault(3);
  EXPECT_EQ(fired(h, 1), -1);
  EXPECT_EQ(fired(h, 2), -1);
  EXPECT_EQ(fired(h, 3), 3);
}

TEST(Hooks, FiresARoundThatWasSkipped) {
  Hooks h = with_fault(3);
  EXPECT_EQ(fired(h, 1), -1);
  EXPECT_EQ(fired(h, 5), 3);  // an easgd learner that saw rounds 1 and 5 only
}

TEST(Hooks, AResumedRunDoesNotFireEarlierRounds) {
  Hooks h = with_fault(3);
  EXPECT_EQ(fired(h, 7), -1);  // the first round reached after a resume from round 6
  EXPECT_EQ(fired(h, 8), -1);
}

TEST(Hooks, OnlyTheNamedRankFires) {
  Hooks h = with_fault(2, Fault::Kind::Exception, 4);
  EXPECT_EQ(fired(h, 1), -1);
  EXPECT_EQ(fired(h, 2), -1);
}

TEST(Hooks, KillInCheckpointIsAskedForNotFired) {
  Hooks h = with_fault(2, Fault::Kind::KillInCheckpoint);
  EXPECT_EQ(fired(h, 2), -1);
  EXPECT_TRUE(h.kill_in_checkpoint(2));
  EXPECT_FALSE(h.kill_in_checkpoint(3));
}

TEST(Hooks, ASlowedStepSleepsItsTimeAgain) {
  const Hooks slowed({}, kLearner, 3.0), normal({}, kLearner);
  auto start = std::chrono::steady_clock::now();
  normal.step_took(20ms);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10ms);
  start = std::chrono::steady_clock::now();
  slowed.step_took(20ms);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 40ms);  // (3 - 1) x 20 ms
}

TEST(Hooks, APauseKeepsTheRankBusyThenGoesOn) {
  Fault pause = parse_fault("5:3:pause=0.05");
  ASSERT_EQ(pause.kind, Fault::Kind::Pause);
  Hooks h({pause}, kLearner);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(fired(h, 3), -1);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 50ms);
}

TEST(Hooks, APauseNeedsItsSeconds) {
  for (const char* bad : {"5:3:pause", "5:3:pause=", "5:3:pause=x", "5:3:pause=-1", "5:3:pause=1s"})
    EXPECT_THROW(parse_fault(bad), InputError) << bad;
}
