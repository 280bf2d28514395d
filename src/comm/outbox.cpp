#include "comm/outbox.hpp"

#include <algorithm>
#include <exception>

namespace fedavg::comm {

Outbox::~Outbox() {
  if (std::uncaught_exceptions() > 0 && retire() > 0) {
    auto* abandoned = new std::deque<Entry>(std::move(entries_));  // never freed: see the header
    (void)abandoned;
  }
}

void Outbox::send_empty(int dest, Tag tag) { entries_.push_back({comm_.isend_empty(dest, tag), {}}); }

std::size_t Outbox::retire() {
  std::size_t pending = 0;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (it->req.test()) {
      it = entries_.erase(it);
    } else {
      ++pending;
      ++it;
    }
  }
  return pending;
}

void Outbox::flush(const Deadline& deadline) {
  std::vector<int> to;
  for (const auto& e : entries_)
    for (int p : e.req.peers())
      if (std::find(to.begin(), to.end(), p) == to.end()) to.push_back(p);
  poll_until([this] { return retire() == 0; }, deadline.peers.empty() ? deadline.on(to, true) : deadline,
             entries_.empty() ? std::string("send") : "delivery of " + entries_.front().req.what());
}

void stop_upstream(const Communicator& comm, int upstream, const std::string& who, const Deadline& deadline) {
  Request stop = comm.isend_empty(upstream, Tag::Shutdown);
  bool acked = false;
  poll_until(
      [&] {
        while (auto a = comm.probe(upstream, std::nullopt)) {
          comm.discard(*a);
          if (a->tag == Tag::ShutdownAck) acked = true;
        }
        return acked && stop.test();
      },
      deadline, "ShutdownAck from " + who);
}

void acknowledge_stop(Outbox& outbox, int downstream, const Deadline& deadline) {
  outbox.flush(deadline);
  outbox.send_empty(downstream, Tag::ShutdownAck);
  outbox.flush(deadline);
}

}  // namespace fedavg::comm
