#include "core/log.hpp"

#include <iostream>

namespace fedavg::core {

void log_line(const RankInfo& me, std::string_view msg) {
  std::cerr << "[fedavg] rank " << me.rank << " (" << role_name(me.role) << "): " << msg << std::endl;
}

void warn(const RankInfo& me, std::string_view msg) {
  std::cerr << "[fedavg] rank " << me.rank << " (" << role_name(me.role) << ") WARNING: " << msg << std::endl;
}

}  // namespace fedavg::core
