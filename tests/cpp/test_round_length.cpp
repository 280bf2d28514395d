// The length of link-sized rounds (training/round_length.hpp): how many batches each learner trains in the next
// round, from the training and overhead seconds of the last ones.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "training/round_length.hpp"

using fedavg::training::RoundLength;

TEST(RoundLength, WithoutAShareEveryRoundTrainsThePlansBatches) {
  RoundLength length(3, 0.0, 100.0);
  EXPECT_FALSE(length.adapts());
  length.took(3, 0.03, 10.0);
  EXPECT_EQ(length.steps(), 3);
  EXPECT_EQ(length.steps_within(0.001), 3);
}

TEST(RoundLength, GrowsAtMostFourfoldARoundUntilTheOverheadIsTheShare) {
  // 10 ms a batch, 0.9 s of exchange a round: 10 % overhead wants 0.9 * 0.9 / (0.1 * 0.01) = 810 batches.
  RoundLength length(1, 0.1, 1000.0);
  std::int64_t steps = length.steps();
  std::vector<std::int64_t> seen;
  for (int round = 0; round < 20; ++round) {
    length.took(steps, 0.01 * static_cast<double>(steps), 0.01 * static_cast<double>(steps) + 0.9);
    EXPECT_LE(length.steps(), 4 * steps);
    steps = length.steps();
    seen.push_back(steps);
  }
  EXPECT_EQ(seen.front(), 4);
  EXPECT_EQ(steps, 810);
  const double overhead_share = 0.9 / (0.9 + 0.01 * static_cast<double>(steps));
  EXPECT_NEAR(overhead_share, 0.1, 0.001);
}

TEST(RoundLength, ACheapExchangeKeepsThePlansBatches) {
  RoundLength length(4, 0.1, 1000.0);
  for (int round = 0; round < 5; ++round) length.took(4, 0.4, 0.41);  // 1 ms of overhead against 400 ms
  EXPECT_EQ(length.steps(), 4);
}

TEST(RoundLength, StaysInsideTheLongestRoundAndTheTimeLeft) {
  RoundLength length(1, 0.1, 5.0);  // 5 s at most: 500 batches of 10 ms
  std::int64_t steps = 1;
  for (int round = 0; round < 30; ++round) {
    length.took(steps, 0.01 * static_cast<double>(steps), 0.01 * static_cast<double>(steps) + 60.0);
    steps = length.steps();
  }
  EXPECT_EQ(steps, 500);
  EXPECT_EQ(length.steps_within(1.0), 100);  // one second left: 100 batches
  EXPECT_EQ(length.steps_within(-3.0), 1);   // past the limit: the plan's batches still
}

TEST(RoundLength, ShrinksWhenTheLinkGetsFaster) {
  RoundLength length(1, 0.1, 1000.0);
  std::int64_t steps = 1;
  for (int round = 0; round < 20; ++round) {
    length.took(steps, 0.01 * static_cast<double>(steps), 0.01 * static_cast<double>(steps) + 0.9);
    steps = length.steps();
  }
  for (int round = 0; round < 30; ++round) {
    length.took(steps, 0.01 * static_cast<double>(steps), 0.01 * static_cast<double>(steps) + 0.09);
    steps = length.steps();
  }
  EXPECT_NEAR(static_cast<double>(steps), 81.0, 1.0);  // the average forgets the slow link by degrees
}
