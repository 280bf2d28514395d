#include "training/strategies/bsp.hpp"

#include <xxhash.h>

#include <cstdint>

#include "core/error.hpp"

namespace fedavg::training {
namespace {

// 53 bits of the weights' XXH3 hash, exact in a double.
double fingerprint(const float* w, std::size_t size) {
  const std::uint64_t h = XXH3_64bits(w, size * sizeof(float));
  return static_cast<double>(h >> 11);
}

}  // namespace

void Bsp::open_round(RoundSync& sync, core::Floats w, bool first) {
  if (first) sync.weights(w);
}

void Bsp::close_round(RoundSync& sync, core::Floats w, float share) {
  if (!sync.on_dispatcher())
    for (auto& x : w) x *= share;
  sync.allreduce_in_place(w);  // the Dispatcher only receives the average
  after_sparse_round(sync, w.data(), w.size());
}

void Bsp::after_sparse_round(RoundSync& sync, const float* w, std::size_t size) {
  if (!sync.same_everywhere(fingerprint(w, size)))
    throw core::Error("bsp: the replicas of the weights differ after the exchange (they must be bit-identical)");
}

}  // namespace fedavg::training
