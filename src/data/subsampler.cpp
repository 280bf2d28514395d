#include "data/subsampler.hpp"

#include <cmath>
#include <numeric>

namespace fedavg::data {

Subsampler::Subsampler(const std::vector<std::int64_t>& counts, double sample, std::uint64_t seed) : rng_(seed) {
  if (sample <= 0.0 || counts.empty()) return;
  const double total = static_cast<double>(std::accumulate(counts.begin(), counts.end(), std::int64_t{0}));
  if (total <= 0.0) return;
  const double threshold = sample * total;
  keep_.resize(counts.size());
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const double f = static_cast<double>(counts[i]);
    const double p = f <= 0.0 ? 1.0 : std::min(1.0, (std::sqrt(f / threshold) + 1.0) * threshold / f);
    // p as a 53-bit fixed-point number: a word is kept when a uniform 53-bit draw falls below it, so p = 1 keeps
    // it always.
    keep_[i] = static_cast<std::uint64_t>(std::ldexp(p, kBits));
  }
}

double Subsampler::keep_probability(std::int32_t id) const {
  return keep_.empty() ? 1.0 : std::ldexp(static_cast<double>(keep_[static_cast<std::size_t>(id)]), -kBits);
}

std::size_t Subsampler::apply(std::int32_t* tokens, std::size_t n) {
  if (keep_.empty()) return 0;
  std::size_t dropped = 0;
  // One draw per word, and no branch on it: whether a frequent word stays is a coin toss the branch predictor
  // would miss about every other time.
  for (std::size_t i = 0; i < n; ++i) {
    const std::int32_t t = tokens[i];
    if (t < 0) continue;  // markers: about one per line, so this branch is predictable
    const bool drop = (rng_() >> (64 - kBits)) >= keep_[static_cast<std::size_t>(t)];
    tokens[i] = drop ? kDropped : t;
    dropped += drop;
  }
  return dropped;
}

}  // namespace fedavg::data
