// Tokenizer: reads its corpus file in blocks of whole lines, tokenizes them in Python (textpipe, no torch) and
// streams blocks of token ids to its Filter, never more blocks in flight than the Filter granted.
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
