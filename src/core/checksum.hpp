// The checksum every dataset of a checkpoint carries (attribute "xxh3"): XXH3's 64-bit hash of its values' bytes,
// or for text of each string's length and bytes in turn. It finds a damaged file on load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace fedavg::core {

std::uint64_t checksum(const void* data, std::size_t bytes);
std::uint64_t checksum(const std::vector<std::string>& texts);

}  // namespace fedavg::core
