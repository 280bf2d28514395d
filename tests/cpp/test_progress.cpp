// The Dispatcher's progress line: windows/s is the current rate (since the line before), not the average since
// the start.
#include <gtest/gtest.h>

#include <cmath>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "training/progress.hpp"

using fedavg::training::Progress;

namespace {

// The "windows/s A/learner B" part of a line.
std::string rate(const std::string& line) {
  const auto at = line.find("windows/s ");
  return at == std::string::npos ? "" : line.substr(at, line.find("  ", at) - at);
}

// The first and the last line `p` printed for `rounds`, then flush().
struct Printed {
  std::string first, last;
};
Printed show(Progress& p, std::initializer_list<Progress::Round> rounds) {
  testing::internal::CaptureStdout();
  for (const auto& r : rounds) p.show(r);
  p.flush();
  const std::string out = testing::internal::GetCapturedStdout();
  const auto end = out.find('\n');
  return {out.substr(0, end), out.substr(end + 1)};
}

}  // namespace

TEST(Progress, WindowsPerSecondIsTheRateSinceTheLineBefore) {
  fedavg::core::Settings s;
  s.progress_seconds = 0;
  Progress p(s, 2);
  const double nan = std::nan("");
  // 1000 windows per learner in the first 10 s, then 1000 more in 1 s: 1000/s now, not 2000/11.
  testing::internal::CaptureStdout();
  p.show({0, 0.0, 0.0, 3.0, nan, nan, {}, true, ""});
  p.show({1, 10.0, 1000.0, 3.0, nan, nan, {}, true, ""});
  const Progress::Round now{2, 11.0, 2000.0, 3.0, nan, nan, {}, true, ""};
  EXPECT_EQ(rate(p.line(now)), "windows/s 1.0k/learner 2.0k");
  testing::internal::GetCapturedStdout();
  // A resumed run counts from its checkpoint.
  Progress resumed(s, 1);
  resumed.resumed(10.0, 1000.0);
  EXPECT_EQ(rate(resumed.line(now)), "windows/s 1.0k/learner 1.0k");
  EXPECT_EQ(rate(Progress(s, 1).line(now)), "windows/s 182/learner 182");  // nothing before: since the start
}

TEST(Progress, TheExchangeShareCountsEveryRoundSinceTheLineBefore) {
  fedavg::core::Settings s;
  s.progress_seconds = 1e6;  // the first line, then only what flush() prints
  Progress p(s, 2);
  const double nan = std::nan("");
  const auto [first, last] = show(p, {{0, 0.0, 0.0, 3.0, nan, nan, {}, true, "", 0.0},
                                      // not printed: its exchange counts towards the next
                                      {1, 2.0, 100.0, 3.0, nan, nan, {}, true, "", 0.5},
                                      {2, 4.0, 200.0, 3.0, nan, nan, {}, true, "", 0.5}});
  EXPECT_EQ(first.find("exchange"), std::string::npos) << first;          // no exchange yet: nothing shown
  EXPECT_NE(last.find("  exchange 25.0%  "), std::string::npos) << last;  // 1 s of the 4 s
}

TEST(Progress, TheShareTrainedThroughTheExchangeFollowsIt) {
  fedavg::core::Settings s;
  s.progress_seconds = 1e6;
  Progress p(s, 2);
  const double nan = std::nan("");
  const std::string last = show(p, {{0, 0.0, 0.0, 3.0, nan, nan, {}, true, "", 0.0},
                                    {1, 2.0, 100.0, 3.0, nan, nan, {}, true, "", 0.5, 0.0},    // nothing before it
                                    {2, 4.0, 200.0, 3.0, nan, nan, {}, true, "", 0.5, 60.0}})  // 60 of 100 windows
                               .last;
  EXPECT_NE(last.find("  exchange 25.0% (trained through: 30% of windows)  "), std::string::npos) << last;
  // Without overlap nothing is trained through: the line says nothing of it.
  EXPECT_EQ(p.line({3, 6.0, 300.0, 3.0, nan, nan, {}, true, "", 0.5, 0.0}).find("through"), std::string::npos);
}

TEST(Progress, TheLearnersIdleShareCountsEveryRoundSinceTheLineBefore) {
  fedavg::core::Settings s;
  s.progress_seconds = 1e6;
  Progress p(s, 2);
  const double nan = std::nan("");
  const std::string last = show(p, {{0, 0.0, 0.0, 3.0, nan, nan, {}, true, "", 0.0},
                                    // not printed: counts towards the next
                                    {1, 2.0, 100.0, 3.0, nan, nan, {}, true, "", 1.0, 60.0, 0.25},
                                    {2, 4.0, 200.0, 3.0, nan, nan, {}, true, "", 1.0, 60.0, 0.75}})
                               .last;
  // The exchange took half the time, but the learners trained through most of it: 1 s of their 4 s was idle.
  EXPECT_NE(last.find("  exchange 50.0% (trained through: 60% of windows)  learners idle 25%  "), std::string::npos)
      << last;
  // Learners that never waited: the line says nothing of it.
  EXPECT_EQ(p.line({3, 6.0, 300.0, 3.0, nan, nan, {}, true, "", 0.0, 0.0, 0.0}).find("idle"), std::string::npos);
}

TEST(Progress, PercentNeverGoesBackAndSaysWhenItIsAnEstimate) {
  fedavg::core::Settings s;
  s.progress_seconds = 0;
  s.max_rounds = 0;
  s.max_seconds = 0;
  s.max_epochs = 5;
  Progress p(s, 1);
  const double nan = std::nan("");
  testing::internal::CaptureStdout();
  // Passes estimated from how far the corpus has been read (ahead of training), then known: 1.17, then 0.50.
  p.show({1, 10.0, 1000.0, 3.0, nan, nan, {1.17}, false, ""});
  const std::string first = testing::internal::GetCapturedStdout();
  EXPECT_NE(first.find("  ~23%  ETA ~"), std::string::npos) << first;
  const std::string later = p.line({3, 30.0, 3000.0, 3.0, nan, nan, {0.50}, true, ""});
  EXPECT_NE(later.find("   23%  ETA "), std::string::npos) << later;  // not 10 %
  EXPECT_NE(p.line({9, 90.0, 9000.0, 3.0, nan, nan, {1.5}, true, ""}).find("   30%"), std::string::npos);
}

TEST(Progress, ATestLossThatRisesRoundAfterRoundIsPointedOut) {
  fedavg::core::Settings s;
  s.progress_seconds = 0;
  Progress p(s, 1);
  const double nan = std::nan("");
  testing::internal::CaptureStdout();
  const double losses[] = {4.0, 2.5, 2.6, 2.4, 2.5, 2.6, 2.7, 2.8, 2.1};
  for (long r = 0; r < 9; ++r) p.show({r, 1.0 * r, 100.0 * r, losses[r], nan, nan, {}, true, ""});
  std::istringstream lines(testing::internal::GetCapturedStdout());
  std::vector<bool> warned;
  for (std::string line; std::getline(lines, line);)
    warned.push_back(line.find("test loss rising") != std::string::npos);
  // Rounds 4 to 7 rise: from the third rise on (rounds 6 and 7), until the loss falls again.
  EXPECT_EQ(warned, (std::vector<bool>{false, false, false, false, false, false, true, true, false}));
}
