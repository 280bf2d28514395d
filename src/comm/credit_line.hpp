// The upstream end of a credit-based stream: counts the blocks the downstream peer allows, and notices its
// Shutdown. Used by every stage that sends blocks (Tokenizer -> Filter, Filter -> Batcher).
#pragma once

#include <cstdint>
#include <string>

#include "comm/communicator.hpp"

namespace fedavg::comm {

class CreditLine {
 public:
  CreditLine(const Communicator& comm, int downstream, std::string who)
      : comm_(comm), downstream_(downstream), who_(std::move(who)) {}

  // Takes every Credit and Shutdown that has arrived; returns true if any did. Throws comm::Error on any
  // other message from the peer.
  bool poll();
  bool can_send() const { return credits_ > 0 && !stopped_; }
  void spend() { --credits_; }
  bool stopped() const { return stopped_; }
  int peer() const { return downstream_; }
  const std::string& who() const { return who_; }

 private:
  const Communicator& comm_;
  int downstream_;
  std::string who_;
  std::int64_t credits_ = 0;
  bool stopped_ = false;
};

}  // namespace fedavg::comm
