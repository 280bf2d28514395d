#include "training/strategies/bsp.hpp"

#include <xxhash.h>

#include <cstdint>

#include "core/error.hpp"

namespace fedavg::training {
namespace {

// 53 bits of the weights' XXH3 hash, exact in a double.
double fingerprint(const std::vector<float>& w) {
  const std::uint64_t h = XXH3_64bits(w.data(), w.size() * sizeof(float));
  return static_cast<double>(h >> 11);
}

}  // namespace

void Bsp::open_round(RoundSync& sync, std::vector<float>& w, bool first) {
  if (first) sync.weights(w);
}

void Bsp::close_round(RoundSync& sync, std::vector<float>& w, float share) {
  if (!sync.on_dispatcher())
    for (auto& x : w) x *= share;
  sync.allreduce_in_place(w);  // the Dispatcher only receives the average
  after_sparse_round(sync, w);
}

void Bsp::after_sparse_round(RoundSync& sync, const std::vector<float>& w) {
  if (!sync.same_everywhere(fingerprint(w)))
    throw core::Error("bsp: the replicas of the weights differ after the exchange (they must be bit-identical)");
}

}  // namespace fedavg::training
