#include "core/error.hpp"
#include "roles/batcher.hpp"
#include "roles/dispatcher.hpp"
#include "roles/filter.hpp"
#include "roles/learner.hpp"
#include "roles/role.hpp"
#include "roles/tokenizer.hpp"

namespace fedavg::roles {

std::unique_ptr<Role> make(const Context& ctx) {
  switch (ctx.me.role) {
    case core::Role::Dispatcher: return std::make_unique<Dispatcher>(ctx);
    case core::Role::Tokenizer: return std::make_unique<Tokenizer>(ctx);
    case core::Role::Filter: return std::make_unique<Filter>(ctx);
    case core::Role::Batcher: return std::make_unique<Batcher>(ctx);
    case core::Role::Learner: return std::make_unique<Learner>(ctx);
    case core::Role::Unassigned: break;
  }
  throw core::Error("no role for rank " + std::to_string(ctx.me.rank));
}

}  // namespace fedavg::roles
