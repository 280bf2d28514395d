// Turns a stream of token ids (with line-end, out-of-vocabulary and end-of-file markers) into sliding context
// windows of 2w+1 ids in text order, the target in the middle. Which markers break a window is configurable;
// the end of the file always does, so windows never wrap around to the start. Subsampled words are skipped.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <string>

#include "core/settings.hpp"
#include "data/markers.hpp"

namespace fedavg::data {

// What a window needs under `s`, for the error when a corpus gives none: "5 consecutive vocabulary words within
// one line without unknown words, after subsampling (sample 0.001 ...) (see cross_lines / cross_oov / sample in
// cfg.json)", naming the settings that decide it.
std::string window_conditions(const core::Settings& s);

class Windower {
 public:
  static constexpr std::int32_t kBreak = data::kBreak;
  static constexpr std::int32_t kOov = data::kOov;
  static constexpr std::int32_t kEof = data::kEof;
  static constexpr std::int32_t kDropped = data::kDropped;

  Windower(int window, bool cross_lines, bool cross_oov);

  int width() const { return 2 * window_ + 1; }

  // Consumes tokens[pos, n) and appends windows to `out` until `out` holds `max_windows` windows or the
  // tokens run out. Returns the position of the first token not consumed.
  std::size_t feed(const std::int32_t* tokens, std::size_t n, std::size_t pos, std::vector<std::int32_t>& out,
                   std::size_t max_windows);

  // Windows produced since the last end-of-file marker, and whether one has been seen with none before it.
  std::int64_t windows_this_epoch() const { return epoch_windows_; }
  bool empty_epoch_seen() const { return empty_epoch_; }
  // The windows of each pass that ended (at an end-of-file marker) since the last call.
  std::vector<std::int64_t> take_finished_passes() { return std::exchange(finished_, {}); }

 private:
  int window_;
  bool cross_lines_;
  bool cross_oov_;
  // The current unbroken run's ids, run_len_ of them at the front; its last 2w+1 are the next window. When the
  // buffer fills, its last 2w ids move to its front: a window costs a copy of its own ids, no shift.
  std::vector<std::int32_t> run_;
  std::size_t run_len_ = 0;
  std::int64_t epoch_windows_ = 0;
  bool empty_epoch_ = false;
  std::vector<std::int64_t> finished_;
};

}  // namespace fedavg::data
