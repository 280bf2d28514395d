#include "comm/shared_slots.hpp"

#include <cstring>
#include <string>

#include "core/error.hpp"

namespace fedavg::comm {

namespace {

// A slot: its round (int64), then its values.
std::size_t slot_bytes(std::size_t values) { return sizeof(std::int64_t) + values * sizeof(double); }

}  // namespace

SharedSlots::SharedSlots(const Communicator& comm, std::size_t values, const Deadline& deadline)
    : values_(values),
      members_(comm.size()),
      me_(comm.rank()),
      segment_(comm, slot_bytes(values) * static_cast<std::size_t>(comm.size()), deadline,
               "the " + std::to_string(comm.size()) + " learners that share a host's weights") {}

std::int64_t* SharedSlots::stamp(int member) const {
  return reinterpret_cast<std::int64_t*>(segment_.data() + slot_bytes(values_) * static_cast<std::size_t>(member));
}

const double* SharedSlots::slot(int member) const { return reinterpret_cast<const double*>(stamp(member) + 1); }

void SharedSlots::post(std::int64_t round, const std::vector<double>& values) const {
  if (values.size() != values_)
    throw core::Error("shared slots of " + std::to_string(values_) + " values, posted " +
                      std::to_string(values.size()));
  std::int64_t* at = stamp(me_);
  if (round <= __atomic_load_n(at, __ATOMIC_RELAXED))
    throw core::Error("shared slot posted for round " + std::to_string(round) + " after round " + std::to_string(*at));
  std::memcpy(at + 1, values.data(), values_ * sizeof(double));
  __atomic_store_n(at, round, __ATOMIC_RELEASE);  // the values before the round that names them
}

bool SharedSlots::all_posted(std::int64_t round) const {
  for (int m = 0; m < members_; ++m)
    if (__atomic_load_n(stamp(m), __ATOMIC_ACQUIRE) < round) return false;
  return true;
}

std::vector<double> SharedSlots::sum() const {
  std::vector<double> out(values_, 0.0);
  for (int m = 0; m < members_; ++m) {
    const double* v = slot(m);
    for (std::size_t i = 0; i < values_; ++i) out[i] += v[i];
  }
  return out;
}

}  // namespace fedavg::comm
