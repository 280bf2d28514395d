#include "core/window_pool.hpp"

#include <algorithm>
#include <stdexcept>

namespace fedavg::core {

WindowPool::WindowPool(int width, std::uint64_t seed) : width_(width), rng_(seed) {}

void WindowPool::add(const std::int32_t* windows, std::int64_t count) {
  data_.insert(data_.end(), windows, windows + count * width_);
  size_ += count;
}

void WindowPool::draw(std::int64_t count, std::vector<std::int32_t>& out) {
  if (count > size_) throw std::logic_error("WindowPool::draw: more windows than the pool holds");
  const auto w = static_cast<std::size_t>(width_);
  out.reserve(out.size() + static_cast<std::size_t>(count) * w);
  for (std::int64_t k = 0; k < count; ++k) {
    // Take a random window and fill its slot with the last one: O(width) per window.
    const auto j = static_cast<std::size_t>(std::uniform_int_distribution<std::int64_t>(0, size_ - 1)(rng_));
    const auto last = static_cast<std::size_t>(size_ - 1);
    const auto picked = data_.begin() + static_cast<std::ptrdiff_t>(j * w);
    out.insert(out.end(), picked, picked + static_cast<std::ptrdiff_t>(w));
    std::copy_n(data_.begin() + static_cast<std::ptrdiff_t>(last * w), w, picked);
    --size_;
  }
  data_.resize(static_cast<std::size_t>(size_) * w);
}

}  // namespace fedavg::core
