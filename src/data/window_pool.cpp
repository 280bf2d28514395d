#include "data/window_pool.hpp"

#include <algorithm>
#include <stdexcept>

namespace fedavg::data {

WindowPool::WindowPool(int width, std::uint64_t seed) : width_(width), rng_(seed) {}

void WindowPool::add(const std::int32_t* windows, std::int64_t count) {
  data_.insert(data_.end(), windows, windows + count * width_);
  size_ += count;
}

std::int64_t WindowPool::below(std::int64_t n) {
  // Lemire's multiply-shift: the high 64 bits of a 64-bit draw times n. Its bias, at most n / 2^64, is far below
  // anything a pool of windows can show.
  return static_cast<std::int64_t>((static_cast<pcg_extras::pcg128_t>(rng_()) * static_cast<std::uint64_t>(n)) >> 64);
}

std::int64_t WindowPool::fetch(std::int64_t n) {
  const std::int64_t j = below(n);
  __builtin_prefetch(data_.data() + static_cast<std::size_t>(j) * static_cast<std::size_t>(width_));
  return j;
}

void WindowPool::draw(std::int64_t count, std::vector<std::int32_t>& out) {
  if (count > size_) throw std::logic_error("WindowPool::draw: more windows than the pool holds");
  const auto w = static_cast<std::size_t>(width_);
  const std::size_t first = out.size();
  out.resize(first + static_cast<std::size_t>(count) * w);
  std::int32_t* next = out.data() + first;
  std::int32_t* pool = data_.data();
  // Draw k takes one of the size_ - k windows left. Its index is drawn kAhead draws early and its cache line
  // fetched then: the pool is megabytes, shared with the learners' caches, so most picks would wait on memory.
  std::int64_t ahead[kAhead];
  for (std::int64_t k = 0; k < std::min(count, kAhead); ++k) ahead[k] = fetch(size_ - k);
  for (std::int64_t k = 0; k < count; ++k) {
    std::int32_t* picked = pool + static_cast<std::size_t>(ahead[k % kAhead]) * w;
    if (k + kAhead < count) ahead[k % kAhead] = fetch(size_ - kAhead);
    // Move the window out and fill its slot with the last one: O(width) per window, copied inline (a library
    // call per 20-byte window cost more than the copy).
    const std::int32_t* last = pool + static_cast<std::size_t>(size_ - 1) * w;
    for (std::size_t c = 0; c < w; ++c) next[c] = picked[c];
    for (std::size_t c = 0; c < w; ++c) picked[c] = last[c];
    next += w;
    --size_;
  }
  data_.resize(static_cast<std::size_t>(size_) * w);
}

}  // namespace fedavg::data
