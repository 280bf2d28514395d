// A corpus file as a run found it: its size and a hash of its size and first and last MiB
// (data::corpus_summary). A checkpoint keeps one per corpus file, so that --resume can tell whether the corpora
// are the ones the run read.
#pragma once

#include <cstdint>

namespace fedavg::core {

struct CorpusSummary {
  std::int64_t bytes = -1;  // < 0: the file could not be read where the summary was made
  std::int64_t hash = 0;
};

}  // namespace fedavg::core
