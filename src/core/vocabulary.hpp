// The vocabulary: words in index order, with corpus counts when vocab.txt has them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fedavg::core {

struct Vocabulary {
  std::vector<std::string> words;
  std::vector<std::int64_t> counts;  // empty when vocab.txt has no counts

  std::int32_t size() const { return static_cast<std::int32_t>(words.size()); }
};

}  // namespace fedavg::core
