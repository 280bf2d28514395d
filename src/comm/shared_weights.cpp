#include "comm/shared_weights.hpp"

#include <string>

namespace fedavg::comm {
namespace {

// The counters (one per learner, then the claimed batches), then the weights from the next page: rows that
// straddle an extra cache line slow training.
constexpr std::size_t kPage = 4096;

std::size_t head_bytes(int members) {
  const std::size_t counters = static_cast<std::size_t>(members);  // members - 1 learners, then the claims
  return (counters * sizeof(std::int64_t) + kPage - 1) / kPage * kPage;
}

}  // namespace

SharedWeights::SharedWeights(const Communicator& comm, std::size_t n, const Deadline& deadline)
    : segment_(comm, head_bytes(comm.size()) + n * sizeof(float), deadline,
               "strategy hogwild shares the weights in memory: the Dispatcher and all " +
                   std::to_string(comm.size() - 1) + " learners"),
      counters_(reinterpret_cast<std::int64_t*>(segment_.data())),
      learners_(comm.size() - 1),
      base_(reinterpret_cast<float*>(segment_.data() + head_bytes(comm.size()))),
      n_((segment_.size() - head_bytes(comm.size())) / sizeof(float)) {}

void SharedWeights::add_trained(int learner, std::int64_t windows) const {
  std::int64_t* c = counters_ + learner;
  __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + windows, __ATOMIC_RELEASE);
}

std::int64_t SharedWeights::trained() const {
  std::int64_t sum = 0;
  for (int i = 0; i < learners_; ++i) sum += __atomic_load_n(counters_ + i, __ATOMIC_ACQUIRE);
  return sum;
}

std::int64_t SharedWeights::claim(std::int64_t limit) const {
  std::int64_t* claimed = counters_ + learners_;
  std::int64_t now = __atomic_load_n(claimed, __ATOMIC_RELAXED);
  while (now < limit)
    if (__atomic_compare_exchange_n(claimed, &now, now + 1, false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) return now;
  return -1;
}

}  // namespace fedavg::comm
