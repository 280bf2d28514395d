// Who a process is: its world rank and the role it plays (with the role's printable name), for messages and
// for the rank -> role map.
#pragma once

#include <string_view>

namespace fedavg::core {

enum class Role { Unassigned, Dispatcher, Tokenizer, Filter, Batcher, Learner };

constexpr std::string_view role_name(Role r) {
  switch (r) {
    case Role::Dispatcher: return "Dispatcher";
    case Role::Tokenizer: return "Tokenizer";
    case Role::Filter: return "Filter";
    case Role::Batcher: return "Batcher";
    case Role::Learner: return "Learner";
    case Role::Unassigned: break;
  }
  return "Unassigned";
}

// Who this process is, for messages.
struct RankInfo {
  int rank = -1;
  Role role = Role::Unassigned;
};

}  // namespace fedavg::core
