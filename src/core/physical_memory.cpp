#include "core/physical_memory.hpp"

#include <unistd.h>

#include <cstdio>

#include "core/error.hpp"

namespace fedavg::core {

std::int64_t physical_memory() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::int64_t>(pages) * page : 0;
}

std::string show_bytes(double bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  while (bytes >= 1024.0 && unit < 6) {
    bytes /= 1024.0;
    ++unit;
  }
  char out[48];
  std::snprintf(out, sizeof out, unit == 0 ? "%.0f %s" : "%.1f %s", bytes, kUnits[unit]);
  return out;
}

void check_fits(double bytes, const std::string& where, const std::string& what, const std::string& advice) {
  const auto memory = physical_memory();
  if (memory <= 0 || bytes <= static_cast<double>(memory)) return;
  throw InputError(where + ": " + what + " needs " + show_bytes(bytes) + " of memory, more than this machine has (" +
                   show_bytes(static_cast<double>(memory)) + "); " + advice);
}

}  // namespace fedavg::core
