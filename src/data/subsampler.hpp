// word2vec's subsampling of frequent words, applied by the Filter before windowing so dropped words never
// travel: word w is kept with probability (sqrt(f/(s*T)) + 1) * (s*T)/f, f its count, T the total count.
#pragma once

#include <cstdint>
#include <pcg_random.hpp>
#include <vector>

#include "data/markers.hpp"

namespace fedavg::data {

class Subsampler {
 public:
  static constexpr std::int32_t kDropped = data::kDropped;  // left where a word was dropped

  // `sample` <= 0 or empty counts: keeps every word. `seed` makes the drops reproducible.
  Subsampler(const std::vector<std::int64_t>& counts, double sample, std::uint64_t seed);

  bool active() const { return !keep_.empty(); }
  double keep_probability(std::int32_t id) const;
  // Replaces dropped ids in tokens[0, n) with kDropped; markers (< 0) pass through. Returns the number dropped.
  std::size_t apply(std::int32_t* tokens, std::size_t n);

 private:
  static constexpr int kBits = 53;
  std::vector<std::uint64_t> keep_;  // per word: its keep probability times 2^kBits
  pcg64 rng_;
};

}  // namespace fedavg::data
