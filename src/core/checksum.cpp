#include "core/checksum.hpp"

#include <xxhash.h>

#include <memory>

namespace fedavg::core {

std::uint64_t checksum(const void* data, std::size_t bytes) { return XXH3_64bits(data, bytes); }

std::uint64_t checksum(const std::vector<std::string>& texts) {
  const std::unique_ptr<XXH3_state_t, XXH_errorcode (*)(XXH3_state_t*)> state(XXH3_createState(), XXH3_freeState);
  XXH3_64bits_reset(state.get());
  for (const auto& t : texts) {
    const std::uint64_t size = t.size();
    XXH3_64bits_update(state.get(), &size, sizeof size);
    XXH3_64bits_update(state.get(), t.data(), t.size());
  }
  return XXH3_64bits_digest(state.get());
}

}  // namespace fedavg::core
