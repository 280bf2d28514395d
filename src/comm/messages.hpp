// Payloads of the small control messages, with their encodings. Bulk payloads (token ids, windows, weights)
// travel as plain int32/float arrays; their shape rules are checked here too.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace fedavg::comm {

// Broadcast by the Dispatcher to the learners at the start of every round.
struct Control {
  enum class Command : std::int64_t { Train = 1, Stop = 2 };
  Command command = Command::Train;
  std::int64_t round = 0;
  std::int64_t steps = 0;   // Train: the batches each learner trains this round; 0: bpe
  std::int64_t plan = 0;    // Train: a learner's steps over the whole run, once known (max_epochs); 0: unknown
  bool checkpoint = false;  // Train: the round ends with a checkpoint, so every learner sends its LearnerState
  std::int64_t done = 0;    // Train: a learner's steps so far over the whole run (the windows trained over bs)

  using Wire = std::array<std::int64_t, 6>;
  Wire encode() const;
  // Throws comm::Error on an unknown command, a negative round, steps, plan or done, or a checkpoint flag not 0 or
  // 1.
  static Control decode(const Wire& w);
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

// What learners trained: windows, the sum over them of the training loss, the sum of the learners' current
// learning rates (over lr_reports learners; a model that does not say adds none), and the windows per pipeline.
// Summed over the learners each round (RoundSync::totals); a learner of easgd or hogwild sends its period's in
// PeriodDone.
struct WindowTotals {
  double windows = 0.0;
  double loss_sum = 0.0;
  double lr_sum = 0.0;
  double lr_reports = 0.0;
  std::vector<double> pipeline_windows;  // one per pipeline
  double through = 0.0;                  // of `windows`, those trained through an exchange (overlap)
  double idle_seconds = 0.0;             // the learners' seconds between their training calls (LearnerRun::train)

  WindowTotals& operator+=(const WindowTotals& o);
  // NaN when nothing was trained.
  double mean_loss() const { return windows > 0 ? loss_sum / windows : std::nan(""); }
  // NaN when no learner said.
  double mean_lr() const { return lr_reports > 0 ? lr_sum / lr_reports : std::nan(""); }
  // [windows, loss_sum, lr_sum, lr_reports, through, idle_seconds, windows of pipeline 0, ...]
  std::vector<double> encode() const;
  static WindowTotals decode(const std::vector<double>& w);  // throws comm::Error if too short
};

// Learner -> Batcher: how many windows it wants for its next round.
struct WindowRequest {
  std::int64_t windows = 0;
  using Wire = std::array<std::int64_t, 1>;
  Wire encode() const;
  static WindowRequest decode(const Wire& w);  // throws comm::Error unless windows > 0
};

// Dispatcher -> Tokenizer (shards): read bytes [begin, end) of corpus file `file` (shard `shard`) for `epoch`.
// The Dispatcher grants every Tokenizer `ahead` shards at start (the same in every grant), so it holds the next
// ones while it reads one, then one for each it has read.
struct ShardGrant {
  std::int64_t shard = 0;
  std::int64_t file = 0;
  std::int64_t begin = 0;
  std::int64_t end = 0;
  std::int64_t epoch = 0;
  std::int64_t ahead = 0;
  using Wire = std::array<std::int64_t, 6>;
  Wire encode() const;
  // Throws comm::Error unless the fields are >= 0, begin < end and ahead >= 1.
  static ShardGrant decode(const Wire& w);
};

// Tokenizer -> Dispatcher (shards): it has read all of shard `shard` for `epoch`; the Dispatcher answers with the
// next ShardGrant.
struct ShardDone {
  std::int64_t shard = 0;
  std::int64_t epoch = 0;
  using Wire = std::array<std::int64_t, 2>;
  Wire encode() const;
  static ShardDone decode(const Wire& w);  // throws comm::Error unless both are >= 0
};

// Receiver -> sender: permission to send `blocks` more blocks.
struct Credit {
  std::int32_t blocks = 0;
  using Wire = std::array<std::int32_t, 1>;
  Wire encode() const;
  static Credit decode(const Wire& w);  // throws comm::Error unless blocks > 0
};

// Number of windows in a Windows/Batch payload of `elements` int32 values; throws comm::Error unless it is a
// whole number of windows of `width` ids, each id in [0, vocab_size) or, with `empty_slots` (edge_windows), -1 in a
// context slot.
std::size_t check_windows(const std::int32_t* data, std::size_t elements, int width, std::int32_t vocab_size,
                          bool empty_slots = false);

}  // namespace fedavg::comm
