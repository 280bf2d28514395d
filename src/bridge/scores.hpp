// Typed calls into python/evaluate.py for the Dispatcher's in-run evaluation (eval_every): word similarity
// (Spearman rho) and analogies (3CosAdd accuracy) of the current embeddings. Imports NumPy only.
#pragma once

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/matrix.hpp"

namespace fedavg::bridge {

class Interpreter;

class Scores {
 public:
  // Spearman's rho on the similarity pairs and the analogy accuracy; NaN where not scored.
  struct Result {
    double similarity = std::nan("");
    double analogy = std::nan("");
  };

  // Either path may be empty (not scored). Both files are parsed now: a bad line throws core::InputError
  // naming the file and the line.
  Scores(Interpreter& py, const std::vector<std::string>& words, const std::filesystem::path& similarity,
         const std::filesystem::path& analogies);
  ~Scores();
  Scores(const Scores&) = delete;
  Scores& operator=(const Scores&) = delete;

  // The scores of `embeddings` (one row per vocabulary word); NaN where there is no file or none of its words
  // are in the vocabulary.
  Result score(const core::Matrix& embeddings);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fedavg::bridge
