#include "training/positions.hpp"

#include "comm/communicator.hpp"
#include "comm/tags.hpp"

namespace fedavg::training {

int Positions::drain() {
  for (int p = 0; p < ctx_.map.pipelines(); ++p) {
    while (auto a = ctx_.world.probe(ctx_.map.tokenizer(p), comm::Tag::Position)) {
      core::ReadPosition::Wire wire{};
      ctx_.world.receive_into(*a, wire.data(), wire.size());
      const auto pos = core::ReadPosition::decode(wire);
      if (pos.passes < 0) {
        ++finals_;
      } else {
        latest_[static_cast<std::size_t>(p)] = pos;
      }
    }
  }
  return finals_;
}

}  // namespace fedavg::training
