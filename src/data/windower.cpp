#include "data/windower.hpp"

#include <algorithm>
#include <sstream>

namespace fedavg::data {

std::string window_conditions(const core::Settings& s) {
  std::string what = std::to_string(s.window_width()) + " consecutive vocabulary words";
  if (!s.cross_lines) what += " within one line";
  if (!s.cross_oov) what += " without unknown words";
  std::string see = "cross_lines / cross_oov";
  if (s.sample > 0) {
    std::ostringstream sample;
    sample << s.sample;
    what += ", after subsampling (sample " + sample.str() + " drops most of the frequent words of a small corpus)";
    see += " / sample";
  }
  return what + " (see " + see + " in cfg.json)";
}

Windower::Windower(int window, bool cross_lines, bool cross_oov)
    : window_(window),
      cross_lines_(cross_lines),
      cross_oov_(cross_oov),
      run_(static_cast<std::size_t>(8 * width() + 64)) {}

std::size_t Windower::feed(const std::int32_t* tokens, std::size_t n, std::size_t pos, std::vector<std::int32_t>& out,
                           std::size_t max_windows) {
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
    } else if ((t == kBreak && !cross_lines_) || (t == kOov && !cross_oov_) || (t != kBreak && t != kOov)) {
      run_len_ = 0;
    }
  }
  out.resize(have * w);
  return pos;
}

}  // namespace fedavg::data
