#include "data/windower.hpp"

#include <algorithm>
#include <sstream>

namespace fedavg::data {

std::string window_conditions(const core::Settings& s) {
  std::string what = (s.windows_cut_short() ? std::string("2") : std::to_string(s.window_width())) +
                     " consecutive vocabulary words";
  if (!s.cross_lines) what += " within one line";
  if (!s.cross_oov) what += " without unknown words";
  std::string see = s.windows_cut_short() ? "cross_lines / cross_oov" : "edge_windows / cross_lines / cross_oov";
  if (s.sample > 0) {
    std::ostringstream sample;
    sample << s.sample;
    what += ", after subsampling (sample " + sample.str() + " drops most of the frequent words of a small corpus)";
    see += " / sample";
  }
  return what + " (see " + see + " in cfg.json)";
}

Windower::Windower(int window, bool cross_lines, bool cross_oov, bool edges, bool reduced, std::uint64_t seed)
    : window_(window),
      cross_lines_(cross_lines),
      cross_oov_(cross_oov),
      edges_(edges || reduced),
      reduced_(reduced),
      rng_(seed),
      run_(static_cast<std::size_t>(8 * width() + 64)) {}

std::size_t Windower::feed(const std::int32_t* tokens, std::size_t n, std::size_t pos, std::vector<std::int32_t>& out,
                           std::size_t max_windows) {
  if (edges_) return feed_edges(tokens, n, pos, out, max_windows);
  const auto w = static_cast<std::size_t>(width());
  std::size_t have = out.size() / w;
  if (have >= max_windows) return pos;
  out.resize(max_windows * w);  // written in place, then cut to the windows made
  std::int32_t* next = out.data() + have * w;
  std::int32_t* run = run_.data();
  while (pos < n && have < max_windows) {
    const std::int32_t t = tokens[pos++];
    if (t >= 0) {
      if (run_len_ == run_.size()) {
        std::copy(run + run_len_ - (w - 1), run + run_len_, run);
        run_len_ = w - 1;
      }
      run[run_len_++] = t;
      if (run_len_ >= w) {
        const std::int32_t* window = run + run_len_ - w;
        for (std::size_t c = 0; c < w; ++c) next[c] = window[c];
        next += w;
        ++have;
        ++epoch_windows_;
      }
    } else if (t == kEof) {
      run_len_ = 0;
      if (epoch_windows_ == 0) empty_epoch_ = true;
      finished_.push_back(epoch_windows_);
      epoch_windows_ = 0;
    } else if (t == kDropped) {
      // A subsampled word: removed from the text, so the window closes over it.
    } else if (breaks(t)) {
      run_len_ = 0;
    }
  }
  out.resize(have * w);
  return pos;
}

std::int32_t* Windower::edge_window(std::int32_t* next, std::size_t c, std::size_t left, std::size_t right) {
  const auto half = static_cast<std::size_t>(window_);
  if (reduced_) {
    // 1 + a draw in [0, half): the high 32 bits of the 32-bit draw times half (Lemire's multiply-shift), with no
    // division; its bias, at most half / 2^32, is far below anything a run could see.
    const std::size_t reach = 1 + static_cast<std::size_t>((std::uint64_t{rng_()} * half) >> 32);
    left = std::min(left, reach);
    right = std::min(right, reach);
  }
  std::size_t k = 0;
  for (; k < half - left; ++k) next[k] = kNoWord;
  for (std::size_t j = c - left; j <= c + right; ++j) next[k++] = run_[j];
  for (; k < 2 * half + 1; ++k) next[k] = kNoWord;
  return next + k;
}

std::int32_t* Windower::end_run(std::int32_t* next, std::size_t& have) {
  const auto half = static_cast<std::int64_t>(window_);
  // The last min(w, run) words: each has right context up to the run's end, left context up to w words.
  for (std::int64_t i = std::max<std::int64_t>(0, run_words_ - half); i < run_words_; ++i) {
    const auto right = static_cast<std::size_t>(run_words_ - 1 - i);
    const auto left = static_cast<std::size_t>(std::min(half, i));
    if (left + right == 0) continue;  // a run of one word: no context
    const std::size_t c = run_len_ - 1 - right;
    next = edge_window(next, c, left, right);
    ++have;
    ++epoch_windows_;
  }
  run_len_ = 0;
  run_words_ = 0;
  return next;
}

std::size_t Windower::feed_edges(const std::int32_t* tokens, std::size_t n, std::size_t pos,
                                 std::vector<std::int32_t>& out, std::size_t max_windows) {
  const auto w = static_cast<std::size_t>(width());
  const auto half = static_cast<std::size_t>(window_);
  std::size_t have = out.size() / w;
  if (have >= max_windows) return pos;
  out.resize((max_windows + half) * w);  // a run's end adds up to w windows
  std::int32_t* next = out.data() + have * w;
  while (pos < n && have < max_windows) {
    const std::int32_t t = tokens[pos++];
    if (t >= 0) {
      if (run_len_ == run_.size()) {  // keep the last 2w words: the pending targets and their left context
        std::copy(run_.end() - static_cast<std::ptrdiff_t>(2 * half), run_.end(), run_.begin());
        run_len_ = 2 * half;
      }
      run_[run_len_++] = t;
      ++run_words_;
      // The word w back now has its whole right context.
      if (run_words_ > static_cast<std::int64_t>(half)) {
        const auto target = static_cast<std::size_t>(run_words_ - 1) - half;  // its place in the run
        next = edge_window(next, run_len_ - 1 - half, std::min(half, target), half);
        ++have;
        ++epoch_windows_;
      }
    } else if (t == kDropped) {
      // A subsampled word: removed from the text, so the window closes over it.
    } else if (breaks(t)) {
      next = end_run(next, have);
      if (t == kEof) {
        if (epoch_windows_ == 0) empty_epoch_ = true;
        finished_.push_back(epoch_windows_);
        epoch_windows_ = 0;
      }
    }
  }
  out.resize(have * w);
  return pos;
}

}  // namespace fedavg::data
