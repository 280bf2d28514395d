#include "training/progress.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace fedavg::training {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

namespace {

// 1234567 -> "1.23M", 81234 -> "81.2k".
std::string count(double v) {
  if (v >= 1e6) return fmt("%.2fM", v / 1e6);
  if (v >= 1e3) return fmt("%.1fk", v / 1e3);
  return fmt("%.0f", v);
}

std::string clock(double seconds) {
  const auto s = static_cast<long>(std::llround(seconds));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  return buf;
}

}  // namespace

double Progress::done(const Round& r) const {
  double done = -1;
  if (s_.max_rounds > 0) done = std::max(done, static_cast<double>(r.round) / s_.max_rounds);
  if (s_.max_seconds > 0) done = std::max(done, r.seconds / s_.max_seconds);
  if (s_.max_epochs > 0 && !r.epochs.empty()) {
    double least = *std::min_element(r.epochs.begin(), r.epochs.end());
    if (!std::isnan(least)) done = std::max(done, least / s_.max_epochs);
  }
  return done < 0 ? done : std::min(std::max(done, shown_done_), 1.0);
}

std::string Progress::line(const Round& r) const {
  std::string out = fmt("round %5.0f", static_cast<double>(r.round));
  const double done = this->done(r);
  if (done >= 0) {
    const bool estimated = s_.max_epochs > 0 && !r.epochs_exact;
    out += fmt(estimated ? "  ~%.0f%%" : "  %3.0f%%", 100 * done);
    if (done > 0 && r.round > 0)
      out += "  ETA " + std::string(estimated ? "~" : "") + clock(r.seconds * (1 - done) / done);
  }
  if (r.round > 0 && !r.epochs.empty() && !std::isnan(r.epochs[0])) {
    out += r.epochs.size() == 1 ? "  pass " : "  passes ";
    for (std::size_t p = 0; p < r.epochs.size(); ++p)
      out += (p ? "/" : "") + std::string(r.epochs_exact ? "" : "~") + fmt("%.2f", r.epochs[p]);
  }
  // The current rate: since the last line (the average since the start until there is one).
  const bool since_last = !std::isnan(rate_from_seconds_) && r.seconds > rate_from_seconds_;
  const double seconds = since_last ? r.seconds - rate_from_seconds_ : r.seconds;
  const double windows = since_last ? r.windows_per_learner - rate_from_windows_ : r.windows_per_learner;
  if (seconds > 0 && windows > 0) {
    const double per_learner = windows / seconds;
    out += "  windows/s " + count(per_learner) + "/learner " + count(per_learner * learners_);
  }
  if (seconds > 0 && sync_since_ > 0) out += fmt("  exchange %.1f%%", 100 * std::min(1.0, sync_since_ / seconds));
  // overlap: how much of the training went on through the exchange.
  if (windows > 0 && through_since_ > 0)
    out += fmt(" (trained through: %.0f%% of windows)", 100 * std::min(1.0, through_since_ / windows));
  // What the exchange and the waits cost the learners: their time not training.
  if (seconds > 0 && idle_since_ > 0) out += fmt("  learners idle %.0f%%", 100 * std::min(1.0, idle_since_ / seconds));
  if (!std::isnan(r.lr)) out += fmt("  lr %.4g", r.lr);
  if (!std::isnan(r.train_loss)) out += fmt("  train loss %.4f", r.train_loss);
  out += fmt("  test loss %.4f", r.test_loss);
  if (s_.target > 0) out += fmt(" (target %g)", s_.target);
  out += fmt("  %.1f s", r.seconds) + r.scores;
  if (rises_ >= kRising)
    out += "  (test loss rising " + std::to_string(rises_) + " rounds in a row: is the learning rate too high?)";
  return out;
}

void Progress::show(const Round& r) {
  sync_since_ += r.sync_seconds;
  through_since_ += r.through_windows;
  idle_since_ += r.idle_seconds;
  rises_ = r.test_loss > last_test_loss_ ? rises_ + 1 : 0;
  last_test_loss_ = r.test_loss;
  const auto now = std::chrono::steady_clock::now();
  const bool due = !any_ || s_.progress_seconds <= 0 ||
                   std::chrono::duration<double>(now - printed_).count() >= s_.progress_seconds;
  if (!due) {
    skipped_ = r;
    pending_ = true;
    return;
  }
  print(r);
  printed_ = now;
  any_ = true;
  pending_ = false;
}

void Progress::flush() {
  if (!pending_) return;
  print(skipped_);
  pending_ = false;
}

void Progress::print(const Round& r) {
  std::printf("%s\n", line(r).c_str());
  shown_done_ = std::max(shown_done_, done(r));
  std::fflush(stdout);
  rate_from_seconds_ = r.seconds;
  rate_from_windows_ = r.windows_per_learner;
  sync_since_ = 0.0;
  through_since_ = 0.0;
  idle_since_ = 0.0;
}

}  // namespace fedavg::training
