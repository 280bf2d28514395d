// Where the program finds its own python/ and config/ folders, independent of the working directory.
#pragma once

#include <filesystem>

namespace fedavg::core {

// <source tree>/python, fixed at configure time.
std::filesystem::path default_python_dir();
// <source tree>/config, fixed at configure time.
std::filesystem::path default_config_dir();
// <build tree>/src/kernels, fixed at configure time: the Python module fedavg_kernels (src/kernels/).
std::filesystem::path kernels_dir();

}  // namespace fedavg::core
