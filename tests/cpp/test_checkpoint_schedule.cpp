// Which rounds end with a checkpoint (training/checkpoint_schedule.hpp): every checkpoint_every rounds, and by
// training time, no sooner than 20 times what the last checkpoint's round took in exchange beyond a regular round;
// a round's answer, once given, is kept.
#include <gtest/gtest.h>

#include "training/checkpoint_schedule.hpp"

using fedavg::training::CheckpointSchedule;

TEST(CheckpointSchedule, ByRoundsAndByTime) {
  CheckpointSchedule rounds(3, 0.0);
  EXPECT_FALSE(rounds.due(1, 1, 100.0));
  EXPECT_FALSE(rounds.due(2, 2, 100.0));
  EXPECT_TRUE(rounds.due(3, 3, 0.0));
  CheckpointSchedule time(0, 10.0);
  EXPECT_FALSE(time.due(1, 1, 9.9));
  EXPECT_TRUE(time.due(2, 2, 10.0));
  time.written(10.5);
  EXPECT_FALSE(time.due(3, 3, 20.0));
  EXPECT_TRUE(time.due(4, 4, 20.5));
}

TEST(CheckpointSchedule, ARoundsAnswerIsKeptOnceGiven) {
  CheckpointSchedule time(0, 10.0);
  EXPECT_FALSE(time.due(5, 4, 9.0));   // asked ahead, with the current round's Control
  EXPECT_FALSE(time.due(5, 5, 30.0));  // the learners were told: it stays
  EXPECT_TRUE(time.due(6, 5, 30.0));
}

TEST(CheckpointSchedule, ACostlyCheckpointRoundSpacesTheNextByTime) {
  CheckpointSchedule time(0, 10.0);
  time.space_by_exchange(true);
  time.round_ended(0.05, false);
  EXPECT_TRUE(time.due(2, 2, 10.0));
  // The round before the checkpoint took 2 s more in exchange than a regular one (a full round of a lossy
  // sparse exchange): the next checkpoint by time comes 40 s later, not 10.
  time.round_ended(2.05, true);
  time.written(10.0);
  EXPECT_DOUBLE_EQ(time.spacing(), 40.0);
  EXPECT_FALSE(time.due(3, 3, 25.0));
  EXPECT_FALSE(time.due(4, 4, 49.0));
  EXPECT_TRUE(time.due(5, 5, 50.0));
  // A checkpoint round that costs what the others do (the dense exchange) leaves checkpoint_seconds.
  time.round_ended(0.05, false);
  time.round_ended(0.05, true);
  EXPECT_DOUBLE_EQ(time.spacing(), 10.0);
  // Rounds by count ignore the spacing.
  CheckpointSchedule both(2, 10.0);
  both.space_by_exchange(true);
  both.round_ended(0.0, false);
  both.round_ended(5.0, true);
  both.written(0.0);
  EXPECT_TRUE(both.due(2, 2, 1.0));
}

TEST(CheckpointSchedule, WhereCheckpointRoundsCostNoMoreTheExchangeTimesLeaveCheckpointSecondsAlone) {
  // The dense exchange: a checkpoint round whose exchange happened to take longer (load, a slow wait) does not
  // hold back the next checkpoint.
  CheckpointSchedule time(0, 0.001);
  time.round_ended(0.001, false);
  time.round_ended(0.5, true);
  time.written(1.0);
  EXPECT_DOUBLE_EQ(time.spacing(), 0.001);
  EXPECT_TRUE(time.due(3, 3, 1.002));
}
