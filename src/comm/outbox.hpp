// Sends in flight together with the buffers they read from. A buffer is released once its send completes.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <variant>
#include <vector>

#include "comm/communicator.hpp"

namespace fedavg::comm {

class Outbox {
 public:
  explicit Outbox(const Communicator& comm) : comm_(comm) {}
  // While an exception unwinds, the buffers of sends still in flight are leaked on purpose: a receiver may
  // still be copying from them, and freeing them would hand it garbage before the job aborts.
  ~Outbox();
  Outbox(const Outbox&) = delete;
  Outbox& operator=(const Outbox&) = delete;

  // Sends `data` (moved in, kept alive until delivered) to `dest` with `tag`. T: int32, int64, uint8, float or double.
  template <typename T> void send(std::vector<T>&& data, int dest, Tag tag) {
    entries_.push_back({Request{}, Payload(std::move(data))});
    auto& e = entries_.back();
    const auto& v = std::get<std::vector<T>>(e.payload);
    e.req = comm_.isend(v.data(), v.size(), dest, tag);
  }
  // Sends a small encoded message (Credit, WindowRequest); its bytes are copied.
  template <typename T, std::size_t N> void send(const std::array<T, N>& wire, int dest, Tag tag) {
    send(std::vector<T>(wire.begin(), wire.end()), dest, tag);
  }
  void send_empty(int dest, Tag tag);

  // Releases completed sends; returns how many are still in flight. Never blocks.
  std::size_t retire();
  // Polls with backoff until every send has completed; throws comm::Timeout at the deadline.
  void flush(const Deadline& deadline);

 private:
  using Payload = std::variant<std::vector<std::int32_t>, std::vector<std::int64_t>, std::vector<std::uint8_t>,
                               std::vector<float>, std::vector<double>>;
  struct Entry {
    Request req;
    Payload payload;  // moving an Entry moves the vector, whose buffer stays where the send reads it
  };
  const Communicator& comm_;
  std::deque<Entry> entries_;
};

// The end-of-stream handshake between two pipeline stages (see docs/protocol.md).
// Downstream side: tell `upstream` to stop, then receive and drop whatever it still sends until its
// ShutdownAck arrives, so none of its sends is left pending.
// `who` names the upstream peer in a timeout ("Filter rank 2").
void stop_upstream(const Communicator& comm, int upstream, const std::string& who, const Deadline& deadline);
// Upstream side, after a Shutdown from `downstream`: complete every send, then send ShutdownAck.
void acknowledge_stop(Outbox& outbox, int downstream, const Deadline& deadline);

}  // namespace fedavg::comm
