// The in-run scores on the progress line: only the parts that were scored, to three decimals.
#include <gtest/gtest.h>

#include <cmath>

#include "training/evaluation.hpp"

using fedavg::bridge::Scores;
using fedavg::training::Evaluation;

TEST(Evaluation, TheProgressLineShowsOnlyWhatWasScored) {
  const double nan = std::nan("");
  EXPECT_EQ(Evaluation::text(Scores::Result{0.41234, 0.0456}), "  similarity 0.412  analogies 0.046");
  EXPECT_EQ(Evaluation::text(Scores::Result{0.5, nan}), "  similarity 0.500");
  EXPECT_EQ(Evaluation::text(Scores::Result{nan, 0.25}), "  analogies 0.250");
  EXPECT_EQ(Evaluation::text(Scores::Result{}), "");  // a round that is not scored
}
