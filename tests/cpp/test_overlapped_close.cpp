// The leader's close of a round while its host trains on (training/strategies/overlapped_close.hpp): the exchange
// works on a copy, and what it changed there is added to the shared weights, on top of the steps taken meanwhile.
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <vector>

#include "training/strategies/overlapped_close.hpp"

namespace {

using fedavg::core::Floats;
using fedavg::training::OverlappedClose;
using fedavg::training::RoundExchange;

// An exchange whose close leaves `result` in the weights it is given, after running `meanwhile` (what the host's
// other learners do during it).
class FakeExchange : public RoundExchange {
 public:
  FakeExchange(std::vector<float> result, std::function<void()> meanwhile)
      : RoundExchange(nullptr), result_(std::move(result)), meanwhile_(std::move(meanwhile)) {}
  void open(Floats, bool) override {}
  void close(Floats w, double share, fedavg::training::RoundEnd end) override {
    given_ = std::vector<float>(w.begin(), w.end());
    share_ = share;
    end_ = end;
    meanwhile_();
    std::copy(result_.begin(), result_.end(), w.begin());
  }
  bool flush(Floats) override { return false; }

  std::vector<float> given_;
  double share_ = 0;
  fedavg::training::RoundEnd end_;

 private:
  std::vector<float> result_;
  std::function<void()> meanwhile_;
};

TEST(OverlappedClose, AddsTheExchangesChangeOnTopOfTheStepsTakenMeanwhile) {
  std::vector<float> shared{1, 2, 3, 4};
  // The other hosts' average moves every weight; meanwhile this host's learners step on weights 0 and 3.
  FakeExchange exchange({11, 12, 13, 14}, [&] {
    shared[0] += 0.5f;
    shared[3] -= 2.0f;
  });
  OverlappedClose close;
  close.close(exchange, shared, 0.25, {7, true});
  EXPECT_EQ(exchange.given_, (std::vector<float>{1, 2, 3, 4}));  // the weights as the round ended
  EXPECT_EQ(exchange.share_, 0.25);
  EXPECT_EQ(exchange.end_.round, 7);
  EXPECT_TRUE(exchange.end_.checkpoint);
  EXPECT_EQ(shared, (std::vector<float>{11.5f, 12, 13, 12}));
}

TEST(OverlappedClose, WithNothingTrainedMeanwhileTheWeightsAreTheExchangesResult) {
  std::vector<float> shared{0.25f, -3, 7};
  FakeExchange exchange({1.5f, 2, -0.75f}, [] {});
  OverlappedClose close;
  for (int round = 1; round <= 2; ++round) close.close(exchange, shared, 1.0, {round, false});  // the copies are reused
  EXPECT_EQ(shared, (std::vector<float>{1.5f, 2, -0.75f}));
}

}  // namespace
