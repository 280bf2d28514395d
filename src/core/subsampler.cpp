#include "core/subsampler.hpp"

#include <cmath>
#include <numeric>

namespace fedavg::core {

Subsampler::Subsampler(const std::vector<std::int64_t>& counts, double sample, std::uint64_t seed) : rng_(seed) {
  if (sample <= 0.0 || counts.empty()) return;
  const double total = static_cast<double>(std::accumulate(counts.begin(), counts.end(), std::int64_t{0}));
  if (total <= 0.0) return;
  const double threshold = sample * total;
  keep_.resize(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const double f = static_cast<double>(counts[i]);
    keep_[i] = f <= 0.0 ? 1.0f : static_cast<float>(std::min(1.0, (std::sqrt(f / threshold) + 1.0) * threshold / f));
  }
}

std::size_t Subsampler::apply(std::int32_t* tokens, std::size_t n) {
  if (keep_.empty()) return 0;
  std::size_t dropped = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::int32_t t = tokens[i];
    if (t < 0) continue;
    const float p = keep_[static_cast<std::size_t>(t)];
    if (p < 1.0f && uniform_(rng_) >= p) {
      tokens[i] = kDropped;
      ++dropped;
    }
  }
  return dropped;
}

}  // namespace fedavg::core
