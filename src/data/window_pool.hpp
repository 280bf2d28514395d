// Window shuffling for the Batcher: windows arrive in text order and each batch draws its windows uniformly at
// random, without replacement, from a pool of at least `shuffle_windows` of them (docs/architecture.md). Batches
// of consecutive windows share a topic, and a learner that takes many steps on one topic drifts towards it.
#pragma once

#include <cstdint>
#include <pcg_random.hpp>
#include <vector>

namespace fedavg::data {

class WindowPool {
 public:
  // `width` ints per window; `seed` makes the draws reproducible.
  WindowPool(int width, std::uint64_t seed);

  std::int64_t size() const { return size_; }
  // Appends `count` windows (count * width ints).
  void add(const std::int32_t* windows, std::int64_t count);
  // Moves `count` windows chosen uniformly at random from the pool to the end of `out`. Needs count <= size().
  void draw(std::int64_t count, std::vector<std::int32_t>& out);

 private:
  static constexpr std::int64_t kAhead = 32;  // draws whose window is fetched ahead of its copy

  // Uniform in [0, n).
  std::int64_t below(std::int64_t n);
  // below(n), with that window's cache line requested.
  std::int64_t fetch(std::int64_t n);

  int width_;
  std::int64_t size_ = 0;
  std::vector<std::int32_t> data_;  // size_ windows, in no particular order
  pcg64 rng_;
};

}  // namespace fedavg::data
