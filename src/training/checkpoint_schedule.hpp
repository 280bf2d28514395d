// Which rounds end with a checkpoint (DispatcherRun): every `checkpoint_every` rounds, and the first round that
// begins `checkpoint_seconds` of training after the last checkpoint. Where a round that ends with a checkpoint
// costs more than others (a sparse exchange that sends a fraction of the rows makes it a whole one, sending
// every change the members held back: space_by_exchange), checkpoints by time come no sooner than kCheckpointSpacing
// times what the last one's round took in exchange beyond the round before it: such rounds then take at most about 5 %
// of the time. Each round's answer is decided when the round is first asked about, and kept: the learners learn it with
// that round's Control or Answer.
#pragma once

#include <map>

namespace fedavg::training {

inline constexpr double kCheckpointSpacing = 20.0;

class CheckpointSchedule {
 public:
  // `every`: checkpoint_every (0: by time only); `seconds`: checkpoint_seconds (0: by rounds only).
  CheckpointSchedule(int every, double seconds) : every_(every), seconds_(seconds) {}

  // Whether round `round` (the current round `current`, or the next) ends with a checkpoint, asked at training
  // time `now`.
  bool due(long round, long current, double now);
  // Checkpoint rounds cost more than others: space the checkpoints by time by what they cost (off: by
  // checkpoint_seconds alone, however the exchange times vary).
  void space_by_exchange(bool on) { spaced_ = on; }
  // A round ended whose weight exchange took `exchange_seconds`; `checkpoint`: it ended with a checkpoint.
  void round_ended(double exchange_seconds, bool checkpoint);
  // A checkpoint was written at training time `at` (or the run resumed from one, or started, there).
  void written(double at) { written_at_ = at; }
  // The least training time between checkpoints by time as things stand.
  double spacing() const;

 private:
  int every_;
  double seconds_;
  bool spaced_ = false;
  double written_at_ = 0.0;
  double last_exchange_ = 0.0;    // the exchange seconds of the last round
  double extra_ = 0.0;            // what the last checkpoint's round took in exchange beyond the round before
  std::map<long, bool> decided_;  // from the current round on
};

}  // namespace fedavg::training
