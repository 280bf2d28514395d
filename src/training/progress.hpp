// The Dispatcher's progress line: per round, how far the run is towards the limit that will end it first
// (percent and ETA, which never go back; "~" while they rest on estimated passes), windows per second per learner and
// in all, the weight exchange's share of the training time and the learners' idle share of it (all since the line
// before), the learners' learning
// rate, the train and test loss, and the pass over the corpus each pipeline is on. Plain lines, at most one per
// progress_seconds (the first round's and the last always), so short rounds do not flood a log.
#pragma once

#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "core/settings.hpp"

namespace fedavg::training {

// `v` printed with the printf format `f` ("%.3f"), for the progress line and the run's statistics.
std::string fmt(const char* f, double v);

class Progress {
 public:
  struct Round {
    long round = 0;
    double seconds = 0;  // training time
    double windows_per_learner = 0;
    double test_loss = 0;
    double train_loss = 0;       // NaN before the first round
    double lr = 0;               // NaN if the model does not say
    std::vector<double> epochs;  // per pipeline; NaN if unknown
    bool epochs_exact = true;    // false: estimated from the read positions
    std::string scores;          // "  similarity 0.41 ..." when scored
    double sync_seconds = 0;     // this round's weight exchange (the metrics' sync_seconds)
    double through_windows = 0;  // of this round's windows per learner, those trained through an exchange
    double idle_seconds = 0;     // the round's seconds the learners did not train, their mean
  };

  Progress(const core::Settings& s, int learners) : s_(s), learners_(learners) {}

  // Prints the line for `r` unless one was printed less than progress_seconds ago; its exchange seconds count
  // towards the next line printed. Every round's test loss counts
  // towards the warning the line carries once it has risen kRising rounds in a row.
  void show(const Round& r);
  static constexpr int kRising = 3;
  // Prints the last round's line if show() skipped it.
  void flush();
  // A resumed run: the first line's rate counts from these training seconds and windows per learner.
  void resumed(double seconds, double windows_per_learner) {
    rate_from_seconds_ = seconds;
    rate_from_windows_ = windows_per_learner;
  }
  // The line, without printing it.
  std::string line(const Round& r) const;

 private:
  const core::Settings& s_;
  int learners_;
  // Prints line(r) and keeps r as the start of the next line's rate.
  void print(const Round& r);
  // How far towards the limit that ends the run first, in [0, 1], never below what a line printed before showed (an
  // estimated pass count may fall once the passes are known); -1 if no limit applies.
  double done(const Round& r) const;

  std::chrono::steady_clock::time_point printed_{};
  double rate_from_seconds_ = std::nan("");  // training seconds and windows per learner at the last line printed
  double rate_from_windows_ = 0.0;
  double through_since_ = 0.0;  // windows per learner trained through an exchange, as sync_since_ counts
  double idle_since_ = 0.0;     // the learners' mean seconds not training, as sync_since_ counts
  double sync_since_ = 0.0;     // exchange seconds of the rounds since the last line printed, the next one's included
  double shown_done_ = 0.0;     // the share done that the last line printed showed
  double last_test_loss_ = std::nan("");
  int rises_ = 0;  // rounds in a row whose test loss rose
  bool any_ = false;
  Round skipped_;
  bool pending_ = false;  // skipped_ was not printed
};

}  // namespace fedavg::training
