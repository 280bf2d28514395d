#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "data/window_pool.hpp"

using fedavg::data::WindowPool;

namespace {

// Window i of width 3 is {i, i + 1000000, i + 2000000}, so a drawn window can be checked whole.
std::vector<std::int32_t> windows(std::int32_t first, std::int32_t count) {
  std::vector<std::int32_t> v;
  for (std::int32_t i = first; i < first + count; ++i) v.insert(v.end(), {i, i + 1000000, i + 2000000});
  return v;
}

std::vector<std::int32_t> firsts(const std::vector<std::int32_t>& drawn) {
  std::vector<std::int32_t> ids;
  for (std::size_t k = 0; k < drawn.size(); k += 3) {
    EXPECT_EQ(drawn[k + 1], drawn[k] + 1000000);
    EXPECT_EQ(drawn[k + 2], drawn[k] + 2000000);
    ids.push_back(drawn[k]);
  }
  return ids;
}

// Every window 0..n-1 came out of `drawn` exactly once, whole.
void expect_each_once(const std::vector<std::int32_t>& drawn, std::int32_t n) {
  auto ids = firsts(drawn);
  std::sort(ids.begin(), ids.end());
  std::vector<std::int32_t> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  EXPECT_EQ(ids, all);
}

}  // namespace

TEST(WindowPool, EveryWindowComesOutOnceWhole) {
  WindowPool pool(3, 1);
  const auto a = windows(0, 500), b = windows(500, 500);
  pool.add(a.data(), 500);
  std::vector<std::int32_t> out;
  pool.draw(300, out);
  pool.add(b.data(), 500);
  pool.draw(700, out);
  EXPECT_EQ(pool.size(), 0);
  expect_each_once(out, 1000);
}

TEST(WindowPool, DrawsAreShuffledAndReproducible) {
  const auto in = windows(0, 10000);
  std::vector<std::int32_t> first, again, other;
  for (auto [seed, out] : {std::pair{7u, &first}, std::pair{7u, &again}, std::pair{8u, &other}}) {
    WindowPool pool(3, seed);
    pool.add(in.data(), 10000);
    pool.draw(1000, *out);
  }
  EXPECT_EQ(first, again);
  EXPECT_NE(first, other);
  // Uniform over the pool, not text order: the first 1000 drawn spread over all 10000 (mean near 5000).
  const auto ids = firsts(first);
  const double mean = std::accumulate(ids.begin(), ids.end(), 0.0) / static_cast<double>(ids.size());
  EXPECT_NEAR(mean, 5000.0, 300.0);
  EXPECT_GT(*std::max_element(ids.begin(), ids.end()), 9000);
}

TEST(WindowPool, EveryPlaceInADrawIsUniform) {
  // 12 windows drawn in one call, 3000 seeds: each window should come out at each place about 250 times. Places
  // 0, 8 and 11 cover the first draw, the first one whose index is drawn ahead, and the last.
  const int n = 12, seeds = 3000;
  const auto in = windows(0, n);
  std::vector<std::vector<int>> seen(n, std::vector<int>(n, 0));  // [place][window]
  for (int seed = 0; seed < seeds; ++seed) {
    WindowPool pool(3, static_cast<std::uint64_t>(seed));
    pool.add(in.data(), n);
    std::vector<std::int32_t> out;
    pool.draw(n, out);
    const auto ids = firsts(out);
    for (int place = 0; place < n; ++place)
      ++seen[static_cast<std::size_t>(place)][static_cast<std::size_t>(ids[static_cast<std::size_t>(place)])];
  }
  for (int place : {0, 8, 11})
    for (int window = 0; window < n; ++window)
      EXPECT_NEAR(seen[static_cast<std::size_t>(place)][static_cast<std::size_t>(window)], seeds / n, 75)
          << "window " << window << " at place " << place;
}

TEST(WindowPool, SmallDrawsEmptyThePoolWhole) {
  WindowPool pool(3, 5);
  const auto in = windows(0, 20);
  pool.add(in.data(), 20);
  std::vector<std::int32_t> out;
  for (int k = 0; k < 10; ++k) pool.draw(2, out);
  EXPECT_EQ(pool.size(), 0);
  expect_each_once(out, 20);
}

TEST(WindowPool, CannotDrawMoreThanItHolds) {
  WindowPool pool(3, 1);
  const auto in = windows(0, 10);
  pool.add(in.data(), 10);
  std::vector<std::int32_t> out;
  EXPECT_THROW(pool.draw(11, out), std::logic_error);
}
