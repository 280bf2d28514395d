#include "roles/positions.hpp"

#include "comm/communicator.hpp"
#include "comm/tags.hpp"

namespace fedavg::roles {

int Positions::drain() {
  for (int p = 0; p < ctx_.map.pipelines(); ++p) {
    while (auto a = ctx_.world.probe(ctx_.map.tokenizer(p), comm::Tag::Position)) {
      core::ReadPosition pos{};
      ctx_.world.receive_into(*a, pos.data(), pos.size());
      if (pos[1] < 0) {
        ++finals_;
      } else {
        latest_[static_cast<std::size_t>(p)] = pos;
      }
    }
  }
  return finals_;
}

}  // namespace fedavg::roles
