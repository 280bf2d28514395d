#include "training/exchange/sparse_exchange.hpp"

namespace fedavg::training {

bool sparse_exchange(const core::Settings& s, std::size_t params, bool learners_on_one_host) {
  switch (s.exchange) {
    case core::Exchange::Sparse: return true;
    case core::Exchange::Dense: return false;
    case core::Exchange::Auto: break;
  }
  return params >= core::kLargeModel && !learners_on_one_host;
}

}  // namespace fedavg::training
