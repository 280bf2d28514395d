#include "comm/messages.hpp"

#include <string>

#include "comm/error.hpp"

namespace fedavg::comm {

Control::Wire Control::encode() const {
  return {static_cast<std::int64_t>(command), round, steps, plan, checkpoint ? 1 : 0, done};
}

Control Control::decode(const Wire& w) {
  if (w[0] != static_cast<std::int64_t>(Command::Train) && w[0] != static_cast<std::int64_t>(Command::Stop))
    throw Error("Control message with unknown command " + std::to_string(w[0]));
  if (w[1] < 0) throw Error("Control message with negative round " + std::to_string(w[1]));
  if (w[2] < 0 || w[3] < 0)
    throw Error("Control message with negative steps " + std::to_string(w[2]) + " or plan " + std::to_string(w[3]));
  if (w[4] != 0 && w[4] != 1) throw Error("Control message with checkpoint flag " + std::to_string(w[4]));
  if (w[5] < 0) throw Error("Control message with negative steps done " + std::to_string(w[5]));
  return Control{static_cast<Command>(w[0]), w[1], w[2], w[3], w[4] == 1, w[5]};
}

Answer::Wire Answer::encode() const { return {static_cast<std::int64_t>(command), round, send_state ? 1 : 0}; }

Answer Answer::decode(const Wire& w) {
  const Control c = Control::decode({w[0], w[1], 0, 0, 0, 0});
  if (w[2] != 0 && w[2] != 1) throw Error("Answer message with send_state " + std::to_string(w[2]));
  return Answer{c.command, c.round, w[2] == 1};
}

WindowTotals& WindowTotals::operator+=(const WindowTotals& o) {
  windows += o.windows;
  loss_sum += o.loss_sum;
  lr_sum += o.lr_sum;
  lr_reports += o.lr_reports;
  through += o.through;
  idle_seconds += o.idle_seconds;
  if (pipeline_windows.size() < o.pipeline_windows.size()) pipeline_windows.resize(o.pipeline_windows.size(), 0.0);
  for (std::size_t p = 0; p < o.pipeline_windows.size(); ++p) pipeline_windows[p] += o.pipeline_windows[p];
  return *this;
}

std::vector<double> WindowTotals::encode() const {
  std::vector<double> w{windows, loss_sum, lr_sum, lr_reports, through, idle_seconds};
  w.insert(w.end(), pipeline_windows.begin(), pipeline_windows.end());
  return w;
}

WindowTotals WindowTotals::decode(const std::vector<double>& w) {
  if (w.size() < 6) throw Error("window totals of " + std::to_string(w.size()) + " values (need at least 6)");
  return WindowTotals{w[0], w[1], w[2], w[3], std::vector<double>(w.begin() + 6, w.end()), w[4], w[5]};
}

WindowRequest::Wire WindowRequest::encode() const { return {windows}; }

WindowRequest WindowRequest::decode(const Wire& w) {
  if (w[0] <= 0) throw Error("Request message for " + std::to_string(w[0]) + " windows");
  return WindowRequest{w[0]};
}

ShardGrant::Wire ShardGrant::encode() const { return {shard, file, begin, end, epoch, ahead}; }

ShardGrant ShardGrant::decode(const Wire& w) {
  if (w[0] < 0 || w[1] < 0 || w[2] < 0 || w[3] <= w[2] || w[4] < 0 || w[5] < 1) {
    std::string fields;
    for (const auto v : w) fields += (fields.empty() ? "" : ", ") + std::to_string(v);
    throw Error("Shard message [" + fields + "] is not a shard");
  }
  return ShardGrant{w[0], w[1], w[2], w[3], w[4], w[5]};
}

ShardDone::Wire ShardDone::encode() const { return {shard, epoch}; }

ShardDone ShardDone::decode(const Wire& w) {
  if (w[0] < 0 || w[1] < 0)
    throw Error("ShardDone message [" + std::to_string(w[0]) + ", " + std::to_string(w[1]) + "] is not a shard");
  return ShardDone{w[0], w[1]};
}

Credit::Wire Credit::encode() const { return {blocks}; }

Credit Credit::decode(const Wire& w) {
  if (w[0] <= 0) throw Error("Credit message granting " + std::to_string(w[0]) + " blocks");
  return Credit{w[0]};
}

std::size_t check_windows(const std::int32_t* data, std::size_t elements, int width, std::int32_t vocab_size,
                          bool empty_slots) {
  if (width <= 0 || elements % static_cast<std::size_t>(width) != 0)
    throw Error("windows payload of " + std::to_string(elements) + " ids is not a whole number of windows of " +
                std::to_string(width));
  const auto w = static_cast<std::size_t>(width);
  const std::size_t target = w / 2;
  // Every batch passes through here, so the common case is two branch-free passes that the compiler vectorises:
  // every id in [0, vocab_size), or in [-1, vocab_size) where slots may be empty (compared unsigned, so an id below
  // the range wraps above it); then, for cut windows, no target slot holding -1. Only a payload that fails them is
  // read again, to name its first bad id.
  const std::uint32_t shift = empty_slots ? 1u : 0u;
  const std::uint32_t limit = static_cast<std::uint32_t>(vocab_size) + shift;
  std::uint32_t out = 0;
  for (std::size_t i = 0; i < elements; ++i)
    out |= static_cast<std::uint32_t>(static_cast<std::uint32_t>(data[i]) + shift >= limit);
  if (empty_slots)
    for (std::size_t i = target; i < elements; i += w) out |= static_cast<std::uint32_t>(data[i] == -1);
  if (out != 0) {
    for (std::size_t i = 0; i < elements; ++i) {
      const bool empty = empty_slots && data[i] == -1 && i % w != target;
      if (!empty && (data[i] < 0 || data[i] >= vocab_size))
        throw Error("windows payload holds id " + std::to_string(data[i]) + " outside the vocabulary of " +
                    std::to_string(vocab_size));
    }
  }
  return elements / w;
}

}  // namespace fedavg::comm
