// Where a pipeline is in its corpus file: the byte offset of its next block and the passes over the file it has
// completed. Tokenizers report it, checkpoints keep it, --resume continues from it.
#pragma once

#include <array>
#include <cstdint>

namespace fedavg::core {

struct ReadPosition {
  std::int64_t offset = 0;
  std::int64_t passes = 0;

  using Wire = std::array<std::int64_t, 2>;
  Wire encode() const { return {offset, passes}; }
  static ReadPosition decode(const Wire& w) { return {w[0], w[1]}; }
};

// Checkpoints store positions as an [n, 2] int64 array straight from a vector of them.
static_assert(sizeof(ReadPosition) == 2 * sizeof(std::int64_t), "ReadPosition must pack to two int64");

}  // namespace fedavg::core
