// Payloads of the small control messages, with their encodings. Bulk payloads (token ids, windows, weights)
// travel as plain int32/float arrays; their shape rules are checked here too.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace fedavg::comm {

// Broadcast by the Dispatcher to the learners at the start of every round.
struct Control {
  enum class Command : std::int64_t { Train = 1, Stop = 2 };
  Command command = Command::Train;
  std::int64_t round = 0;

  using Wire = std::array<std::int64_t, 2>;
  Wire encode() const;
  static Control decode(const Wire& w);  // throws comm::Error on an unknown command or negative round
};

// Dispatcher -> Learner (easgd, hogwild): the answer to a period. Train: go on (easgd: an ElasticStep follows);
// `send_state` asks the learner for its LearnerState (a checkpoint is due). Stop: the learner stops.
struct Answer {
  Control::Command command = Control::Command::Train;
  std::int64_t round = 0;  // the round the Dispatcher is in
  bool send_state = false;

  using Wire = std::array<std::int64_t, 3>;
  Wire encode() const;
  static Answer decode(const Wire& w);  // throws comm::Error like Control::decode
};

// What learners trained: windows, and the sum over them of the training loss. Summed over the learners each
// round (RoundSync::totals); a learner of easgd or hogwild sends its period's in PeriodDone.
struct WindowTotals {
  double windows = 0.0;
  double loss_sum = 0.0;

  WindowTotals& operator+=(const WindowTotals& o) {
    windows += o.windows;
    loss_sum += o.loss_sum;
    return *this;
  }
  // NaN when nothing was trained.
  double mean_loss() const { return windows > 0 ? loss_sum / windows : std::nan(""); }
  using Wire = std::array<double, 2>;
  Wire encode() const { return {windows, loss_sum}; }
  static WindowTotals decode(const Wire& w) { return {w[0], w[1]}; }
};

// Learner -> Batcher: how many windows it wants for its next round.
struct WindowRequest {
  std::int64_t windows = 0;
  using Wire = std::array<std::int64_t, 1>;
  Wire encode() const;
  static WindowRequest decode(const Wire& w);  // throws comm::Error unless windows > 0
};

// Receiver -> sender: permission to send `blocks` more blocks.
struct Credit {
  std::int32_t blocks = 0;
  using Wire = std::array<std::int32_t, 1>;
  Wire encode() const;
  static Credit decode(const Wire& w);  // throws comm::Error unless blocks > 0
};

// Number of windows in a Windows/Batch payload of `elements` int32 values; throws comm::Error unless it is a
// whole number of windows of `width` ids, each id in [0, vocab_size).
std::size_t check_windows(const std::int32_t* data, std::size_t elements, int width, std::int32_t vocab_size);

}  // namespace fedavg::comm
