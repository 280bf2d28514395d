#include "comm/shared_row_marks.hpp"

#include <string>

#include "core/error.hpp"

namespace fedavg::comm {

SharedRowMarks::SharedRowMarks(const Communicator& comm, std::size_t rows, const Deadline& deadline)
    : segment_(comm, rows, deadline, "the " + std::to_string(comm.size()) + " learners that share a host's weights") {}

void SharedRowMarks::mark(std::size_t first, const std::vector<std::uint32_t>& rows) const {
  char* marks = segment_.data() + first;
  for (const std::uint32_t r : rows) {
    if (first + r >= segment_.size())
      throw core::Error("row mark " + std::to_string(first + r) + " of " + std::to_string(segment_.size()));
    __atomic_store_n(marks + r, char{1}, __ATOMIC_RELEASE);  // always: a mark that is set may be taken meanwhile
  }
}

void SharedRowMarks::take(std::size_t first, std::size_t n, std::vector<std::uint32_t>& out) const {
  char* marks = segment_.data() + first;
  for (std::size_t r = 0; r < n; ++r)
    if (__atomic_load_n(marks + r, __ATOMIC_RELAXED) != 0 && __atomic_exchange_n(marks + r, char{0}, __ATOMIC_ACQ_REL))
      out.push_back(static_cast<std::uint32_t>(r));
}

}  // namespace fedavg::comm
