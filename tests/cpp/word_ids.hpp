// A stand-in for Python's tokenizer in the data tests: word i of the vocabulary is "wI", so "w3 w7\n" becomes
// 3, 7, kBreak.
#pragma once

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "data/markers.hpp"

inline void tokenize_word_ids(const char* text, std::size_t size, std::vector<std::int32_t>& out) {
  std::istringstream lines(std::string(text, size));
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string w;
    while (words >> w) out.push_back(std::stoi(w.substr(1)));
    out.push_back(fedavg::data::kBreak);
  }
}
