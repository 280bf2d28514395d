// Tokenizer: reads its corpus file (or, with shards, the shards the Dispatcher hands it) in blocks of whole lines,
// tokenizes them in Python (textpipe, no torch) or replays them from the token cache, and streams blocks of token
// ids to its Filter, never more blocks in flight than the Filter granted.
#pragma once

#include "roles/role.hpp"

namespace fedavg::roles {

class Tokenizer : public Role {
 public:
  explicit Tokenizer(const Context& ctx) : ctx_(ctx) {}
  void run() override;

 private:
  const Context& ctx_;
};

}  // namespace fedavg::roles
