// The lines python/prepare.py held out of the corpora for test.txt (heldout.json in the config folder): where
// each starts, in bytes, per corpus file. The Tokenizers skip them, so the test windows are never trained on.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace fedavg::core {

// The sorted start offsets of the held-out lines of corpus `index` of `corpora`; empty when there is no
// heldout.json at `path`. Throws InputError naming the file if it was written for other corpus files (their
// number or sizes differ).
std::vector<std::int64_t> held_out_lines(const std::filesystem::path& path, const std::vector<std::string>& corpora,
                                         std::size_t index);

}  // namespace fedavg::core
