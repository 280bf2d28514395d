// The text python/prepare.py held out of the corpora for test.txt (heldout.json in the config folder), per corpus
// file: the lines, by where each starts, and the byte ranges cut from within long lines (a corpus of one line,
// such as text8). The Tokenizers skip them, so the test windows are never trained on.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace fedavg::core {

// What is held out of one corpus file.
struct HeldOut {
  HeldOut(std::vector<std::int64_t> line_starts = {}, std::vector<std::pair<std::int64_t, std::int64_t>> ranges = {})
      : lines(std::move(line_starts)), spans(std::move(ranges)) {}
  std::vector<std::int64_t> lines;                           // sorted start offsets of whole lines
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;  // sorted [begin, end) within lines, at word boundaries
  bool empty() const { return lines.empty() && spans.empty(); }
};

// What is held out of corpus `index` of `corpora`; nothing when there is no heldout.json at `path`. Throws
// InputError naming the file if it was written for other corpus files (their number or sizes differ).
HeldOut held_out_lines(const std::filesystem::path& path, const std::vector<std::string>& corpora, std::size_t index);

}  // namespace fedavg::core
