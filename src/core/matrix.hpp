// A row-major float32 matrix (the embedding table handed out of Python).
#pragma once

#include <cstddef>
#include <vector>

namespace fedavg::core {

struct Matrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<float> data;
};

}  // namespace fedavg::core
