// core::Workers: a loop's range cut into contiguous pieces that cover it once, run on the pool and the caller,
// an exception from a piece rethrown to the caller, small loops left to the caller; core::share_of_cores.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "core/workers.hpp"

using fedavg::core::Workers;

namespace {

// The pieces one loop ran, and the threads that ran them.
struct Pieces {
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  std::set<std::thread::id> threads;
};

Pieces run(Workers& workers, std::size_t n, std::size_t grain) {
  Pieces p;
  std::mutex mutex;
  workers.for_range(n, grain, [&](std::size_t begin, std::size_t end) {
    std::lock_guard<std::mutex> lock(mutex);
    p.ranges.emplace_back(begin, end);
    p.threads.insert(std::this_thread::get_id());
  });
  return p;
}

}  // namespace

TEST(Workers, PiecesCoverTheRangeOnceOnSeveralThreads) {
  Workers workers(4);
  EXPECT_EQ(workers.threads(), 4u);
  for (const std::size_t n : {4096ul, 4099ul, 100001ul}) {
    Pieces p = run(workers, n, 1000);
    std::vector<int> seen(n, 0);
    for (const auto& [begin, end] : p.ranges) {
      EXPECT_LT(begin, end);
      for (std::size_t i = begin; i < end; ++i) ++seen[i];
    }
    for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(seen[i], 1) << "item " << i << " of " << n;
    EXPECT_EQ(p.ranges.size(), 4u) << n;
    EXPECT_EQ(p.threads.size(), 4u) << n;
    EXPECT_TRUE(p.threads.count(std::this_thread::get_id())) << "the caller takes a piece";
  }
}

TEST(Workers, AShortLoopRunsOnTheCallerAlone) {
  Workers workers(4);
  Pieces p = run(workers, 1999, 1000);
  ASSERT_EQ(p.ranges.size(), 1u);
  EXPECT_EQ(p.ranges[0], std::make_pair(std::size_t{0}, std::size_t{1999}));
  EXPECT_EQ(*p.threads.begin(), std::this_thread::get_id());
  EXPECT_EQ(run(workers, 2500, 1000).ranges.size(), 2u) << "one piece per grain at most";
  EXPECT_TRUE(run(workers, 0, 1000).ranges.empty());
}

TEST(Workers, OneThreadStartsNoneAndRunsOnTheCaller) {
  Workers workers(1);
  Pieces p = run(workers, 100000, 10);
  ASSERT_EQ(p.ranges.size(), 1u);
  EXPECT_EQ(*p.threads.begin(), std::this_thread::get_id());
}

TEST(Workers, APiecesExceptionReachesTheCallerAndThePoolGoesOn) {
  Workers workers(3);
  const auto throw_in = [&](std::size_t bad) {
    workers.for_range(3000, 1000, [&](std::size_t begin, std::size_t end) {
      if (begin <= bad && bad < end) throw std::runtime_error("piece of item " + std::to_string(bad));
    });
  };
  EXPECT_THROW(throw_in(2500), std::runtime_error);  // a pool thread's piece
  EXPECT_THROW(throw_in(10), std::runtime_error);    // the caller's
  std::atomic<std::size_t> sum{0};
  for (int loop = 0; loop < 200; ++loop)
    workers.for_range(3000, 1000, [&](std::size_t begin, std::size_t end) { sum += end - begin; });
  EXPECT_EQ(sum.load(), 200u * 3000u);
}

TEST(Workers, AShareOfTheCoresIsAtLeastOneThread) {
  const unsigned all = fedavg::core::share_of_cores(1);
  EXPECT_GE(all, 1u);
  EXPECT_LE(all, std::thread::hardware_concurrency());
  EXPECT_EQ(fedavg::core::share_of_cores(all * 2 + 1), 1u);
  EXPECT_EQ(fedavg::core::share_of_cores(0), all);
}
