// Turns a stream of token ids (with line-end, out-of-vocabulary and end-of-file markers) into sliding context
// windows of 2w+1 ids in text order, the target in the middle. Which markers break a window is configurable;
// the end of the file always does, so windows never wrap around to the start. Subsampled words are skipped.
// By default a window is whole: 2w+1 consecutive words of one unbroken run. With `edges` (edge_windows), every word
// of a run of two words or more is a target, its context the up to w words on each side that the run has, the
// slots a run's end leaves empty holding kNoWord (as gensim's windows stop at a sentence's ends). With `reduced` as
// well (reduced_windows), each target's context reaches a random 1..w words on each side, uniformly drawn per target
// (word2vec's and gensim's reduced window: nearer words are context more often); the slots beyond hold kNoWord.
#pragma once

#include <cstdint>
#include <pcg_random.hpp>
#include <utility>
#include <vector>

#include <string>

#include "core/settings.hpp"
#include "data/markers.hpp"

namespace fedavg::data {

// What a window needs under `s`, for the error when a corpus gives none: "5 consecutive vocabulary words within
// one line without unknown words, after subsampling (sample 0.001 ...) (see edge_windows / cross_lines / cross_oov /
// sample in
// cfg.json)", naming the settings that decide it.
std::string window_conditions(const core::Settings& s);

class Windower {
 public:
  static constexpr std::int32_t kBreak = data::kBreak;
  static constexpr std::int32_t kOov = data::kOov;
  static constexpr std::int32_t kEof = data::kEof;
  static constexpr std::int32_t kDropped = data::kDropped;

  static constexpr std::int32_t kNoWord = -1;  // an empty context slot of a window a run's end cut short

  // `seed` draws the reduced windows.
  Windower(int window, bool cross_lines, bool cross_oov, bool edges = false, bool reduced = false,
           std::uint64_t seed = 0);

  int width() const { return 2 * window_ + 1; }

  // Consumes tokens[pos, n) and appends windows to `out` until `out` holds `max_windows` windows or the
  // tokens run out (with edges, the end of a run may add up to w - 1 more). Returns the position of the first token
  // not consumed.
  std::size_t feed(const std::int32_t* tokens, std::size_t n, std::size_t pos, std::vector<std::int32_t>& out,
                   std::size_t max_windows);

  // Windows produced since the last end-of-file marker, and whether one has been seen with none before it.
  std::int64_t windows_this_epoch() const { return epoch_windows_; }
  bool empty_epoch_seen() const { return empty_epoch_; }
  // The windows of each pass that ended (at an end-of-file marker) since the last call.
  std::vector<std::int64_t> take_finished_passes() { return std::exchange(finished_, {}); }

 private:
  // feed() with edges.
  std::size_t feed_edges(const std::int32_t* tokens, std::size_t n, std::size_t pos, std::vector<std::int32_t>& out,
                         std::size_t max_windows);
  // True if marker t (< 0) ends the current run.
  bool breaks(std::int32_t t) const {
    return t == kEof || (t == kBreak && !cross_lines_) || (t == kOov && !cross_oov_) || (t != kBreak && t != kOov);
  }
  // Edges: writes at `next` the window of the word at run_[c], with `left` and `right` context words (the rest
  // kNoWord); returns the end of what it wrote.
  std::int32_t* edge_window(std::int32_t* next, std::size_t c, std::size_t left, std::size_t right);
  // Edges: the windows of the run's last words, whose right side the run's end cut short; the run is over.
  std::int32_t* end_run(std::int32_t* next, std::size_t& have);

  int window_;
  bool cross_lines_;
  bool cross_oov_;
  bool edges_;
  bool reduced_;
  pcg32 rng_;
  std::int64_t run_words_ = 0;  // edges: the words of the current run so far (run_ holds its last run_len_)
  // The current unbroken run's ids, run_len_ of them at the front; its last 2w+1 are the next window. When the
  // buffer fills, its last 2w ids move to its front: a window costs a copy of its own ids, no shift.
  std::vector<std::int32_t> run_;
  std::size_t run_len_ = 0;
  std::int64_t epoch_windows_ = 0;
  bool empty_epoch_ = false;
  std::vector<std::int64_t> finished_;
};

}  // namespace fedavg::data
