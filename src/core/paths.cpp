#include "core/paths.hpp"

#include "build_info.hpp"

namespace fedavg::core {

std::filesystem::path default_python_dir() { return std::filesystem::path(FEDAVG_SOURCE_DIR) / "python"; }
std::filesystem::path default_config_dir() { return std::filesystem::path(FEDAVG_SOURCE_DIR) / "config"; }
std::filesystem::path kernels_dir() { return FEDAVG_KERNELS_DIR; }

}  // namespace fedavg::core
