// The machine's physical memory, against which the sizes the settings ask for are bounded: a size whose allocation
// alone cannot fit in it is refused before anything is allocated, with the key named, rather than ending in
// std::bad_alloc or the out-of-memory killer minutes later.
#pragma once

#include <cstdint>
#include <string>

namespace fedavg::core {

// The machine's physical memory in bytes (sysconf: _SC_PHYS_PAGES x _SC_PAGESIZE); 0 where it cannot be told.
std::int64_t physical_memory();

// `bytes` for messages: "512 B", "23.5 GiB", "37.3 TiB".
std::string show_bytes(double bytes);

// Throws InputError "WHERE: WHAT needs N of memory, more than this machine has (M); ADVICE" when `bytes` exceeds
// physical_memory() (never where that is unknown).
void check_fits(double bytes, const std::string& where, const std::string& what, const std::string& advice);

}  // namespace fedavg::core
