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
    : window_(window), cross_lines_(cross_lines), cross_oov_(cross_oov) {
  run_.reserve(static_cast<std::size_t>(2 * width()));
}

std::size_t Windower::feed(const std::int32_t* tokens, std::size_t n, std::size_t pos, std::vector<std::int32_t>& out,
                           std::size_t max_windows) {
  const auto w = static_cast<std::size_t>(width());
  std::size_t have = out.size() / w;
  while (pos < n && have < max_windows) {
    const std::int32_t t = tokens[pos++];
    if (t >= 0) {
      run_.push_back(t);
      if (run_.size() == w) {
        out.insert(out.end(), run_.begin(), run_.end());
        ++have;
        ++epoch_windows_;
        run_.erase(run_.begin());
      }
    } else if (t == kEof) {
      run_.clear();
      if (epoch_windows_ == 0) empty_epoch_ = true;
      finished_.push_back(epoch_windows_);
      epoch_windows_ = 0;
    } else if (t == kDropped) {
      // A subsampled word: removed from the text, so the window closes over it.
    } else if ((t == kBreak && !cross_lines_) || (t == kOov && !cross_oov_) || (t != kBreak && t != kOov)) {
      run_.clear();
    }
  }
  return pos;
}

}  // namespace fedavg::data
