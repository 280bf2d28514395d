// Filter: turns its Tokenizer's token stream into sliding context windows and sends them to its Batcher in
// blocks. It grants the Tokenizer credits as it consumes token blocks and sends windows only against credits
// from the Batcher, so neither queue grows without limit.
#pragma once

#include "roles/role.hpp"

namespace fedavg::roles {

class Filter : public Role {
 public:
  explicit Filter(const Context& ctx) : ctx_(ctx) {}
  void run() override;

 private:
  const Context& ctx_;
};

}  // namespace fedavg::roles
