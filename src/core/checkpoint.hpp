// The model weights as HDF5: one dataset per named parameter plus run attributes, written to a temporary file
// and renamed, so a crash during the write leaves the previous checkpoint intact.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace fedavg::core {

struct NamedArray {
  std::string name;
  std::vector<std::size_t> shape;
  const float* data;  // row-major, prod(shape) values
};

struct CheckpointInfo {
  std::int64_t round = 0;
  double test_loss = 0.0;
  double windows_per_learner = 0.0;
  std::uint64_t seed = 0;
  std::string data_name;
};

// Throws core::Error naming the file on any HDF5 failure.
void write_checkpoint(const std::filesystem::path& path, const std::vector<NamedArray>& arrays,
                      const CheckpointInfo& info);

}  // namespace fedavg::core
