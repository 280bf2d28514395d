#include "comm/credit_line.hpp"

#include "comm/error.hpp"
#include "comm/messages.hpp"

namespace fedavg::comm {

bool CreditLine::poll() {
  bool any = false;
  while (auto a = comm_.probe(downstream_, std::nullopt)) {
    any = true;
    if (a->tag == Tag::Credit) {
      Credit::Wire w{};
      comm_.receive_into(*a, w.data(), w.size());
      credits_ += Credit::decode(w).blocks;
    } else if (a->tag == Tag::Shutdown) {
      comm_.discard(*a);
      stopped_ = true;
    } else {
      throw Error("unexpected message tag " + std::to_string(tag_value(a->tag)) + " from " + who_);
    }
  }
  return any;
}

}  // namespace fedavg::comm
